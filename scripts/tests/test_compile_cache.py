"""scripts/compile_cache.py, and the report's use of it: a compile is reused only with the same
commands and every file it read unchanged (an edited header compiles again)."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import compile_cache
import resource_report as rr

SCRIPTS = Path(__file__).resolve().parent.parent


def test_dependency_files_of_clang_and_nvcc(tmp_path):
    clang = tmp_path / "clang.d"
    clang.write_text("out/k.gfx942.s: out/k.tu.hip /src/k.cu \\\n  /src/a\\ b.hpp /usr/include/hip/x.h\n"
                     "/src/k.cu:\n")
    assert compile_cache.read_dependency_file(clang) == [
        Path("out/k.tu.hip"), Path("/src/k.cu"), Path("/src/a b.hpp"), Path("/usr/include/hip/x.h")]
    nvcc = tmp_path / "nvcc.d"
    nvcc.write_text("k.ptx : /src/k.cu \\\n    /usr/include/stdc-predef.h \\\n    /src/k.cu\n")
    assert compile_cache.read_dependency_file(nvcc) == [Path("/src/k.cu"), Path("/usr/include/stdc-predef.h")]


@pytest.fixture
def stored(tmp_path):
    """A cache with one entry: output `s` of a compile that read header.hpp."""
    header, out = tmp_path / "header.hpp", tmp_path / "k.s"
    header.write_text("int x;\n")
    out.write_text("v_mfma\n")
    cache = compile_cache.CompileCache(tmp_path / "cache")
    assert cache.store(["amdgpu", "-O3"], {"s": out}, [header], "compiled\n")
    return cache, header, tmp_path


def test_restore_copies_the_outputs_and_the_log(stored):
    cache, _, tmp_path = stored
    again = tmp_path / "again.s"
    assert cache.restore(["amdgpu", "-O3"], {"s": again}) == "compiled\n"
    assert again.read_text() == "v_mfma\n"


def test_other_commands_or_outputs_miss(stored):
    cache, _, tmp_path = stored
    assert cache.restore(["amdgpu", "-O2"], {"s": tmp_path / "x.s"}) is None
    assert cache.restore(["amdgpu", "-O3"], {"s": tmp_path / "x.s", "sass": tmp_path / "x.sass"}) is None


def test_a_changed_or_removed_input_misses(stored):
    cache, header, tmp_path = stored
    header.write_text("int x, y;\n")
    assert cache.restore(["amdgpu", "-O3"], {"s": tmp_path / "x.s"}) is None
    header.unlink()
    assert cache.restore(["amdgpu", "-O3"], {"s": tmp_path / "x.s"}) is None


def test_a_new_compile_replaces_the_entry(stored):
    cache, header, tmp_path = stored
    header.write_text("int x, y;\n")
    newer = tmp_path / "newer.s"
    newer.write_text("v_mfma v_mfma\n")
    assert cache.store(["amdgpu", "-O3"], {"s": newer}, [header], "again\n")
    assert cache.restore(["amdgpu", "-O3"], {"s": tmp_path / "x.s"}) == "again\n"
    assert (tmp_path / "x.s").read_text() == "v_mfma v_mfma\n"
    assert [p.name for p in cache.folder.iterdir()] == [cache.entry(["amdgpu", "-O3"]).name], "no leftovers"


def test_an_unreadable_input_is_not_stored(tmp_path):
    out = tmp_path / "k.s"
    out.write_text("x\n")
    cache = compile_cache.CompileCache(tmp_path / "cache")
    assert not cache.store(["d"], {"s": out}, [tmp_path / "missing.hpp"], "")
    assert cache.restore(["d"], {"s": tmp_path / "y.s"}) is None


def _compiler_target() -> str | None:
    if shutil.which("clang-22"):
        return "gfx942"
    return "sm_90a" if rr.find_cuda_tool("nvcc") else None


def _report(root: Path, out: Path, cache: Path, target: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPTS / "resource_report.py"), "--out", str(out), "--root", str(root),
                           "--targets", target, "--compile-cache", str(cache), "--no-sass",
                           f"tiny|{root / 'tiny.cu'}"], capture_output=True, text=True, timeout=600)


# A kernel whose value comes from a header, for nvcc and for clang's HIP without the HIP
# runtime header (which alone takes seconds to compile).
TINY = """#include "tiny_value.hpp"
#if defined(__HIP_PLATFORM_AMD__) && !defined(__global__)
#define __global__ __attribute__((global))
#endif
__global__ void tiny(float* x) { x[0] = kTinyValue; }
"""


@pytest.mark.skipif(_compiler_target() is None, reason="neither clang-22 nor nvcc is installed")
def test_report_reuses_a_compile_until_a_header_changes(tmp_path):
    target = _compiler_target()
    root = tmp_path / "root"
    root.mkdir()
    (root / "tiny.cu").write_text(TINY)
    header = root / "tiny_value.hpp"
    header.write_text("constexpr float kTinyValue = 1.0f;\n")
    cache = tmp_path / "cache"
    runs = []
    for step in ("first", "same", "header_edited"):
        if step == "header_edited":
            header.write_text("constexpr float kTinyValue = 2.0f;  // edited\n")
        proc = _report(root, tmp_path / step, cache, target)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        provenance = json.loads((tmp_path / step / "provenance.json").read_text())
        records = json.loads((tmp_path / step / "resources.json").read_text())
        runs.append((proc.stdout, provenance["reused_from_compile_cache"], records))
    (first, first_reused, first_records), (same, same_reused, same_records), (edited, edited_reused, _) = runs
    assert "compiled before: reused" not in first and first_reused == []
    assert "compiled before: reused" in same and same_reused == [f"tiny.cu {target}"]
    assert same_records == first_records
    assert "compiled before: reused" not in edited and edited_reused == []
