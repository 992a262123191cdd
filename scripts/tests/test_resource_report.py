"""scripts/resource_report.py: occupancy math, naming conventions, tool discovery and an
end-to-end run on the fixture kernel (skipped where its compiler is missing)."""
import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import isa
import resource_report as rr

# Not imported from conftest: analysis/tests has a conftest module of the same name.
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SCRIPTS = FIXTURES.parent.parent

# ---------------------------------------------------------------------------------------
# sm_90 occupancy (cuda_occupancy.h rules)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("regs, threads, static_smem, dynamic_smem, blocks, warps, limiter", [
    (128, 256, 0, 0, 2, 16, "registers"),         # 4096 regs/warp -> 4 warps per sub-partition
    (32, 256, 4096, 0, 8, 64, "warps"),           # full occupancy: the warp slots limit
    (64, 128, 0, 0, 8, 32, "registers"),          # 2048 regs/warp -> 8 warps per sub-partition
    (168, 384, 0, 0, 1, 12, "registers"),         # 5376 -> 3 warps/sub-partition -> 12 warps
    (255, 1024, 0, 0, 0, 0, "registers"),         # 8192 regs/warp x 32 warps > 64 Ki registers
    (32, 256, 0, 100 * 1024, 2, 16, "shared memory"),   # (100 KiB + 1 KiB) fits twice in 228 KiB
    (32, 256, 0, 227 * 1024, 1, 8, "shared memory"),    # the opt-in maximum per block
    (32, 256, 1024, 227 * 1024, 0, 0, "shared memory"), # one KiB too many
    (16, 32, 0, 0, 32, 32, "blocks"),             # 32 blocks/SM cap
])
def test_sm90_occupancy(regs, threads, static_smem, dynamic_smem, blocks, warps, limiter):
    occ = rr.sm90_occupancy(regs, threads, static_smem, dynamic_smem)
    assert (occ["blocks_per_sm"], occ["warps_per_sm"], occ["occupancy_limiter"]) == (blocks, warps, limiter)
    assert occ["occupancy"] == warps / 64


def test_sm90_shared_memory_granule():
    # 1 KiB reserved + 1 byte -> rounded up to 1152 B per block; 233472 // 1152 = 202 -> 32 cap
    assert rr.sm90_occupancy(16, 32, 1, 0)["blocks_per_sm"] == 32
    # 75 KiB + 1 KiB reserved = 76 KiB -> 3 blocks; +1 byte rounds to 76 KiB + 128 -> 2 blocks
    assert rr.sm90_occupancy(32, 128, 75 * 1024, 0)["blocks_per_sm"] == 3
    assert rr.sm90_occupancy(32, 128, 75 * 1024 + 1, 0)["blocks_per_sm"] == 2


# ---------------------------------------------------------------------------------------
# gfx942 / gfx950 occupancy
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("vgprs, waves", [
    (172, 2),   # rounded to 176: 512 // 176 = 2
    (128, 4), (129, 3), (64, 8), (65, 7), (256, 2), (257, 1), (512, 1), (1, 8),
])
def test_amd_vgpr_waves(vgprs, waves):
    occ = rr.amd_occupancy("gfx950", vgprs, 32, 0, 256)
    assert occ["waves_per_simd"] == waves
    if waves < 8:
        assert occ["occupancy_limiter"] == "VGPRs"


def test_amd_172_vgprs_on_gfx950():
    occ = rr.amd_occupancy("gfx950", 172, 40, 16 * 1024, 256)
    assert (occ["waves_per_simd"], occ["workgroups_per_cu"], occ["occupancy_limiter"]) == (2, 2, "VGPRs")
    assert occ["occupancy"] == 2 / 8


def test_amd_lds_limits_differ_between_gfx942_and_gfx950():
    # 32 KiB per workgroup: 2 fit in gfx942's 64 KiB, 5 in gfx950's 160 KiB
    gfx942 = rr.amd_occupancy("gfx942", 32, 32, 32 * 1024, 256)
    gfx950 = rr.amd_occupancy("gfx950", 32, 32, 32 * 1024, 256)
    assert (gfx942["workgroups_per_cu"], gfx942["waves_per_simd"], gfx942["occupancy_limiter"]) == (2, 2, "LDS")
    assert (gfx950["workgroups_per_cu"], gfx950["waves_per_simd"], gfx950["occupancy_limiter"]) == (5, 5, "LDS")
    # LDS is allocated in 512-byte blocks: 12 KiB + 1 byte takes 12.5 KiB
    assert rr.amd_occupancy("gfx942", 32, 32, 12 * 1024 + 1, 256)["workgroups_per_cu"] == 5
    # more than a workgroup may have
    assert rr.amd_occupancy("gfx942", 32, 32, 64 * 1024 + 512, 256)["workgroups_per_cu"] == 0
    assert rr.amd_occupancy("gfx950", 32, 32, 160 * 1024, 256)["workgroups_per_cu"] == 1


def test_amd_sgprs_and_workgroup_shapes():
    assert rr.amd_occupancy("gfx942", 32, 102, 0, 256)["waves_per_simd"] == 7
    assert rr.amd_occupancy("gfx942", 32, 100, 0, 256)["waves_per_simd"] == 8
    # one-wave workgroups need no barrier: 32 of them fill a CU
    single = rr.amd_occupancy("gfx942", 32, 32, 0, 64)
    assert (single["workgroups_per_cu"], single["waves_per_simd"]) == (32, 8)
    # a 1024-thread workgroup is 16 waves, 4 per SIMD: 128 VGPRs fit one, 136 none
    assert rr.amd_occupancy("gfx942", 128, 32, 0, 1024)["workgroups_per_cu"] == 1
    assert rr.amd_occupancy("gfx942", 136, 32, 0, 1024)["workgroups_per_cu"] == 0
    # multi-wave workgroups take a barrier slot each: at most 16 per CU
    two_waves = rr.amd_occupancy("gfx942", 16, 16, 0, 128)
    assert (two_waves["workgroups_per_cu"], two_waves["waves_per_simd"]) == (16, 8)


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_amd_occupancy_matches_llvm_on_fixture(compiler_output, arch):
    """Without dynamic LDS our formula must agree with LLVM's own "; Occupancy" comment."""
    for k in isa.parse_amdgpu_metadata(compiler_output(f"toy_two_stage.{arch}.s")).values():
        occ = rr.amd_occupancy(arch, k["vgpr_count"], k["sgpr_count"], k["group_segment_fixed_size"],
                               k["max_flat_workgroup_size"])
        assert occ["waves_per_simd"] == k["compiler_occupancy"]


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_amd_constants_match_llvm(compiler_output, arch):
    """The no-shim .s keeps LLVM's occupancy(MaxWaves, Granule, TotalVGPRs, ...) expression."""
    import re
    text = compiler_output("toy_two_stage.gfx942.no_shim.s")
    max_waves, granule, total = map(int, re.search(r"; Occupancy: occupancy\((\d+), (\d+), (\d+),", text).groups())
    cu = rr.AMD_ARCHS[arch]
    assert (max_waves, granule, total) == (cu.max_waves_per_simd, cu.vgpr_alloc_granule, cu.vgprs_per_simd_lane)


# ---------------------------------------------------------------------------------------
# Naming conventions
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, size", [
    ("void k<schedlab::gpu::DynamicSmem<16384ul>>(float*)", 16384),
    ("void k<p, schedlab::gpu::DynamicSmem<4096>>()", 4096),
    ("void k<schedlab::gpu::DynamicSmem<4096u> >()", 4096),
    ("void k<schedlab::gpu::DynamicSmem<(unsigned long)49152>>()", 49152),
    ("void k<schedlab::gpu::DynamicSmem<0ul>>()", 0),
    ("void k<p>(float*)", 0),
])
def test_dynamic_smem_bytes(name, size):
    assert rr.dynamic_smem_bytes(name) == size


def test_dynamic_smem_errors():
    with pytest.raises(ValueError):
        rr.dynamic_smem_bytes("k<schedlab::gpu::DynamicSmem<1ul>, schedlab::gpu::DynamicSmem<2ul>>()")
    with pytest.raises(ValueError):
        rr.dynamic_smem_bytes("k<schedlab::gpu::DynamicSmem<kBytes>>()")


def test_experiment_variant():
    name = ("void schedlab::kernels::decode<schedlab::exp::decode_kv_streaming::streaming, "
            "schedlab::gpu::DynamicSmem<49152ul>>(schedlab::kernels::DecodeParams)")
    assert rr.experiment_variant(name, "fallback") == ("decode_kv_streaming", "streaming")
    spelled_out = "void k<schedlab::experiments::decode_lds_buffers::double_buffer, (schedlab::DType)1>()"
    assert rr.experiment_variant(spelled_out, "fallback") == ("decode_lds_buffers", "double_buffer")
    assert rr.experiment_variant("void schedlab::kernels::naive<(schedlab::DType)0>()", "naive_attention") == (
        "naive_attention", "-")


_CUT = ("void schedlab::kernels::prefill_detail::flash_prefill_kernel<schedlab::kernels::PrefillPolicyFor<"
        "schedlab::experiments::prefill_kv_tiles::kv_union, (schedlab::gpu::GpuArch)1>, (schedlab::DType)1, 128, "
        "schedlab::gpu::DynamicSmem<65536ul>>(schedlab::kernels::prefill_detail::Params)")
_OWN = ("void schedlab::kernels::prefill_detail::flash_prefill_kernel<schedlab::experiments::prefill_kv_tiles::kv_union, "
        "(schedlab::DType)1, 128, schedlab::gpu::DynamicSmem<81920ul>>(schedlab::kernels::prefill_detail::Params)")


def test_experiment_variant_of_an_architecture_instantiation():
    assert rr.experiment_variant(_CUT, "x") == ("prefill_kv_tiles", "kv_union")


@pytest.mark.parametrize("name, target, smem, launched, says", [
    (_CUT, "gfx942", 65536, True, None),
    (_CUT, "gfx950", 65536, False, "instantiated for gfx942"),
    (_CUT.replace("(schedlab::gpu::GpuArch)1", "schedlab::gpu::GpuArch::gfx942"), "gfx950", 65536, False,
     "instantiated for gfx942"),
    (_OWN, "gfx942", 81920, False, "81920 bytes of shared memory, over its 65536"),
    (_OWN, "gfx950", 81920, True, None),
    (_OWN, "sm_90a", 81920, True, None),
    (_OWN, "gfx950", 160 * 1024 + 1, False, "over its 163840"),
    (_OWN, "sm_90a", 227 * 1024 + 1, False, "over its 232448"),
])
def test_launch_status(name, target, smem, launched, says):
    why = rr.launch_status(name, target, smem)
    assert (why is None) == launched
    if says:
        assert says in why


def test_launch_check_counts_launched_rows_only():
    rows = [
        {"kernel": _OWN, "target": "gfx942", "launched": False, "scratch_bytes_per_lane": 0, "workgroups_per_cu": 0},
        {"kernel": _CUT, "target": "gfx942", "launched": True, "scratch_bytes_per_lane": 0, "workgroups_per_cu": 1},
        {"kernel": _CUT, "target": "gfx950", "launched": False, "scratch_bytes_per_lane": 0, "workgroups_per_cu": 2},
        {"kernel": _OWN, "target": "gfx950", "launched": True, "scratch_bytes_per_lane": 8, "workgroups_per_cu": 1},
        {"kernel": _OWN, "target": "sm_90a", "launched": True, "spill_store_bytes": 0, "stack_frame_bytes": 0,
         "blocks_per_sm": 0},
    ]
    check = rr.launch_check(rows)
    assert check["gfx942"] == {"launched": 1, "not_launched": 1, "scratch": [], "no_block": []}
    assert check["gfx950"]["launched"] == 1 and check["gfx950"]["not_launched"] == 1
    assert len(check["gfx950"]["scratch"]) == 1 and check["gfx950"]["no_block"] == []
    assert len(check["sm_90a"]["no_block"]) == 1


def test_gpu_arch_names_follow_the_cpp_enum():
    text = (SCRIPTS.parent / "common" / "gpu" / "arch.hpp").read_text()
    assert "enum class GpuArch { " + ", ".join(rr.GPU_ARCHS) + " };" in text
    assert rr.smem_limit_per_block("gfx942") == 64 * 1024
    assert rr.smem_limit_per_block("gfx950") == 160 * 1024
    assert rr.smem_limit_per_block("sm_90a") == 227 * 1024


def test_committed_report_every_launched_amd_kernel_fits():
    """results/static: on gfx942 and gfx950 every kernel a plan launches has no scratch and at
    least one workgroup per CU; what no plan launches there is marked, with the reason."""
    rows = json.loads((SCRIPTS.parent / "results" / "static" / "resources.json").read_text())
    amd = [r for r in rows if r["target"] in rr.AMD_TARGETS]
    assert amd
    for r in amd:
        assert "launched" in r, r["kernel"]
        if r["launched"]:
            assert r["scratch_bytes_per_lane"] == 0, (r["target"], r["kernel"])
            assert r["workgroups_per_cu"] >= 1, (r["target"], r["kernel"])
        else:
            assert any(n.startswith("not launched on " + r["target"]) for n in r["notes"]), r["kernel"]
    for target in rr.AMD_TARGETS:
        launched = [r for r in amd if r["target"] == target and r["launched"]]
        for experiment in ("prefill_kv_tiles", "prefill_lds_buffers", "prefill_sched_barrier",
                           "decode_lds_buffers", "decode_kv_streaming"):
            assert any(r["experiment"] == experiment for r in launched), (target, experiment)


def test_short_kernel_name():
    assert rr.short_kernel_name("void ns::k<a<b>, c>(float*, int)") == "ns::k<a<b>, c>"
    assert rr.short_kernel_name("toy::toy_untagged(float*)") == "toy::toy_untagged"


# ---------------------------------------------------------------------------------------
# Entries and tools
# ---------------------------------------------------------------------------------------


def test_read_entries(tmp_path):
    listing = tmp_path / "entries.txt"
    listing.write_text("decode|/a/decode.cu;prefill|/a/prefill.cu\n# comment\nnaive|/a/naive.cu\n\n")
    args = rr.parse_args(["--out", str(tmp_path), "--entries-file", str(listing), "decode|/a/decode.cu"])
    assert rr.read_entries(args) == [rr.Entry("decode", Path("/a/decode.cu")),
                                     rr.Entry("prefill", Path("/a/prefill.cu")),
                                     rr.Entry("naive", Path("/a/naive.cu"))]
    twice = rr.parse_args(["--out", str(tmp_path), "a|/a/x.cu", "b|/a/x.cu"])
    with pytest.raises(argparse.ArgumentTypeError, match="listed for experiments a and b"):
        rr.read_entries(twice)
    with pytest.raises(SystemExit):
        rr.parse_args(["--out", str(tmp_path), "no-separator.cu"])
    with pytest.raises(SystemExit):
        rr.parse_args(["--out", str(tmp_path), "--targets", "gfx942", "--require", "sm_90a"])


def _fake_tool(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / name
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    return tool


def test_find_cuda_tool_search_order(tmp_path, monkeypatch):
    on_path = _fake_tool(tmp_path / "path", "cuobjdump")
    in_wheel = _fake_tool(tmp_path / "site" / "nvidia" / "cu13" / "bin", "cuobjdump")
    monkeypatch.setattr(rr, "pip_nvidia_bin_dirs", lambda: [in_wheel.parent])
    monkeypatch.setenv("PATH", str(on_path.parent))
    assert rr.find_cuda_tool("cuobjdump") == str(on_path)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    if not Path("/usr/local/cuda/bin/cuobjdump").exists():
        assert rr.find_cuda_tool("cuobjdump") == str(in_wheel)
    assert rr.find_cuda_tool("no-such-tool") is None
    assert rr.find_cuda_tool("cuobjdump", str(on_path)) == str(on_path)
    assert rr.find_cuda_tool("cuobjdump", str(tmp_path / "missing")) is None


def test_shim_defines_each_function_once():
    shim = rr.amd_device_library_shim()
    for name, *_ in rr._OCML:
        assert shim.count(f" __ocml_{name}(") == 1
    assert shim.count("__ockl_get_local_id(") == 1
    assert shim.count("__ockl_wgred_or_i32(") == 1


# ---------------------------------------------------------------------------------------
# End to end
# ---------------------------------------------------------------------------------------

TOY = FIXTURES / "toy_two_stage.cu"
HAVE_NVCC = rr.find_cuda_tool("nvcc") is not None
HAVE_CLANG = shutil.which("clang-22") is not None
AVAILABLE = (["sm_90a"] if HAVE_NVCC else []) + (["gfx942", "gfx950"] if HAVE_CLANG else [])
needs_a_compiler = pytest.mark.skipif(not AVAILABLE, reason="neither nvcc nor clang-22 is installed")


def run_report(*args: str) -> subprocess.CompletedProcess:
    """The report as a command, compiling everything (the compile cache is tested in
    test_compile_cache.py): these tests are about the compilers' output."""
    return subprocess.run([sys.executable, str(SCRIPTS / "resource_report.py"), "--no-compile-cache", *args],
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def toy_report(tmp_path_factory):
    if not AVAILABLE:
        pytest.skip("neither nvcc nor clang-22 is installed")
    out = tmp_path_factory.mktemp("report")
    proc = run_report("--out", str(out), "--targets", ",".join(AVAILABLE), "--require", ",".join(AVAILABLE),
                      "-j", "3", f"toy_report|{TOY}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out, proc, json.loads((out / "resources.json").read_text())


@needs_a_compiler
def test_end_to_end_records(toy_report):
    out, proc, records = toy_report
    for target in AVAILABLE:
        assert f"] {target:<7} scripts/tests/fixtures/toy_two_stage.cu: 3 kernel(s)" in proc.stdout
        rows = {r["variant"]: r for r in records if r["target"] == target}
        assert set(rows) == {"baseline", "staged", "-"}
        assert all(r["experiment"] == "toy_report" for r in rows.values())
        assert all(r["source"] == "scripts/tests/fixtures/toy_two_stage.cu" for r in rows.values())
        assert rows["staged"]["dynamic_smem_bytes"] == 8192 and rows["baseline"]["dynamic_smem_bytes"] == 0
        assert rows["staged"]["static_smem_bytes"] == 4096 and rows["-"]["static_smem_bytes"] == 0
        assert rows["staged"]["block_size"] == 256 and rows["-"]["block_size"] == 128
        assert rows["staged"]["kernel"].startswith("void toy::toy_two_stage<schedlab::exp::toy_report::staged, "
                                                   "schedlab::gpu::DynamicSmem<8192ul>>(")
        assert rows["staged"]["compiler"] != "unknown"
        assert 0 < rows["staged"]["occupancy"] <= 1
        assert rows["staged"]["instructions"] is None or rows["staged"]["instructions"] > 10


@pytest.mark.skipif(not HAVE_CLANG, reason="clang-22 is not installed")
def test_end_to_end_amd(toy_report):
    out, _, records = toy_report
    amd = [r for r in records if r["target"] in ("gfx942", "gfx950")]
    for r in amd:
        assert r["external_calls"] == [], "the device-library stand-ins resolve every call"
        assert r["vgpr_total"] >= r["vgpr"] and r["sgpr"] > 0 and r["vgpr_spill_regs"] == 0
        if r["dynamic_smem_bytes"] == 0:
            assert r["waves_per_simd"] == r["compiler_waves_per_simd"]
    untagged = [r for r in amd if r["variant"] == "-"]
    assert all(r["agpr"] > 0 for r in untagged)
    staged = {r["target"]: r for r in amd if r["variant"] == "staged"}
    # 12 KiB of LDS: 5 workgroups in gfx942's 64 KiB, while gfx950's 160 KiB is no limit
    assert staged["gfx942"]["waves_per_simd"] == 5 and staged["gfx942"]["occupancy_limiter"] == "LDS"
    assert staged["gfx950"]["waves_per_simd"] == 8
    for target in ("gfx942", "gfx950"):
        asm = (out / "isa/scripts/tests/fixtures" / f"toy_two_stage.{target}.s").read_text()
        assert isa.find_between(isa.kernel_body(asm, staged[target]["symbol"]), r"^v_mfma", r"^ds_read", r"^v_mfma")


@pytest.mark.skipif(not HAVE_NVCC, reason="nvcc is not installed")
def test_end_to_end_nvidia(toy_report):
    out, proc, records = toy_report
    isa_dir = out / "isa/scripts/tests/fixtures"
    for ext in ("ptx", "cubin", "ptxas.log", "log"):
        assert (isa_dir / f"toy_two_stage.sm_90a.{ext}").is_file()
    staged = next(r for r in records if r["target"] == "sm_90a" and r["variant"] == "staged")
    assert staged["block_size_source"] == ".maxntid" and staged["barriers"] == 1
    assert staged["spill_store_bytes"] == 0 and staged["blocks_per_sm"] > 0
    sass = isa_dir / "toy_two_stage.sm_90a.sass"
    if sass.is_file():
        functions = isa.sass_functions(sass.read_text())
        assert isa.find_between(functions[staged["symbol"]], r"^HMMA", r"^LDSM", r"^HMMA")
    else:
        assert "SASS listings skipped" in proc.stdout, "a missing cuobjdump is reported, not silent"


@needs_a_compiler
def test_end_to_end_markdown_and_provenance(toy_report):
    out, _, records = toy_report
    md = (out / "resources.md").read_text()
    assert "## toy_report" in md
    assert md.count("`toy::toy_two_stage<schedlab::exp::toy_report::staged") == len(AVAILABLE)
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["targets"] == AVAILABLE


@needs_a_compiler
def test_compile_error_fails_with_the_compiler_message(tmp_path):
    broken = tmp_path / "broken.cu"
    broken.write_text("__global__ void k(float* x) { x[0] = undeclared_thing; }\n")
    target = AVAILABLE[-1]
    proc = run_report("--out", str(tmp_path / "out"), "--targets", target, f"exp|{broken}")
    assert proc.returncode == 1
    assert "FAILED" in proc.stdout and "undeclared_thing" in proc.stdout
    assert "failed to compile" in proc.stderr


@needs_a_compiler
def test_required_source_without_kernels_fails(tmp_path):
    empty = tmp_path / "host_only.cu"
    empty.write_text("int host_only() { return 1; }\n")
    target = AVAILABLE[-1]
    proc = run_report("--out", str(tmp_path / "out"), "--targets", target, "--require", target, f"exp|{empty}")
    assert proc.returncode == 1 and "produced no kernel" in proc.stderr
    assert run_report("--out", str(tmp_path / "out2"), "--targets", target, f"exp|{empty}").returncode == 0


def test_missing_required_compiler_fails(tmp_path):
    args = ["--out", str(tmp_path), "--targets", "sm_90a", "--nvcc", str(tmp_path / "no-nvcc"), f"exp|{TOY}"]
    proc = run_report(*args, "--require", "sm_90a")
    assert proc.returncode == 1
    assert "sm_90a: not compiled, nvcc not found" in proc.stdout and "required target sm_90a" in proc.stderr
    # not required: a clear note, and the skip status when nothing could be compiled
    proc = run_report(*args, "--skip-status", "77")
    assert proc.returncode == 77 and "nvcc not found" in proc.stdout


def test_nothing_to_do(tmp_path):
    assert run_report("--out", str(tmp_path), "--skip-status", "77").returncode == 77
    proc = run_report("--out", str(tmp_path), f"exp|{tmp_path / 'missing.cu'}")
    assert proc.returncode == 1 and "not found" in proc.stderr


def test_find_tool_cli():
    proc = run_report("--find-tool", "nvcc")
    assert proc.returncode == (0 if HAVE_NVCC else 1)
    assert (proc.stdout.strip() != "") == HAVE_NVCC
    assert os.path.basename(proc.stdout.strip()) in ("nvcc", "")
