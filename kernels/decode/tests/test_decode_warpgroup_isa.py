"""Machine-code evidence for the decode row-tile bodies (sm_90a SASS), without a GPU.

A GQA group above 16 runs in one CTA of several 16-row tiles (DecodePolicy::kMaxRowTiles);
RowTileMma chooses how that CTA computes. Reads decode_work_partition's SASS (from
scripts/resource_report.py, which reuses what the build's static-report test compiled from the
same inputs: its compile cache) and checks:
  - `split` and `token_balanced` (RowTileMma::warpgroup): their row-tile kernels (bf16, f16 and
    fp8 e4m3 KV; head dim 64 and 128) are the warpgroup body (DecodeBody::warpgroup_rows): per
    64-key step, head_dim / 16 HGMMA.64x64x16 for S = Q K^T with both operands in shared memory
    (`token_balanced_q_regs`, DecodePolicy::kRowTileQInRegisters: Q from registers, K from shared
    memory K-major) and 4 HGMMA.64x<head_dim>x16 for O += P V with P from registers and V
    transposed (MN-major); no mma.sync (HMMA); no local memory in the computing warps' loop
    (the loop holding the HGMMAs), and at most a few words anywhere else: since each lane writes
    its rows from registers (DecodePolicy::kRowsFromRegisters), ptxas keeps three words of the
    fp8 head-dim-128 kernel in local memory for the unit's output and, in `split`'s, four more
    that its producer warps reload once a step; a proxy fence (FENCE.VIEW.ASYNC.S) before the CTA barrier that precedes the first
    HGMMA, since the async copies (and fp8's conversion stores) land through the generic proxy
    and wgmma reads through the async one. fp8's P V is f16 (V converted in shared memory: F2FP
    unpacks of e4m3 pairs); at head dim 128 with the producer warpgroup (`split`,
    `token_balanced`: DecodePolicy::kRowTileFp8RawKeys) S = Q K^T is 8 e4m3 QGMMA.64x64x32 a step
    (Q's high and low parts, 128 / 32 k steps each) on the raw K tiles, with fewer unpacks than
    `token_balanced_converted_keys`, whose S is f16 with no e4m3 QGMMA, as every other fp8 kernel's;
  - fp8 converted a step ahead (DecodePolicy::kRowTileConvertAhead, `token_balanced_convert_ahead`):
    e4m3 unpacks sit between a step's last S = Q K^T HGMMA and its first P V HGMMA, i.e. the
    next step is converted while S runs; converted in the step (`split`, `token_balanced`) none do;
  - `token_balanced_warp_rows` (RowTileMma::warp) has no warpgroup kernel at all, and its
    16-bit row-tile kernels use HMMA only;
  - the lean step (DecodePolicy::kRowTileLeanStep, every warpgroup variant but
    `token_balanced_plain_step`): the warp's vote on whether a row moved its max (VOTE.ANY,
    twice: the masked and the unmasked softmax) and fewer integer divisions (I2F.RP, the start
    of each) than the plain step, whose page lookups divide by the page size every step.
  - fp8 with a producer warpgroup (DecodePolicy::kRowTileFp8Producers, the default of `split` and
    `token_balanced`): setmaxnreg takes the producers down to 96 registers and the computing
    warps up to 160, the full / empty named barriers count 256 threads (BAR.ARV and BAR.SYNC
    with 0x100), Q's and the closing steps' barriers the 128 computing threads; converting in
    the computing warps (`token_balanced_fp8_in_warps`) and 16-bit KV have none of it.
Run: python3 -m pytest -q kernels/decode/tests
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
import isa  # noqa: E402
import resource_report  # noqa: E402

EXPERIMENT = "decode_work_partition"
ROW_TILES, WARPGROUP_ROWS = 2, 3  # DecodeBody values in the mangled kernel name
BF16, F16, FP8 = 1, 2, 3  # DType values


@pytest.fixture(scope="session")
def kernels(tmp_path_factory) -> dict[tuple[str, int, int, int], list[str]]:
    """{(variant, dtype, head_dim, body): instructions} of decode_work_partition's decode kernels."""
    texts = resource_report.sm90_sass_texts(ROOT, [EXPERIMENT], tmp_path_factory.mktemp("decode_isa"))
    if not texts:
        pytest.skip("nvcc and cuobjdump not found: no sm_90a SASS")
    pattern = re.compile(rf"paged_decode_kernelINS_11experiments\d+{EXPERIMENT}(\d+)(\w+?)ELNS_5DTypeE(\d)ELi(\d+)"
                         r"ELNS1_10DecodeBodyE(\d)E")
    found = {}
    for name, body in isa.sass_functions(texts[EXPERIMENT]).items():
        if m := pattern.search(name):
            variant = m.group(2)[: int(m.group(1))]
            found[(variant, int(m.group(3)), int(m.group(4)), int(m.group(5)))] = body
    return found


def _count(body: list[str], pattern: str) -> int:
    return sum(1 for ins in body if re.search(pattern, ins))


def _in_loops(body: list[str], pattern: str, holding: str = "") -> int:
    """Instructions matching `pattern` inside a loop (between a backward BRA's target and the
    branch) that also holds an instruction matching `holding`. SASS instructions are 16 bytes
    and cuobjdump's branch targets count from the function's start: instruction i is at 16 i."""
    inside = set()
    for i, ins in enumerate(body):
        if (m := re.search(r"\bBRA\S*\s+0x([0-9a-f]+)", ins)) and int(m.group(1), 16) // 16 < i:
            span = range(int(m.group(1), 16) // 16, i + 1)
            if not holding or any(re.search(holding, body[j]) for j in span):
                inside.update(span)
    return sum(1 for i in inside if re.search(pattern, body[i]))


def _in_inner_loops(body: list[str], pattern: str, holding: str = "") -> int:
    """As _in_loops, over the innermost loops only (those around no other loop): a branch back
    over the whole body (ptxas leaves one around the raw-keys kernels' two warpgroups' code)
    holds its prologue and epilogue too."""
    spans = [range(int(m.group(1), 16) // 16, i + 1) for i, ins in enumerate(body)
             if (m := re.search(r"\bBRA\S*\s+0x([0-9a-f]+)", ins)) and int(m.group(1), 16) // 16 < i]
    inner = [a for a in spans if not any(b != a and b.start >= a.start and b.stop <= a.stop for b in spans)
             and (not holding or any(re.search(holding, body[j]) for j in a))]
    return sum(1 for i in set().union(*inner) if re.search(pattern, body[i])) if inner else 0


@pytest.mark.parametrize("variant,q_regs", [("split", False), ("token_balanced", False),
                                            ("token_balanced_convert_ahead", False), ("token_balanced_q_regs", True)])
def test_row_tiles_are_one_warpgroup(kernels, variant, q_regs):
    for dtype in (BF16, F16, FP8):
        for head_dim in (64, 128):
            where = f"{variant} dtype {dtype} head dim {head_dim}"
            assert (variant, dtype, head_dim, ROW_TILES) not in kernels, f"{where}: a warp row-tile kernel is left"
            body = kernels[(variant, dtype, head_dim, WARPGROUP_ROWS)]
            raw_keys = dtype == FP8 and head_dim == 128 and variant in ("split", "token_balanced")
            a = r"R\d+, " if q_regs else ""  # Q's A fragments, or nothing before B's descriptor
            op, depth = (r"QGMMA\.64x64x32\.F32\.E4M3\.E4M3", 2 * head_dim // 32) if raw_keys else \
                (r"HGMMA\.64x64x16\.F32\S*", head_dim // 16)
            first_qk = _count(body, rf"\b{op} R\d+, {a}gdesc\[UR\d+\], RZ")
            qk = first_qk + _count(body, rf"\b{op} R\d+, {a}gdesc\[UR\d+\], R\d+")
            other = r"gdesc" if q_regs else r"R\d+, gdesc"
            # (P V at head dim 64 is also 64x64x16, but its B descriptor is transposed: "].tnspB")
            assert _count(body, rf"\bHGMMA\.64x64x16\.F32\S* R\d+, {other}\[UR\d+\],") == 0, \
                f"{where}: Q from the other source"
            pv = _count(body, rf"\bHGMMA\.64x{head_dim}x16\.F32\S* R\d+, R\d+, gdesc\[UR\d+\]\.tnspB")
            assert first_qk >= 1 and qk % depth == 0, f"{where}: S = Q K^T is not {depth} {op} a step ({qk})"
            assert pv >= 4 and pv % 4 == 0, f"{where}: O += P V is not 4 HGMMA a step with P from registers ({pv})"
            assert _count(body, r"\bHMMA\.") == 0, f"{where}: mma.sync left in the warpgroup body"
            if raw_keys:
                assert _count(body, r"\bHGMMA\.64x64x16\.") == 0, f"{where}: an f16 S beside the e4m3 one"
                converted = kernels[("token_balanced_converted_keys", dtype, head_dim, WARPGROUP_ROWS)]
                assert _count(converted, r"\bQGMMA\.") == 0, f"{where}: converted keys with an e4m3 product"
                unpacks = r"\bF2FP\.F16\.E4M3\.UNPACK_B"
                # (in the innermost loops: Q's split also unpacks, once a unit, to take its high part back out)
                assert 0 < _in_inner_loops(body, unpacks) < _in_inner_loops(converted, unpacks), f"{where}: K converted too"
            else:
                assert _count(body, r"\bQGMMA\.") == 0, f"{where}: an e4m3 product"
            assert _in_inner_loops(body, r"\b(LDL|STL)(\.|\s)", r"\bHGMMA\.") == 0, \
                f"{where}: local memory in the products' loop"
            assert _count(body, r"\b(LDL|STL)(\.|\s)") <= 24, f"{where}: local memory beyond a few words"
            assert _in_loops(body, r"\bHGMMA\.") > 0, f"{where}: no loop found around the products"
            at = isa.find_between(body, r"FENCE\.VIEW\.ASYNC\.S", r"BAR\.SYNC", r"\b[HQ]GMMA\.")
            assert at is not None, f"{where}: no proxy fence, then barrier, before the first wgmma"
            if dtype == FP8:
                assert _count(body, r"\bF2FP\.F16\.E4M3\.UNPACK_B") > 0, f"{where}: no e4m3 to f16 conversion"


def test_warp_rows_variant_has_no_warpgroup_kernel(kernels):
    mine = {k: v for k, v in kernels.items() if k[0] == "token_balanced_warp_rows"}
    assert mine, "token_balanced_warp_rows: no kernels found"
    assert not [k for k in mine if k[3] == WARPGROUP_ROWS]
    for dtype in (BF16, F16, FP8):
        for head_dim in (64, 128):
            body = mine[("token_balanced_warp_rows", dtype, head_dim, ROW_TILES)]
            assert _count(body, r"\bHMMA\.") > 0 and _count(body, r"\bHGMMA\.") == 0, (dtype, head_dim)


def _unpacks_while_s_runs(body: list[str], head_dim: int) -> int:
    """e4m3 unpacks between an S = Q K^T wgmma and the next P V HGMMA (the first step's pair)."""
    qk = [i for i, ins in enumerate(body)
          if re.search(r"\b(HGMMA\.64x64x16\.F32\S* R\d+, (R\d+, )?gdesc|QGMMA\.64x64x32\.)", ins)]
    pv = [i for i, ins in enumerate(body) if re.search(rf"\bHGMMA\.64x{head_dim}x16\.F32\S* R\d+, R\d+, gdesc", ins)]
    assert qk and pv, "no S or P V HGMMA"
    first_pv = next((i for i in pv if i > qk[0]), None)
    assert first_pv is not None, "no P V HGMMA after S"
    last_qk = max(i for i in qk if i < first_pv)
    return _count(body[last_qk:first_pv], r"\bF2FP\.F16\.E4M3\.UNPACK_B")


@pytest.mark.parametrize("variant,ahead", [("split", False), ("token_balanced", False),
                                           ("token_balanced_convert_ahead", True)])
def test_fp8_conversion_overlaps_s(kernels, variant, ahead):
    for head_dim in (64, 128):
        unpacks = _unpacks_while_s_runs(kernels[(variant, FP8, head_dim, WARPGROUP_ROWS)], head_dim)
        where = f"{variant} fp8 head dim {head_dim}"
        if ahead:
            assert unpacks > 0, f"{where}: nothing converted while S runs"
        else:
            assert unpacks == 0, f"{where}: {unpacks} unpacks while S runs"


@pytest.mark.parametrize("variant", ["split", "token_balanced", "token_balanced_convert_ahead"])
def test_lean_step_votes_and_does_not_divide(kernels, variant):
    for dtype in (BF16, F16, FP8):
        for head_dim in (64, 128):
            where = f"{variant} dtype {dtype} head dim {head_dim}"
            lean = kernels[(variant, dtype, head_dim, WARPGROUP_ROWS)]
            plain = kernels[("token_balanced_plain_step", dtype, head_dim, WARPGROUP_ROWS)]
            assert _count(lean, r"\bVOTE\.ANY") == 2, f"{where}: no vote on moved maxima in both softmax forms"
            assert _count(plain, r"\bVOTE\.ANY") == 0, f"{where}: the plain step votes"
            assert _count(lean, r"\bI2F\.RP") < _count(plain, r"\bI2F\.RP"), f"{where}: as many divisions as the plain step"


def test_fp8_producer_warpgroup(kernels):
    for variant in ("split", "token_balanced"):
        for head_dim in (64, 128):
            where = f"{variant} fp8 head dim {head_dim}"
            body = kernels[(variant, FP8, head_dim, WARPGROUP_ROWS)]
            assert _count(body, r"\bUSETMAXREG\.DEALLOC\S* 0x60\b") == 1, f"{where}: producers not down to 96"
            assert _count(body, r"\bUSETMAXREG\.TRY_ALLOC\S* \S+, 0xa0\b") == 1, f"{where}: computing warps not up to 160"
            assert _count(body, r"\bBAR\.ARV R\d+, 0x100\b") >= 2, f"{where}: no full / empty arrivals over 256 threads"
            assert _count(body, r"\bBAR\.SYNC\S* R\d+, 0x100\b") >= 2, f"{where}: no full / empty waits over 256 threads"
            assert _count(body, r"\bBAR\.SYNC\S* 0x5, 0x80\b") == 1, f"{where}: Q not published among 128 threads"
    for key in [("token_balanced_fp8_in_warps", FP8, 128, WARPGROUP_ROWS), ("split", BF16, 128, WARPGROUP_ROWS)]:
        body = kernels[key]
        assert _count(body, r"\bUSETMAXREG") == 0 and _count(body, r"\bBAR\.(ARV|SYNC)\S* R\d+, 0x100\b") == 0, key
