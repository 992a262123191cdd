"""Compiled-code evidence for the paged decode kernel on AMD, without a GPU.

Compiles every decode experiment's kernels.cu and the decode fault kernels through
scripts/resource_report.py (the static report's commands) for gfx942 and gfx950, and checks
every paged_decode_kernel instantiation:
  - its matrix products are v_mfma_f32_16x16x16 (bf16: the bf16 form; f16, and fp8 KV as f16
    operands: the f16 form), all inside loops, each loop holding one 16-token tile's worth:
    head_dim / 16 for S^T = K Q^T and head_dim / 16 for O^T += V^T P^T. The emulated
    m16n8k16 fragments (backend/hip/warp_mma.hpp) have none and are out-of-line calls, so
    the emulation coming back fails here;
  - no call is left (no s_swappc, no external function) and nothing goes to scratch (no
    scratch bytes, no spilled VGPRs, no scratch_ or buffer stores);
  - fp8 KV becomes f16 operands by byte permutes (v_perm_b32), not by the hardware's fp8
    conversions, which read FNUZ on gfx942;
  - e4m3 subnormals reach the MFMA as f16 subnormals: no f16 arithmetic in the tile loops
    (the K/V bits go from the permutes to v_mfma; the only f16 VALU work is P's conversion
    from f32), and the kernel descriptor keeps f16 subnormals (float_denorm_mode_16_64 3,
    flush none) for that conversion. The f16 MFMA itself ignores MODE's denormal field and
    keeps subnormal inputs on CDNA3 and CDNA4 (kernels/decode/README.md, "AMD");
  - at least one workgroup per CU wherever the kernel's LDS fits the target at all (the
    `wide` and `triple_buffer` variants at head dim 128 ask for more LDS than gfx942 has).
Run: python3 -m pytest -q kernels/decode/tests
"""
from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
import isa  # noqa: E402
import resource_report  # noqa: E402

TARGETS = ("gfx942", "gfx950")
SOURCES = {e: ROOT / "experiments" / e / "kernels.cu"
           for e in ("decode_kv_streaming", "decode_lds_buffers", "decode_page_prefetch", "decode_stage_priority",
                     "decode_tile_schedule", "decode_work_partition", "decode_partial_merge", "decode_row_tile_body")}
SOURCES["decode_faults"] = ROOT / "kernels" / "tests" / "decode_fault_kernels.cu"
# DType: f16 = 1, bf16 = 2, fp8_e4m3 = 3 (common/dtype.hpp).
MFMA_OF_DTYPE = {1: "v_mfma_f32_16x16x16_f16", 2: "v_mfma_f32_16x16x16_bf16", 3: "v_mfma_f32_16x16x16_f16"}


@pytest.fixture(scope="session")
def compiled(tmp_path_factory):
    """(the report's records, {(source name, target): .s text}) for every decode source."""
    if not shutil.which("clang-22"):
        pytest.skip("clang-22 not found")
    out = tmp_path_factory.mktemp("decode_isa")
    status = resource_report.main(["--out", str(out), "--root", str(ROOT), f"--targets={','.join(TARGETS)}",
                                   "--require", ",".join(TARGETS), "-j", str(min(6, len(os.sched_getaffinity(0)))),
                                   *(f"{name}|{path}" for name, path in SOURCES.items())])
    assert status == 0, f"resource_report failed: {status}"
    records = json.loads((out / "resources.json").read_text())
    texts = {}
    for name, path in SOURCES.items():
        base = out / "isa" / path.parent.relative_to(ROOT)
        for target in TARGETS:
            texts[(name, target)] = (base / f"{path.stem}.{target}.s").read_text()
    return records, texts


def _decode_kernels(texts):
    """(source, target, symbol, dtype, head dim, .s text) of every paged_decode_kernel."""
    found = []
    for (name, target), text in texts.items():
        for symbol in isa.parse_amdgpu_metadata(text):
            if "paged_decode_kernel" not in symbol:
                continue
            m = re.search(r"DTypeE(\d)ELi(\d+)E", symbol)
            found.append((name, target, symbol, int(m.group(1)), int(m.group(2)), text))
    return found


def test_every_source_has_decode_kernels_on_both_targets(compiled):
    _, texts = compiled
    seen = {(name, target) for name, target, *_ in _decode_kernels(texts)}
    assert seen == set(texts), set(texts) - seen


def test_matrix_products_are_mfma_inside_the_tile_loop(compiled):
    _, texts = compiled
    for name, target, symbol, dtype, head_dim, text in _decode_kernels(texts):
        where = f"{target} {name} {symbol}"
        body = isa.kernel_body(text, symbol)
        mfma = [ins for ins in body if ins.startswith("v_mfma")]
        assert mfma, f"{where}: no v_mfma (the emulated fragments?)"
        assert {ins.split()[0] for ins in mfma} == {MFMA_OF_DTYPE[dtype]}, where
        in_loops = [sum(ins.startswith("v_mfma") for ins in loop) for loop in isa.loops(text, symbol).values()]
        assert sum(in_loops) == len(mfma), f"{where}: a v_mfma outside the loops"
        # One 16-token tile per iteration: head_dim / 16 k16 steps of S^T, head_dim / 16 tiles of O^T.
        assert all(n in (0, head_dim // 8) for n in in_loops), f"{where}: v_mfma per loop {in_loops}"


def test_no_calls_and_no_scratch(compiled):
    _, texts = compiled
    metadata = {}  # per compiled file, parsed once: each file holds every kernel of its experiment
    for name, target, symbol, _, _, text in _decode_kernels(texts):
        where = f"{target} {name} {symbol}"
        if (name, target) not in metadata:
            metadata[name, target] = isa.parse_amdgpu_metadata(text)
        meta = metadata[name, target][symbol]
        assert meta.get("private_segment_fixed_size", 0) == 0, f"{where}: scratch"
        assert meta.get("vgpr_spill_count", 0) == 0, f"{where}: spilled VGPRs"
        body = isa.kernel_body(text, symbol)
        assert not isa.has_instruction(body, r"^(scratch_|buffer_store)"), where
        assert not isa.has_instruction(body, r"^s_swappc"), f"{where}: a call"
        assert not isa.external_calls(text, symbol), where
    for (name, target), text in texts.items():  # the emulation is out of line: no such function may exist
        assert not re.search(r"^\S*(mma_16816|ldmatrix)\S*:", text, re.M), f"{target} {name}: emulated fragments"


def test_fp8_kv_is_converted_by_byte_permutes(compiled):
    _, texts = compiled
    for name, target, symbol, dtype, _, text in _decode_kernels(texts):
        if dtype != 3:
            continue
        where = f"{target} {name} {symbol}"
        tile_loops = [loop for loop in isa.loops(text, symbol).values() if isa.has_instruction(loop, r"^v_mfma")]
        assert tile_loops, f"{where}: no loop with a v_mfma"
        for loop in tile_loops:
            assert isa.has_instruction(loop, r"^v_perm_b32"), where
            assert not isa.has_instruction(loop, r"^v_cvt_\w*(fp8|bf8)"), f"{where}: a hardware fp8 conversion"


# f16 arithmetic that could flush or round a converted K/V operand before the MFMA.
F16_ARITHMETIC = r"^v_(pk_)?(add|sub|subrev|mul|fma|fmac|mad|mac|max|min|max3|min3|ldexp)_f16(_e32|_e64|_dpp|_sdwa)?\s"


def test_fp8_subnormals_reach_the_mfma(compiled):
    _, texts = compiled
    checked = 0
    for name, target, symbol, dtype, _, text in _decode_kernels(texts):
        if dtype != 3:
            continue
        where = f"{target} {name} {symbol}"
        descriptor = isa.amdhsa_descriptors(text)[symbol]
        assert descriptor["float_denorm_mode_16_64"] == 3, f"{where}: f16 subnormals flushed"
        for loop in isa.loops(text, symbol).values():
            if isa.has_instruction(loop, r"^v_mfma"):
                assert not isa.has_instruction(loop, F16_ARITHMETIC), f"{where}: f16 arithmetic in the tile loop"
                checked += 1
    assert checked


def test_a_workgroup_per_cu_wherever_the_lds_fits(compiled):
    records, _ = compiled
    rows = [r for r in records if r["target"] in TARGETS and "paged_decode_kernel" in r["kernel"]]
    assert rows
    for r in rows:
        lds = r["static_smem_bytes"] + r["dynamic_smem_bytes"]
        assert r["scratch_bytes_per_lane"] == 0, r["kernel"]
        if lds <= resource_report.AMD_ARCHS[r["target"]].max_lds_per_workgroup:
            assert r["workgroups_per_cu"] >= 1, (r["target"], r["kernel"], r["occupancy_limiter"])
        else:
            assert r["occupancy_limiter"] == "LDS", (r["target"], r["kernel"])
