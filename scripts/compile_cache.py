"""Compiler output kept by everything that produced it, so that a kernel source compiled once
for a target is not compiled again with the same commands: the build's static-report test
compiles every registered source for gfx942 and gfx950 (sm_90a it reads from the build's
objects, scripts/build_objects.py), and the ISA tests' fixtures then run
scripts/resource_report.py on the same sources (minutes each on a small machine).

An entry is a folder named by the hash of a description of the compile: the compiler binary
(path, size, modification time), its version, every argument, and the text of any input the
report generated itself. It holds the output files, the compiler's log and the content hash
of every file the compiler read, from its dependency file (-MD). A lookup uses an entry only
while each of those files still has that hash (ccache's "direct mode" works so); otherwise
it is a miss, the caller compiles, and the new result replaces the entry. Only successful
compiles are stored. Standard library only, like isa.py.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

MANIFEST = "manifest.json"

_digests: dict[tuple, str] = {}
_digests_lock = threading.Lock()


def file_digest(path: Path) -> str | None:
    """sha256 of a file's bytes, or None when it cannot be read. Remembered per (path, size,
    modification time, inode), as many compiles read the same headers."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (str(path), st.st_size, st.st_mtime_ns, st.st_ino)
    with _digests_lock:
        if stamp in _digests:
            return _digests[stamp]
    try:
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None
    with _digests_lock:
        _digests[stamp] = digest
    return digest


def binary_identity(path: str | Path | None) -> str:
    """A tool as the key sees it: its resolved path, size and modification time (a version
    string alone misses a rebuilt compiler of the same version)."""
    if not path:
        return "none"
    resolved = Path(path).resolve()
    try:
        st = resolved.stat()
    except OSError:
        return f"{resolved}:missing"
    return f"{resolved}:{st.st_size}:{st.st_mtime_ns}"


_MAKE_WORD = re.compile(r"(?:\\.|[^\s\\])+")


def read_dependency_file(path: Path) -> list[Path]:
    """The prerequisites of a Makefile-syntax dependency file (clang -MD / -dependency-file,
    nvcc -MD): every rule's words after its 'target:' (or 'target :'), continuation lines
    joined, backslash-escaped spaces kept."""
    text = Path(path).read_text().replace("\\\n", " ")
    deps: list[Path] = []
    for line in text.splitlines():
        _, sep, rest = line.partition(": ")
        if not sep:
            if not line.rstrip().endswith(":"):
                continue
            rest = ""
        for word in _MAKE_WORD.findall(rest):
            deps.append(Path(re.sub(r"\\(.)", r"\1", word)))
    return list(dict.fromkeys(deps))


class CompileCache:
    """Entries under `folder` (created when first stored into)."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)

    def entry(self, description: Sequence[str]) -> Path:
        key = hashlib.sha256(json.dumps(list(description)).encode()).hexdigest()[:40]
        return self.folder / key

    def restore(self, description: Sequence[str], outputs: Mapping[str, Path]) -> str | None:
        """Copies a valid entry's files to `outputs` ({name: path}) and returns its log; None
        on a miss (no entry, another description, a changed or missing input, a missing file)."""
        entry = self.entry(description)
        try:
            manifest = json.loads((entry / MANIFEST).read_text())
        except (OSError, ValueError):
            return None
        if manifest.get("description") != list(description) or set(manifest.get("outputs", [])) != set(outputs):
            return None
        for dep, digest in manifest.get("dependencies", {}).items():
            if file_digest(Path(dep)) != digest:
                return None
        try:
            for name, path in outputs.items():
                shutil.copyfile(entry / name, path)
        except OSError:
            return None
        return manifest.get("log", "")

    def store(self, description: Sequence[str], outputs: Mapping[str, Path], dependencies: Iterable[Path],
              log: str) -> bool:
        """Keeps `outputs` under the description, with the hash of each dependency; replaces an
        older entry. False (and nothing kept) when a dependency cannot be read or the folder
        cannot be written: the cache only ever saves time."""
        digests = {}
        for dep in dependencies:
            digest = file_digest(dep)
            if digest is None:
                return False
            digests[str(Path(dep).resolve())] = digest
        entry = self.entry(description)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.folder))
        except OSError:
            return False
        try:
            for name, path in outputs.items():
                shutil.copyfile(path, staging / name)
            manifest = {"description": list(description), "outputs": sorted(outputs), "dependencies": digests,
                        "log": log}
            (staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
            if entry.exists():  # an older compile of the same commands: its inputs changed
                old = Path(tempfile.mkdtemp(prefix=".old-", dir=self.folder))
                os.replace(entry, old / "entry")
                shutil.rmtree(old, ignore_errors=True)
            os.replace(staging, entry)
            return True
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            return False
