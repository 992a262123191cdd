"""scripts/device_stage_peers.sh without a device: FlashInfer's package is unpacked once, a broken
one leaves no marker, and FlashAttention-4 parts are handed to device_fa4_stage.sh."""
from __future__ import annotations

import io
import lzma
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _repo_copy(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    for name in ("device_stage_peers.sh", "device_fa4_stage.sh"):
        shutil.copy(REPO / "scripts" / name, root / "scripts" / name)
    (root / ".peers").mkdir()
    return root


def _xz_tar(path: Path, files: dict[str, bytes]) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    path.write_bytes(lzma.compress(raw.getvalue()))


def _run(root: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, FI_SITE=str(tmp_path / "fi_site"), FA4_SITE=str(tmp_path / "fa4_site"),
               FA4_PARTS=str(tmp_path / "fa4_parts"))
    return subprocess.run(["bash", str(root / "scripts" / "device_stage_peers.sh")], env=env,
                          capture_output=True, text=True, timeout=60)


def test_flashinfer_is_unpacked_once(tmp_path):
    root = _repo_copy(tmp_path)
    _xz_tar(root / ".peers" / "flashinfer.tar.xz", {"flashinfer/__init__.py": b"x = 1\n"})
    r = _run(root, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    site = tmp_path / "fi_site"
    assert (site / "flashinfer" / "__init__.py").read_text() == "x = 1\n"
    assert (site / ".fi_complete").exists()
    (site / "flashinfer" / "__init__.py").write_text("kept\n")
    assert _run(root, tmp_path).returncode == 0  # complete already: not unpacked again
    assert (site / "flashinfer" / "__init__.py").read_text() == "kept\n"


def test_a_broken_flashinfer_package_leaves_no_marker(tmp_path):
    root = _repo_copy(tmp_path)
    (root / ".peers" / "flashinfer.tar.xz").write_bytes(b"not an archive")
    r = _run(root, tmp_path)
    assert r.returncode == 1
    assert "did not unpack" in r.stdout
    assert not (tmp_path / "fi_site").exists()


def test_nothing_carried_is_nothing_staged(tmp_path):
    root = _repo_copy(tmp_path)
    r = _run(root, tmp_path)
    assert r.returncode == 0
    assert not (tmp_path / "fi_site").exists() and not (tmp_path / "fa4_parts").exists()


def test_fa4_parts_go_to_the_fa4_stage(tmp_path):
    root = _repo_copy(tmp_path)
    (root / ".peers" / "fa4.tar.xz.part-1of2").write_bytes(b"first half")
    r = _run(root, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "fa4_parts" / "fa4.tar.xz.part-1of2").read_bytes() == b"first half"
    assert not (tmp_path / "fa4_site" / ".fa4_complete").exists()
