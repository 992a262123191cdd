"""scripts/pack_carry.sh refuses binaries built from another commit or a dirty tree (their results
files would name that build, not the commit packed)."""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "pack_carry.sh", repo / "scripts" / "pack_carry.sh")
    (repo / ".gitignore").write_text("build/\n.carry/\n")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(cmd, cwd=repo, check=True)
    return repo


def _build_info(repo: Path, commit: str, dirty: str) -> None:
    gen = repo / "build" / "cuda" / "generated"
    gen.mkdir(parents=True, exist_ok=True)
    (gen / "provenance_build.cpp").write_text(
        f'  static const BuildInfo info{{"{commit}", "{dirty}", "cuda", "90a", "", "", "Release"}};\n')


@pytest.mark.parametrize("which", ["other commit", "dirty"])
def test_refuses_a_build_of_another_commit_or_a_dirty_tree(tmp_path, which):
    repo = _repo(tmp_path)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    _build_info(repo, "0" * 40 if which == "other commit" else head, "true" if which == "dirty" else "false")
    proc = subprocess.run(["bash", "scripts/pack_carry.sh"], cwd=repo, capture_output=True, text=True)
    assert proc.returncode == 1 and "build again from this commit" in proc.stderr, proc.stderr
    assert not (repo / ".carry" / "bin.tar.xz").exists()


def test_accepts_a_clean_build_of_head(tmp_path):
    repo = _repo(tmp_path)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    _build_info(repo, head, "false")
    proc = subprocess.run(["bash", "scripts/pack_carry.sh"], cwd=repo, capture_output=True, text=True)
    # Past the check it packs what it finds (here no binaries; Google Benchmark's library may be absent).
    assert "build again" not in proc.stderr
