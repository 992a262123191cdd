"""Compiled-code evidence for the prefill experiments, without a GPU.

Compiles each experiment's kernels.cu through scripts/resource_report.py (the same
commands as the static report) for sm_90a, gfx942 and gfx950 and checks what the compiler
did with each knob. Run: python3 -m pytest -q kernels/prefill/tests

What is checked, honestly:
  - prefill_sched_barrier, sm_90a: the hints are no-ops, so the three variants compile
    to the same SASS; in each, after the block barrier that ends tile j - 1, K's LDSM
    comes before the first QK HMMA of tile j (the barrier, not a hint, pins it).
  - every prefill kernel, gfx942 and gfx950: the matrix products are v_mfma 16x16x16 (fp8: 16x16x32)
    (the MFMA warp tile), with no call left (the decode kernel's m16n8k16 emulation is
    out-of-line calls); gfx950 fills swizzled tiles with global_load_lds, the padded
    layout and gfx942 with global loads and ds_write_b128.
  - prefill_sched_barrier, gfx950: the pinned variant carries two sched_barrier fences
    around the first k16 step's K loads, with only ds_reads between them, and the default
    none. The gap between the PV v_mfma group of tile j - 1 and the QK v_mfma group of
    tile j (the one holding the loop's s_barrier) holds a ds_read in BOTH variants: K(j)
    can only be read after that barrier, so the compiler places K reads there too. What
    differs is how many: pinned holds the fenced first-step K reads there (plus that
    step's Q re-reads: the defaults read Q from shared memory), the default hoists the reads
    of more k16 steps ahead of the first QK v_mfma (observed, default against pinned: 6
    against 4 at head dim 128, 7 against 4 at 64).
  - prefill_sched_barrier, gfx950 interleaved: the sched_group_barrier pairs (DS_READ 1,
    MFMA m16 tiles) are in the code, and in the QK group after the barrier (all but at most
    one of) the K reads are each followed directly by their v_mfmas; in the default clearly
    fewer are (11 against 6 of 12 at head dim 64, 23 against 15 of 24 at 128).
  - prefill_kv_tiles, sm_90a: separate registers put a transposed V load (LDSM.16.MT88)
    before the softmax's first MUFU.EX2; the union does not.
  - prefill_lds_buffers, sm_90a: one buffer waits four times per tile (BAR.SYNC) against
    one for two buffers; padded rows cost more shared memory than swizzled ones.
  - fp8 e4m3 kernels (prefill_kv_tiles), gfx942 and gfx950: both products are
    v_mfma_f32_16x16x32_fp8_fp8 (no 16-bit v_mfma), P is packed by v_cvt_pk_fp8_f32,
    nothing goes to scratch, and the kernel descriptor flushes no subnormals (denormal
    modes 3: P's f32 inputs to the conversion keep theirs; the fp8 MFMA keeps subnormal
    inputs whatever the mode, kernels/decode/README.md, "AMD"). sm_90a: mma.sync m16n8k32 e4m3 is not a native instruction
    there: ptxas lowers each to F2FP.F16.E4M3.UNPACK_B conversions and two
    HMMA.16816.F32 (native QMMA.16832.F32.E4M3.E4M3 exists on sm_89 and sm_120 only);
    the test pins that lowering, the e4m3 P pack and the PRMT byte permutes of V, so a
    toolkit that changes it is noticed.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
import isa  # noqa: E402
import resource_report  # noqa: E402

EXPERIMENTS = ("prefill_sched_barrier", "prefill_kv_tiles", "prefill_lds_buffers")


def _targets() -> list[str]:
    targets = []
    if resource_report.find_cuda_tool("nvcc") and resource_report.find_cuda_tool("cuobjdump"):
        targets.append("sm_90a")
    if shutil.which("clang-22"):
        targets += ["gfx942", "gfx950"]
    return targets


@pytest.fixture(scope="session")
def compiled(tmp_path_factory):
    """{(experiment, target): compiler output text} for every experiment and found target."""
    targets = _targets()
    if not targets:
        pytest.skip("neither nvcc + cuobjdump nor clang-22 found")
    out = tmp_path_factory.mktemp("prefill_isa")
    entries = [f"{e}|{ROOT / 'experiments' / e / 'kernels.cu'}" for e in EXPERIMENTS]
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "resource_report.py"), "--out", str(out),
                           "--root", str(ROOT), f"--targets={','.join(targets)}", "-j", "6", *entries],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    texts = {}
    for e in EXPERIMENTS:
        base = out / "isa" / "experiments" / e
        if "sm_90a" in targets:
            texts[(e, "sm_90a")] = (base / "kernels.sm_90a.sass").read_text()
        for target in ("gfx942", "gfx950"):
            if target in targets:
                texts[(e, target)] = (base / f"kernels.{target}.s").read_text()
    return texts


def _need(compiled, experiment, target):
    if (experiment, target) not in compiled:
        pytest.skip(f"no compiler for {target}")
    return compiled[(experiment, target)]


def _kernel(names, experiment, variant, head_dim=128, dtype=1):
    """The one kernel symbol of a policy at a head dim and dtype (1 = bf16, 2 = f16, 3 = fp8 e4m3)."""
    key = f"{experiment}{len(variant)}{variant}ELNS_5DTypeE{dtype}ELi{head_dim}E"
    found = [n for n in names if key in n]
    assert len(found) == 1, f"{key}: {found}"
    return found[0]


def _sass(text, experiment, variant):
    functions = isa.sass_functions(text)
    return functions[_kernel(functions, experiment, variant)]


def _raw_body(asm_text: str, symbol: str) -> list[str]:
    """A function's lines in an AMDGPU .s with comments kept (sched_barrier shows only as a comment)."""
    lines = asm_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(symbol + ":"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith(".Lfunc_end"))
    return [" ".join(line.split()) for line in lines[start + 1:end] if line.strip()]


FENCE = "sched_barrier mask(0x00000000)"


# ---------------------------------------------------------------------------------------
# prefill_sched_barrier
# ---------------------------------------------------------------------------------------


def test_sm90a_sched_hints_are_noops(compiled):
    text = _need(compiled, "prefill_sched_barrier", "sm_90a")
    base = _sass(text, "prefill_sched_barrier", "compiler")
    for variant in ("pinned", "interleaved"):
        assert _sass(text, "prefill_sched_barrier", variant) == base, f"{variant} differs from compiler on sm_90a"


def test_sm90a_k_ldsm_between_barrier_and_qk_hmma(compiled):
    text = _need(compiled, "prefill_sched_barrier", "sm_90a")
    for variant in ("compiler", "pinned"):
        instrs = _sass(text, "prefill_sched_barrier", variant)
        last_bar = last_hmma = None
        groups = 0
        for i, ins in enumerate(instrs):
            if re.search(r"\bBAR\.SYNC", ins):
                last_bar = i
            elif re.search(r"\bHMMA\.", ins):
                if last_bar is not None and (last_hmma is None or last_bar > last_hmma):
                    between = instrs[last_bar + 1:i]
                    assert any(re.search(r"\bLDSM\.16\.M88\b", b) for b in between), f"{variant}: no K LDSM at {i}"
                    groups += 1
                last_hmma = i
        assert groups >= 1, f"{variant}: no HMMA group after a barrier"


def _code(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith(";")]


MFMA = re.compile(r"^v_mfma_f32_16x16x(16|32)")  # 16-bit, or fp8 (16x16x32_fp8_fp8)
# The PrefillPolicy defaults the experiments' variants start from (prefill_policy.hpp).
BLOCK_N, M_TILES = 48, 2  # keys per K/V tile; 16-row tiles per warp (32-row warps)
DS_READ = re.compile(r"^ds_read")


def _pv_to_qk_gap(code: list[str]) -> tuple[int, int]:
    """(index of the last v_mfma of tile j - 1's PV group, index of the first of tile j's QK
    group): the gap between two v_mfma groups that holds the main loop's s_barrier."""
    mfmas = [i for i, line in enumerate(code) if MFMA.search(line)]
    gaps = [(a, b) for a, b in zip(mfmas, mfmas[1:])
            if any(line.startswith("s_barrier") for line in code[a + 1:b])
            and any(line.startswith("global_load_lds") for line in code[a + 1:b])]
    assert len(gaps) == 1, f"expected one barrier + copy gap between v_mfma groups, got {gaps}"
    return gaps[0]


def _gap_reads(code: list[str]) -> list[int]:
    start, end = _pv_to_qk_gap(code)
    return [i for i in range(start + 1, end) if DS_READ.search(code[i])]


def test_amd_prefill_uses_mfma(compiled):
    found = False
    for experiment in EXPERIMENTS:
        for target in ("gfx942", "gfx950"):
            if (experiment, target) not in compiled:
                continue
            text = compiled[(experiment, target)]
            for symbol in isa.parse_amdgpu_metadata(text):
                found = True
                body = isa.kernel_body(text, symbol)
                assert isa.has_instruction(body, MFMA), f"{target} {symbol}: no v_mfma"
                assert not isa.external_calls(text, symbol), f"{target} {symbol}: calls left"
                assert not any(line.startswith("s_swappc") for line in body), f"{target} {symbol}: a call"
    if not found:
        pytest.skip("no AMD compiler")


def test_amd_copies(compiled):
    """gfx950: global_load_lds into swizzled tiles; the padded layout and gfx942 load and store."""
    gfx950 = _need(compiled, "prefill_lds_buffers", "gfx950")
    names = isa.parse_amdgpu_metadata(gfx950)
    for variant, lane_copies in (("single", True), ("double_buffer", True), ("double_padded", False)):
        body = isa.kernel_body(gfx950, _kernel(names, "prefill_lds_buffers", variant))
        assert isa.has_instruction(body, r"^global_load_lds_dwordx4") == lane_copies, variant
        assert isa.has_instruction(body, r"^ds_write_b128") != lane_copies, variant
    gfx942 = _need(compiled, "prefill_lds_buffers", "gfx942")
    for symbol in isa.parse_amdgpu_metadata(gfx942):
        assert not isa.has_instruction(isa.kernel_body(gfx942, symbol), r"^global_load_lds"), symbol


def test_gfx950_pinned_fences_the_k_load(compiled):
    text = _need(compiled, "prefill_sched_barrier", "gfx950")
    names = isa.parse_amdgpu_metadata(text)
    observed = {}
    for head_dim in (64, 128):
        for dtype in (1, 2):
            default = _raw_body(text, _kernel(names, "prefill_sched_barrier", "compiler", head_dim, dtype))
            pinned = _raw_body(text, _kernel(names, "prefill_sched_barrier", "pinned", head_dim, dtype))
            assert not any(FENCE in line for line in default)
            fences = [i for i, line in enumerate(pinned) if FENCE in line]
            assert len(fences) == 2, fences
            inside = _code(pinned[fences[0] + 1:fences[1]])
            assert not any(MFMA.search(line) for line in inside), f"a matrix op inside the fences: {inside}"
            fenced_reads = [line for line in inside if DS_READ.search(line)]
            assert fenced_reads, "no K read inside the fences"
            # The fences sit in the PV(j-1) -> QK(j) gap, and their reads are all the gap's
            # reads (comment lines match neither pattern, so raw indices work).
            start, end = _pv_to_qk_gap(pinned)
            assert start < fences[0] < fences[1] < end, (start, fences, end)
            pinned_reads = _gap_reads(pinned)
            # Besides the fenced K reads the gap holds the first k16 step's Q re-reads (the
            # defaults read Q from shared memory): at most one per 16-row tile.
            assert len(fenced_reads) <= len(pinned_reads) <= len(fenced_reads) + M_TILES, (pinned_reads, fenced_reads)
            default_reads = _gap_reads(_code(default))
            # Both variants have a ds_read between the groups (the barrier orders K(j) after
            # PV(j-1) either way); the default hoists more K reads there than the pinned step.
            assert pinned_reads and default_reads
            assert len(default_reads) > len(pinned_reads), (head_dim, dtype, len(default_reads), len(pinned_reads))
            observed[(head_dim, dtype)] = (len(default_reads), len(pinned_reads))
    print("ds_reads between PV(j-1) and QK(j), (default, pinned):", observed)


def _mfmas_after_a_read(code: list[str], start: int, count: int) -> int:
    """Of the first `count` v_mfma from code[start] on, how many come right after a ds_read
    (in the stream of ds_reads and v_mfmas; other instructions are ignored)."""
    kinds = [("d" if DS_READ.search(line) else "m") for line in code[start:] if DS_READ.search(line) or MFMA.search(line)]
    after_read, seen = 0, 0
    for prev, kind in zip(["m"] + kinds, kinds):
        if kind == "m":
            after_read += prev == "d"
            seen += 1
            if seen == count:
                break
    return after_read


def test_gfx950_interleaved_groups(compiled):
    text = _need(compiled, "prefill_sched_barrier", "gfx950")
    names = isa.parse_amdgpu_metadata(text)
    observed = {}
    for head_dim in (64, 128):
        body = _raw_body(text, _kernel(names, "prefill_sched_barrier", "interleaved", head_dim))
        # One K read, then the matrix ops it feeds: one per 16-row tile of the warp on AMD.
        ds = [line for line in body if "sched_group_barrier mask(0x00000100) size(1) SyncID(0)" in line]
        mfma = [line for line in body if f"sched_group_barrier mask(0x00000008) size({M_TILES}) SyncID(0)" in line]
        assert ds and len(ds) == len(mfma)
        qk_mfmas = (head_dim // 16) * (BLOCK_N // 16) * M_TILES  # k16 steps x 16-key blocks x 16-row tiles
        for variant in ("interleaved", "compiler"):
            code = _code(_raw_body(text, _kernel(names, "prefill_sched_barrier", variant, head_dim)))
            start, _ = _pv_to_qk_gap(code)
            observed[(variant, head_dim)] = _mfmas_after_a_read(code, start, qk_mfmas)
        # A K read feeds M_TILES v_mfma, so at most qk_mfmas / M_TILES of them can follow a
        # read directly. Interleaved: all but at most one of those groups start right after
        # its read; the compiler's own order does so for clearly fewer (observed with the
        # current defaults: 11 vs 6 of 12 groups at head dim 64, 23 vs 15 of 24 at 128).
        groups = qk_mfmas // M_TILES
        assert observed[("interleaved", head_dim)] >= groups - 1, observed
        assert observed[("compiler", head_dim)] <= observed[("interleaved", head_dim)] - groups // 4, observed
    print("QK v_mfma right after a ds_read (of", "the QK group):", observed)


# ---------------------------------------------------------------------------------------
# prefill_kv_tiles
# ---------------------------------------------------------------------------------------


def _v_load_before_softmax(instrs) -> bool:
    first_exp = next(i for i, ins in enumerate(instrs) if re.search(r"\bMUFU\.EX2", ins))
    last_hmma_before = max(i for i, ins in enumerate(instrs[:first_exp]) if re.search(r"\bHMMA\.", ins))
    return any(re.search(r"\bLDSM\.16\.MT88", ins) for ins in instrs[last_hmma_before - 16:first_exp])


def test_sm90a_separate_prefetches_v_before_softmax(compiled):
    text = _need(compiled, "prefill_kv_tiles", "sm_90a")
    assert _v_load_before_softmax(_sass(text, "prefill_kv_tiles", "kv_separate"))
    assert not _v_load_before_softmax(_sass(text, "prefill_kv_tiles", "kv_union"))


# ---------------------------------------------------------------------------------------
# prefill_lds_buffers
# ---------------------------------------------------------------------------------------


def test_sm90a_single_buffer_waits_more(compiled):
    text = _need(compiled, "prefill_lds_buffers", "sm_90a")
    bars = {v: sum(bool(re.search(r"\bBAR\.SYNC", i)) for i in _sass(text, "prefill_lds_buffers", v))
            for v in ("single", "double_buffer")}
    assert bars["single"] > bars["double_buffer"], bars


def test_padded_layout_costs_shared_memory(compiled):
    text = _need(compiled, "prefill_lds_buffers", "sm_90a")
    names = isa.sass_functions(text)
    smem = {v: int(re.search(r"DynamicSmemILm(\d+)E", _kernel(names, "prefill_lds_buffers", v)).group(1))
            for v in ("double_buffer", "double_padded")}
    assert smem["double_padded"] > smem["double_buffer"], smem


def test_amd_fp8_uses_fp8_mfma(compiled):
    for target in ("gfx942", "gfx950"):
        text = _need(compiled, "prefill_kv_tiles", target)
        meta = isa.parse_amdgpu_metadata(text)
        for variant in ("kv_union", "kv_separate"):
            for head_dim in (64, 128):
                symbol = _kernel(meta, "prefill_kv_tiles", variant, head_dim, dtype=3)
                body = isa.kernel_body(text, symbol)
                assert isa.has_instruction(body, r"^v_mfma_f32_16x16x32_fp8_fp8"), (target, symbol)
                assert not isa.has_instruction(body, r"^v_mfma_f32_16x16x16"), (target, symbol)
                assert isa.has_instruction(body, r"^v_cvt_pk_fp8_f32"), (target, symbol)
                assert not isa.has_instruction(body, r"^scratch_"), (target, symbol)
                descriptor = isa.amdhsa_descriptors(text)[symbol]
                assert descriptor["float_denorm_mode_32"] == descriptor["float_denorm_mode_16_64"] == 3, (target, symbol)


def test_sm90a_fp8_mma_lowering(compiled):
    text = _need(compiled, "prefill_kv_tiles", "sm_90a")
    functions = isa.sass_functions(text)
    for head_dim in (64, 128):
        sass = functions[_kernel(functions, "prefill_kv_tiles", "kv_union", head_dim, dtype=3)]
        assert isa.has_instruction(sass, r"F2FP\.F16\.E4M3\.UNPACK_B"), head_dim
        assert isa.has_instruction(sass, r"HMMA\.16816\.F32 "), head_dim
        assert isa.has_instruction(sass, r"F2FP\.SATFINITE\.E4M3\.F32"), head_dim  # P to e4m3
        assert isa.has_instruction(sass, r"\bPRMT\b"), head_dim  # V's B fragments
