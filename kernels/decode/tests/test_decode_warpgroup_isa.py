"""Machine-code evidence for the decode row-tile bodies (sm_90a SASS), without a GPU.

A GQA group above 16 runs in one CTA of several 16-row tiles (DecodePolicy::kMaxRowTiles);
RowTileMma chooses how that CTA computes. Reads the SASS of decode_work_partition and
decode_row_tile_body (from scripts/resource_report.py, which reuses what the build's
static-report test compiled from the same inputs: its compile cache) and checks:
  - `split` and `token_balanced` (RowTileMma::warpgroup): their row-tile kernels (bf16, f16 and
    fp8 e4m3 KV; head dim 64 and 128) are the warpgroup body (DecodeBody::warpgroup_rows): per
    64-key step, head_dim / 16 HGMMA.64x64x16 for S = Q K^T with both operands in shared memory
    and 4 HGMMA.64x<head_dim>x16 for O += P V with P from registers and V transposed
    (MN-major); no mma.sync (HMMA); no local memory in the computing warps' loop (the loop
    holding the HGMMAs), and at most a few words anywhere else (each lane writes its rows from
    registers: ptxas keeps three words of the fp8 head-dim-128 kernel in local memory for the
    unit's output and, in `split`'s, four more that its producer warps reload once a step); a
    proxy fence (FENCE.VIEW.ASYNC.S) before the CTA barrier that precedes the first HGMMA, since
    the async copies (and fp8's conversion stores) land through the generic proxy and wgmma
    reads through the async one. fp8's P V is f16 (V converted in shared memory: F2FP unpacks
    of e4m3 pairs); at head dim 128 S = Q K^T is 8 e4m3 QGMMA.64x64x32 a step (Q's high and low
    parts, 128 / 32 k steps each) on the raw K tiles, with no f16 S beside it; at head dim 64
    S is f16 with no e4m3 QGMMA;
  - fp8 is converted by the producer warps, not between a step's S and its P V;
  - decode_row_tile_body's `token_balanced_warp_rows` (RowTileMma::warp) has no warpgroup kernel
    at all, and its row-tile kernels use HMMA only;
  - the lean step: the warp's vote on whether a row moved its max (VOTE.ANY, twice: the masked
    and the unmasked softmax);
  - fp8's producer warpgroup: setmaxnreg takes the producers down to 96 registers and the
    computing warps up to 160, the full / empty named barriers count 256 threads (BAR.ARV and
    BAR.SYNC with 0x100), Q's and the closing steps' barriers the 128 computing threads; 16-bit
    KV has none of it.
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

EXPERIMENTS = ("decode_work_partition", "decode_row_tile_body")
ROW_TILES, WARPGROUP_ROWS = 2, 3  # DecodeBody values in the mangled kernel name
BF16, F16, FP8 = 1, 2, 3  # DType values


@pytest.fixture(scope="session")
def kernels(tmp_path_factory) -> dict[tuple[str, int, int, int], list[str]]:
    """{(variant, dtype, head_dim, body): instructions} of the experiments' decode kernels."""
    texts = resource_report.sm90_sass_texts(ROOT, list(EXPERIMENTS), tmp_path_factory.mktemp("decode_isa"))
    if not texts:
        pytest.skip("nvcc and cuobjdump not found: no sm_90a SASS")
    found = {}
    for experiment in EXPERIMENTS:
        pattern = re.compile(rf"paged_decode_kernelINS_11experiments\d+{experiment}(\d+)(\w+?)ELNS_5DTypeE(\d)ELi(\d+)"
                             r"ELNS1_10DecodeBodyE(\d)E")
        for name, body in isa.sass_functions(texts[experiment]).items():
            if m := pattern.search(name):
                variant = m.group(2)[: int(m.group(1))]
                found[(variant, int(m.group(3)), int(m.group(4)), int(m.group(5)))] = body
    return found


def _count(body: list[str], pattern: str) -> int:
    return sum(1 for ins in body if re.search(pattern, ins))


def _in_loops(body: list[str], pattern: str, holding: str = "", innermost: bool = False) -> int:
    """Instructions matching `pattern` inside a loop (isa.sass_loops; innermost: the loops
    around no other loop) that also holds an instruction matching `holding`."""
    spans = [s for s in isa.sass_loops(body, innermost) if not holding or any(re.search(holding, body[j]) for j in s)]
    return sum(1 for i in set().union(*spans) if re.search(pattern, body[i]))


def _in_inner_loops(body: list[str], pattern: str, holding: str = "") -> int:
    """As _in_loops, over the innermost loops only: a branch back over the whole body (ptxas
    leaves one around the raw-keys kernels' two warpgroups' code) holds its prologue and
    epilogue too."""
    return _in_loops(body, pattern, holding, innermost=True)


@pytest.mark.parametrize("variant", ["split", "token_balanced"])
def test_row_tiles_are_one_warpgroup(kernels, variant):
    for dtype in (BF16, F16, FP8):
        for head_dim in (64, 128):
            where = f"{variant} dtype {dtype} head dim {head_dim}"
            assert (variant, dtype, head_dim, ROW_TILES) not in kernels, f"{where}: a warp row-tile kernel is left"
            body = kernels[(variant, dtype, head_dim, WARPGROUP_ROWS)]
            raw_keys = dtype == FP8 and head_dim == 128
            op, depth = (r"QGMMA\.64x64x32\.F32\.E4M3\.E4M3", 2 * head_dim // 32) if raw_keys else \
                (r"HGMMA\.64x64x16\.F32\S*", head_dim // 16)
            first_qk = _count(body, rf"\b{op} R\d+, gdesc\[UR\d+\], RZ")
            qk = first_qk + _count(body, rf"\b{op} R\d+, gdesc\[UR\d+\], R\d+")
            # (P V at head dim 64 is also 64x64x16, but its B descriptor is transposed: "].tnspB")
            assert _count(body, r"\bHGMMA\.64x64x16\.F32\S* R\d+, R\d+, gdesc\[UR\d+\],") == 0, \
                f"{where}: Q from registers"
            pv = _count(body, rf"\bHGMMA\.64x{head_dim}x16\.F32\S* R\d+, R\d+, gdesc\[UR\d+\]\.tnspB")
            assert first_qk >= 1 and qk % depth == 0, f"{where}: S = Q K^T is not {depth} {op} a step ({qk})"
            assert pv >= 4 and pv % 4 == 0, f"{where}: O += P V is not 4 HGMMA a step with P from registers ({pv})"
            assert _count(body, r"\bHMMA\.") == 0, f"{where}: mma.sync left in the warpgroup body"
            if raw_keys:
                assert _count(body, r"\bHGMMA\.64x64x16\.") == 0, f"{where}: an f16 S beside the e4m3 one"
            else:
                assert _count(body, r"\bQGMMA\.") == 0, f"{where}: an e4m3 product"
            assert _in_inner_loops(body, r"\b(LDL|STL)(\.|\s)", r"\bHGMMA\.") == 0, \
                f"{where}: local memory in the products' loop"
            assert _count(body, r"\b(LDL|STL)(\.|\s)") <= 24, f"{where}: local memory beyond a few words"
            assert _in_loops(body, r"\bHGMMA\.") > 0, f"{where}: no loop found around the products"
            at = isa.find_between(body, r"FENCE\.VIEW\.ASYNC\.S", r"BAR\.SYNC", r"\b[HQ]GMMA\.")
            assert at is not None, f"{where}: no proxy fence, then barrier, before the first wgmma"
            if dtype == FP8:
                # (in the innermost loops: Q's split also unpacks, once a unit, to take its high part back out)
                assert _in_inner_loops(body, r"\bF2FP\.F16\.E4M3\.UNPACK_B") > 0, f"{where}: no e4m3 to f16 conversion"


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


@pytest.mark.parametrize("variant", ["split", "token_balanced"])
def test_fp8_is_not_converted_between_s_and_p_v(kernels, variant):
    for head_dim in (64, 128):
        unpacks = _unpacks_while_s_runs(kernels[(variant, FP8, head_dim, WARPGROUP_ROWS)], head_dim)
        assert unpacks == 0, f"{variant} fp8 head dim {head_dim}: {unpacks} unpacks while S runs"


@pytest.mark.parametrize("variant", ["split", "token_balanced"])
def test_lean_step_votes_on_moved_maxima(kernels, variant):
    for dtype in (BF16, F16, FP8):
        for head_dim in (64, 128):
            lean = kernels[(variant, dtype, head_dim, WARPGROUP_ROWS)]
            assert _count(lean, r"\bVOTE\.ANY") == 2, \
                f"{variant} dtype {dtype} head dim {head_dim}: no vote on moved maxima in both softmax forms"


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
    for key in [("split", BF16, 128, WARPGROUP_ROWS), ("token_balanced", F16, 64, WARPGROUP_ROWS)]:
        body = kernels[key]
        assert _count(body, r"\bUSETMAXREG") == 0 and _count(body, r"\bBAR\.(ARV|SYNC)\S* R\d+, 0x100\b") == 0, key
