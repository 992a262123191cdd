"""The CUDA build's kernel objects, read by the static report in place of a second sm_90a compile.

The build compiles each registered kernel source once for sm_90a through
scripts/nvcc_resource_log.py, which keeps ptxas's resource lines (<object>.ptxas.log) and the
files the compile read (<object>.deps) beside the object; cmake/SchedlabStaticReport.cmake
writes <build>/static_report_objects.txt, one line per source:

    <absolute source path>|<object>[;<object>...]

(the objects of the library that holds the source; the source's own is <name>.o). An object is
used only while it is fresh: its log and dependency copy are at least as new as it, and no file
the compile read is newer. Otherwise the report compiles the source as before. The PTX, the
cubin and the SASS come out of the object with cuobjdump. Standard library only.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import compile_cache

MAPPING_NAME = "static_report_objects.txt"


def default_mapping(root: Path) -> Path | None:
    """<root>/build/cuda/static_report_objects.txt (the `cuda` preset's build) when it exists."""
    path = Path(root) / "build" / "cuda" / MAPPING_NAME
    return path if path.is_file() else None


def read_mapping(path: Path) -> dict[Path, Path]:
    """{resolved source: its object} from a mapping file; a line whose source has no object of its
    own name among the listed ones is left out."""
    mapping: dict[Path, Path] = {}
    for line in Path(path).read_text().splitlines():
        source, sep, objects = line.strip().partition("|")
        if not sep:
            continue
        name = Path(source).name + ".o"
        own = [Path(o) for o in objects.split(";") if Path(o).name == name]
        if len(own) == 1:
            mapping[Path(source).resolve()] = own[0]
    return mapping


def _mtime(path: Path) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def read_dependency_inputs(obj: Path) -> list[Path]:
    """The files the object's compile read (its <object>.deps)."""
    return compile_cache.read_dependency_file(Path(f"{obj}.deps"))


def staleness(obj: Path) -> str | None:
    """Why the object cannot stand for a compile of its source now, or None when it can."""
    log, deps = Path(f"{obj}.ptxas.log"), Path(f"{obj}.deps")
    built = _mtime(obj)
    if built is None:
        return f"{obj} is not built"
    for kept in (log, deps):
        kept_at = _mtime(kept)
        if kept_at is None or kept_at < built:
            return f"{kept.name} was not written by the object's compile (scripts/nvcc_resource_log.py)"
    try:
        inputs = read_dependency_inputs(obj)
    except OSError as err:
        return f"{deps.name} cannot be read: {err}"
    if not inputs:
        return f"{deps.name} names no input"
    for path in inputs:
        changed = _mtime(path)
        if changed is None or changed > built:
            return f"{path} changed after {obj.name} was built"
    return None


def sass_description(cuobjdump: str, nvdisasm: str | None, cubin: Path) -> list[str] | None:
    """The compile-cache key of a cubin's SASS listing: the two tools and the cubin's bytes.
    None when the cubin cannot be read."""
    digest = compile_cache.file_digest(cubin)
    if digest is None:
        return None
    return ["sass", compile_cache.binary_identity(cuobjdump), compile_cache.binary_identity(nvdisasm),
            f"cubin sha256 {digest}"]


def extract(obj: Path, cuobjdump: str, ptx: Path, cubin: Path, sass: Path | None,
            env: dict | None = None, cache: compile_cache.CompileCache | None = None,
            nvdisasm: str | None = None) -> list[tuple[list[str], subprocess.CompletedProcess]]:
    """Writes the object's PTX, its sm_* cubin and (when `sass` is given) its SASS listing;
    returns each command with its result (the first failure ends it). With a cache the listing
    is kept under the cubin's bytes (sass_description): the Hopper experiments' listings are
    about 100 MB each, a CPU-minute of cuobjdump per source, and the static report and the ISA
    tests both ask for them from the same objects."""
    runs = []

    def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, **kw)
        runs.append((cmd, proc))
        return proc

    proc = run([cuobjdump, "-ptx", str(obj)])
    if proc.returncode != 0:
        return runs
    ptx.write_text(proc.stdout)
    with tempfile.TemporaryDirectory() as scratch:
        proc = run([cuobjdump, "-xelf", "all", str(Path(obj).resolve())], cwd=scratch)
        if proc.returncode != 0:
            return runs
        cubins = sorted(Path(scratch).glob("*.cubin"))
        if len(cubins) != 1:
            runs.append((["(cubins in the object)"], subprocess.CompletedProcess(
                [], 1, "", f"{obj} holds {len(cubins)} cubins, not one\n")))
            return runs
        shutil.move(str(cubins[0]), cubin)
    if sass is None:
        return runs
    description = sass_description(cuobjdump, nvdisasm, cubin) if cache is not None else None
    if description is not None and cache.restore(description, {"sass": sass}) is not None:
        runs.append((["(SASS listing reused from", str(cache.entry(description)) + ")"],
                     subprocess.CompletedProcess([], 0, "", "")))
        return runs
    proc = run([cuobjdump, "-sass", str(cubin)])
    if proc.returncode == 0:
        sass.write_text(proc.stdout)
        if description is not None:
            cache.store(description, {"sass": sass}, [], "")
    return runs
