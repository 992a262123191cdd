"""Machine-code evidence for the Hopper prefill experiments (sm_90a SASS), without a GPU.

Reads the SASS of each experiment's kernels.cu, and of the family default's kernels
(kernels/hopper_prefill/hopper_prefill.cu: the experiment variants that are the default alias its
policy and have no kernels of their own, DEFAULT_ALIASES), from scripts/resource_report.py, which
reuses what the build's static-report test compiled with the same commands and inputs (its
compile cache) and compiles the rest. Checks, for
every instantiation (bf16 / f16, head dim 64 / 128, causal or not; fp8 e4m3 at head dim 128
on the policies that run it, FP8_REFUSED excepted), of both kernels (a uniform batch's and a
ragged batch's, KINDS):
  - the matrix products are warpgroup ops (HGMMA; fp8: QGMMA ...x32 E4M3 and no HGMMA), with
    no mma.sync (HMMA) anywhere;
  - fp8: the producer's transpose of V is there (transpose_v_matrix): ldmatrix.trans
    (LDSM.16.MT88.4), the two byte permutes that put each column's keys in P's order (PRMT
    0x6420 / 0x7531), stmatrix (STSM.16.M88.4), and a proxy fence (FENCE.VIEW.ASYNC.S) after
    the last store, before the consumers' wgmma may read V^T;
  - a policy's kernels are its uniform ones, its long causal ones (LongCausal<Policy>) and, where it
    has them, its short ones (ShortSeq<Policy, causal>, 16-bit, both masks: SHORT_VARIANTS);
  - Q, K and V arrive by bulk tensor copies (UTMALDG.4D);
  - local memory (LDL / STL) in the family default (and in `ws_realloc` and `one_per_tile`, that
    policy without its short kernels): none, except in the causal head-dim-64
    kernels (three consumers at 160 registers each, the most the SM's file allows beside a
    24-register producer: a few words, at most SMALL_SPILL instructions), fp8's and those at
    head dim 128 without the mask that hold two key-tile loops (`one_per_tile`'s: none in the
    main loop, at most SMALL_SPILL around it: the long causal kernel keeps a few words there).
    `ws_even_regs` spills (consumers left at the launch's 168 registers; ptxas also serializes
    their wgmma): the experiment's finding, checked as such. The other variants may spill a little
    (the persistent loop's state at head dim 64, for one), at most VARIANT_SPILL instructions,
    so that a change that spills more fails here; the short kernels (ShortSeq<Policy, causal>: the
    persistent loop holds the tile's coordinates, and the dynamic schedule's the tile ids, across tiles), the family default's
    included, at most SHORT_SPILL;
  - the ragged kernels hold a tile's sequence start and length across the main loop, in local
    memory where the registers run out: in the family default's kernels of one CTA per tile at
    head dim 128, none of it between the first and the last warpgroup MMA (the main loop), at
    most RAGGED_SPILL in all; at head dim 64, at most RAGGED_D64_SPILL; the other variants and
    the short kernels at most RAGGED_VARIANT_SPILL;
  - register reallocation: the warp-specialized variants with setmaxnreg give the producer
    24 registers and the consumers their named budget (240 with two consumer warpgroups at
    head dim 128, 160 with three at 64), fp8 too (the matrix transpose fits the producer's
    24); the even split and the variant without a producer carry no USETMAXREG
    at all;
  - the family default's 16-bit key-tile loops keep their wgmma descriptors in uniform
    registers: at most LOOP_R2UR R2UR moves in the loop (the ragged short kernels apart);
  - the family default's 16-bit kernels under the mask with 128-key tiles on one P buffer run the
    last key tile narrow (m64n64 S) where its rows see no more of it, the others never;
  - the family default packs P (F2FP) among the exponentials (MUFU.EX2) where it holds P in two
    register buffers or waits for O += P V in the exponentials' block (pv_wait_from_keys), and
    after the last exponential elsewhere (the short non-causal kernel at head dim 128: one loop
    of each, pv_wait_from_keys);
  - the family default writes O through its warps' staging rows (stmatrix; fp8's paired columns
    8-byte shared stores), then 16-byte stores: head dim / 16 of them a kernel, one per four rows
    of a 64-column segment (the kernels that split their last wave add a piece's slot, head dim / 8
    + 1 float4 stores, and one 4-byte store, the count's reset);
  - ping-pong: the consumers hand turns over through named barriers of two warpgroups
    (BAR.SYNC / BAR.ARV with 256 threads); the free-running baseline has neither, only the
    CTA-wide barrier 0 of the set-up.
Run: python3 -m pytest -q kernels/hopper_prefill/tests
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

EXPERIMENTS = ("prefill_pingpong", "prefill_warp_specialization", "prefill_intra_overlap", "prefill_persistent",
               "prefill_kv_rings")
FAMILY, DEFAULT = "hopper_prefill", "default"  # the family default's kernels, as the pair (FAMILY, DEFAULT)
FAMILY_SOURCES = {FAMILY: "kernels/hopper_prefill/hopper_prefill.cu"}
# The experiment variants that are the family default (aliases of kernels::HopperPrefillPolicy):
# their kernels are the family library's.
DEFAULT_ALIASES = {("prefill_pingpong", "pingpong"), ("prefill_intra_overlap", "overlapped"),
                   ("prefill_kv_rings", "separate")}
PRODUCER_REGS = 24
FP8 = 3  # DType::fp8_e4m3 in the mangled name
FP8_PRODUCER_REGS, FP8_CONSUMER_REGS = 24, 240  # kernels/hopper_prefill/hopper_policy.hpp (the matrix transpose)
FP8_REFUSED = {"no_ws"}  # no producer warpgroup to transpose V
SMALL_SPILL = 16  # LDL / STL instructions allowed in the causal head-dim-64 kernels
VARIANT_SPILL = 56  # ... and in the variants that are not the family default (outside their main loops)
DEFAULT_VARIANTS = {DEFAULT, "ws_realloc", "one_per_tile"}
RAGGED_SPILL, RAGGED_D64_SPILL, RAGGED_VARIANT_SPILL = 16, 32, 128
SHORT_SPILL = 72  # the short kernels (two tile ids and the tile's coordinates across tiles): 58 the most seen
CONSUMER_REGS = {128: 240, 64: 160}  # the default tile shapes (kernels/hopper_prefill/hopper_policy.hpp)
# The policies with a long causal kernel (kLongCausalFromKeys and a non-causal key tile that
# differs from the causal one): every variant but persistent_3stages, whose tile is the causal one.
LONG_CAUSAL_VARIANTS = {
    FAMILY: {DEFAULT},
    "prefill_pingpong": {"free_running"},
    "prefill_warp_specialization": {"ws_realloc", "ws_even_regs", "no_ws"},
    "prefill_intra_overlap": {"serial", "serial_free_running"},
    "prefill_persistent": {"one_per_tile", "persistent", "persistent_dynamic"},
    "prefill_kv_rings": {"union_slot", "union_4slots"},
}


@pytest.fixture(scope="session")
def sass(tmp_path_factory) -> dict[str, dict[str, list[str]]]:
    """{experiment: {mangled kernel: [instruction]}}."""
    texts = resource_report.sm90_sass_texts(ROOT, EXPERIMENTS, tmp_path_factory.mktemp("hopper_isa"), FAMILY_SOURCES)
    if not texts:
        pytest.skip("nvcc and cuobjdump not found: no sm_90a SASS")
    return {e: isa.sass_functions(t) for e, t in texts.items()}


LONG_CAUSAL = 2  # the key of a policy's long causal kernel (LongCausal<Policy>): causal, the non-causal key tile
# The keys of a policy's short kernels (ShortSeq<Policy, causal>: persistent CTAs, 16-bit at both
# masks, fp8 without the mask): SHORT + causal.
SHORT = 3
# The policies with short kernels (short_keys, a producer warpgroup and one CTA per tile
# as their schedule): not prefill_persistent's (the schedule is its question), nor
# prefill_warp_specialization's (no_ws has no producer to fetch tile ids, so none of its variants does).
SHORT_VARIANTS = {
    FAMILY: {DEFAULT},
    "prefill_pingpong": {"free_running"},
    "prefill_warp_specialization": set(),
    "prefill_intra_overlap": {"serial", "serial_free_running"},
    "prefill_persistent": set(),
    "prefill_kv_rings": {"union_slot", "union_4slots"},
}


def _causal(key_causal: int) -> bool:
    """Whether a kernel key's mask (causal, LONG_CAUSAL, SHORT + causal) is causal."""
    return key_causal == 1 or key_causal == LONG_CAUSAL or key_causal == SHORT + 1


KINDS = ("hopper_prefill_kernel", "hopper_ragged_prefill_kernel")  # uniform and ragged batches: one of each


def _resolve(experiment: str, variant: str) -> tuple[str, str]:
    """Where a variant's kernels are: the family default's for its aliases, its experiment's otherwise."""
    return (FAMILY, DEFAULT) if (experiment, variant) in DEFAULT_ALIASES else (experiment, variant)


def _kernel_name(experiment: str, variant: str, kind: str = KINDS[0]) -> re.Pattern[str]:
    """A policy's kernel names of one kind: groups (LongCausal, dtype, head_dim, causal, dynamic shared bytes)."""
    experiment, variant = _resolve(experiment, variant)
    policy = ("NS0_19HopperPrefillPolicyE" if experiment == FAMILY
              else rf"NS_11experiments\d+{experiment}{len(variant)}{variant}E")
    return re.compile(rf"\d{kind}I(NS0_10LongCausalI|NS0_8ShortSeqI)?{policy}"
                      rf"(?:(?:Lb[01]E)?EE)?LNS_5DTypeE(\d)ELi(\d+)ELb(\d)ENS_3gpu11DynamicSmemILm(\d+)E")


def _kernels(sass: dict[str, dict[str, list[str]]], experiment: str, variant: str,
             kind: str = KINDS[0]) -> dict[tuple[int, int, int], list[str]]:
    """{(dtype, head_dim, causal): instructions} of one policy's instantiations of one kernel kind;
    its long causal kernels (LongCausal<Policy>, 16-bit and fp8 at head dim 128) have causal = LONG_CAUSAL,
    its short ones (ShortSeq<Policy, causal>) SHORT + causal."""
    pattern = _kernel_name(experiment, variant, kind)
    experiment, variant = _resolve(experiment, variant)
    functions = sass[experiment]
    found = {}
    for name, body in functions.items():
        if m := pattern.search(name):
            dtype, dim, causal = (int(g) for g in m.groups()[1:4])
            wrapper = m.group(1) or ""
            found[(dtype, dim, LONG_CAUSAL if "LongCausal" in wrapper else SHORT + causal if wrapper else causal)] = body
    runs_fp8 = variant not in FP8_REFUSED
    short = variant in SHORT_VARIANTS[experiment]
    # A policy with short kernels runs fp8 under the mask on Fp8MeetCausal (_fp8_meet_kernels), and
    # without the mask on Fp8Meet's short kernel as far as its own fp8 tile's would go: none of the
    # three is counted here.
    meet = short and runs_fp8
    expected = ((10 if runs_fp8 else 8) - int(meet) + (2 if variant in LONG_CAUSAL_VARIANTS[experiment] else 0)
                + int(runs_fp8 and not meet) + (8 if short else 0))
    assert len(found) == expected, (f"{experiment}/{variant} {kind}: {len(found)} instantiations, expected {expected} "
                                    "(2 dtypes x 2 dims x 2 masks, fp8 at head dim 128 x 2 masks and its long causal "
                                    "kernel where it runs, the long causal kernel of both 16-bit dtypes where the "
                                    "policy has one, and 2 dtypes x 2 dims x 2 masks of short kernels where it has them; "
                                    "fp8 under the mask on Fp8MeetCausal instead where it has them)")
    return found


def _policies(sass) -> list[tuple[str, str]]:
    """(experiment, variant) of every policy with kernels of its own: the family default as
    (FAMILY, DEFAULT), then each experiment's other variants, as their kernel names spell them."""
    pairs = {(FAMILY, DEFAULT)}
    for experiment in EXPERIMENTS:
        for name in sass[experiment]:
            if m := re.search(rf"{experiment}(\d+)(\w+?)ELNS_5DTypeE", name):
                pairs.add((experiment, m.group(2)[: int(m.group(1))]))
    return sorted(pairs)


def _count(body: list[str], pattern: str) -> int:
    return sum(1 for ins in body if re.search(pattern, ins))


@pytest.mark.parametrize("kind", KINDS)
def test_every_kernel_uses_warpgroup_mma_and_bulk_copies_and_no_local_memory(sass, kind):
    for experiment, variant in _policies(sass):
        for (dtype, head_dim, causal), body in _kernels(sass, experiment, variant, kind).items():
                where = f"{experiment}/{variant} {kind} {(dtype, head_dim, causal)}"
                if dtype == FP8:
                    assert _count(body, r"\bQGMMA\.64x\d+x32\.F32\.E4M3\.E4M3") > 0, f"{where}: no e4m3 QGMMA"
                    assert _count(body, r"\bHGMMA\.") == 0, f"{where}: 16-bit HGMMA in the fp8 kernel"
                else:
                    assert _count(body, r"\bHGMMA\.64x\d+x16\.F32") > 0, f"{where}: no HGMMA"
                assert _count(body, r"\bHMMA\.") == 0, f"{where}: mma.sync (HMMA) in a wgmma kernel"
                assert _count(body, r"\bUTMALDG\.4D") > 0, f"{where}: no bulk tensor copy"
                local = _count(body, r"\b(LDL|STL)(\.|\s)")
                if kind == KINDS[1] and variant != "ws_even_regs":
                    _check_ragged_local(where, variant, head_dim, causal, body)
                elif variant == "ws_even_regs":
                    assert local > 0, f"{where}: expected the even split to spill"
                elif causal >= SHORT:
                    assert local <= SHORT_SPILL, f"{where}: {local} LDL/STL"
                elif variant not in DEFAULT_VARIANTS:
                    assert local <= VARIANT_SPILL, f"{where}: {local} LDL/STL"
                elif head_dim == 64 and _causal(causal):
                    assert local <= SMALL_SPILL, f"{where}: {local} LDL/STL"
                elif dtype == FP8 or (head_dim == 128 and causal == 0 and variant not in SHORT_VARIANTS[experiment]):
                    # fp8; and 16-bit without the mask where no short kernel takes the shorter
                    # launches, so the kernel holds both key-tile loops (pv_wait_from_keys): a
                    # few words around the loops, none inside.
                    mma = [n for n, i in enumerate(body) if re.search(r"\b[HQ]GMMA\.", i)]
                    in_loop = _count(body[mma[0]:mma[-1]], r"\b(LDL|STL)(\.|\s)")
                    assert in_loop == 0 and local <= SMALL_SPILL, f"{where}: {in_loop} LDL/STL in the main loop, {local} in all"
                else:
                    assert local == 0, f"{where}: local memory (spills), {local} LDL/STL"


def _check_ragged_local(where: str, variant: str, head_dim: int, causal: int, body: list[str]) -> None:
    local = _count(body, r"\b(LDL|STL)(\.|\s)")
    if variant not in DEFAULT_VARIANTS or causal >= SHORT:
        assert local <= RAGGED_VARIANT_SPILL, f"{where}: {local} LDL/STL"
    elif head_dim == 64:
        assert local <= RAGGED_D64_SPILL, f"{where}: {local} LDL/STL"
    else:
        mma = [n for n, i in enumerate(body) if re.search(r"\b[HQ]GMMA\.", i)]
        in_loop = _count(body[mma[0]:mma[-1]], r"\b(LDL|STL)(\.|\s)")
        assert in_loop == 0 and local <= RAGGED_SPILL, f"{where}: {in_loop} LDL/STL in the main loop, {local} in all"


@pytest.mark.parametrize("kind", KINDS)
def test_fp8_kernels_transpose_v_in_the_producer(sass, kind):
    for experiment, variant in _policies(sass):
        for (dtype, head_dim, causal), body in _kernels(sass, experiment, variant, kind).items():
                if dtype != FP8:
                    continue
                where = f"{experiment}/{variant} {kind} causal={causal}"
                assert _count(body, r"\bLDSM\.16\.MT88\.4\b") > 0, f"{where}: no ldmatrix.trans of V"
                for selector in ("0x6420", "0x7531"):  # column 2g's and 2g + 1's keys in P's order
                    assert _count(body, rf"^PRMT R\d+, R\d+(\.reuse)?, {selector}, R\d+") > 0, f"{where}: no PRMT {selector}"
                stores = [n for n, i in enumerate(body) if re.search(r"\bSTSM\.16\.M88\.4\b", i)]
                fences = [n for n, i in enumerate(body) if "FENCE.VIEW.ASYNC.S" in i]
                assert stores, f"{where}: no stmatrix of V^T"
                assert any(f > stores[-1] for f in fences), f"{where}: no proxy fence after the V^T stores"


EXP_MEET_BARRIER = "0x6"  # kernels/hopper_prefill/hopper_config.cuh, kExpMeetBarrier


def _fp8_meet_kernels(sass, kind: str) -> dict[tuple[str, str, bool], list[str]]:
    """{(experiment, variant, causal): instructions} of the fp8 kernels on cuDNN's loop: without the
    mask the short one (ShortSeq<Fp8Meet<Policy>, false>), under it Fp8MeetCausal<Policy>, one of
    each per policy with short kernels that runs fp8."""
    found = {}
    for experiment, variants in SHORT_VARIANTS.items():
        for variant in variants:
            if variant in FP8_REFUSED:
                continue
            policy = ("NS0_19HopperPrefillPolicyE" if experiment == FAMILY
                      else rf"NS_11experiments\d+{experiment}{len(variant)}{variant}E")
            for causal, name in ((False, rf"NS0_8ShortSeqINS0_7Fp8MeetI{policy}EELb0EEELNS_5DTypeE3ELi128ELb0E"),
                                 (True, rf"NS0_13Fp8MeetCausalI{policy}EELNS_5DTypeE3ELi128ELb1E")):
                pattern = re.compile(rf"\d{kind}I{name}")
                bodies = [body for n, body in sass[experiment].items() if pattern.search(n)]
                assert len(bodies) == 1, (f"{experiment}/{variant} {kind} causal={causal}: {len(bodies)} kernels on "
                                          "cuDNN's fp8 loop, expected 1")
                found[(experiment, variant, causal)] = bodies[0]
    return found


@pytest.mark.parametrize("kind", KINDS)
def test_fp8_meet_kernels_alternate_the_consumers_exponentials(sass, kind):
    """Fp8Meet: S from one m64n256 QGMMA chain, no ping-pong turns, and the two consumers'
    meeting on kExpMeetBarrier (consumer 1's BAR.SYNC, consumer 0's BAR.ARV of 256 threads) on
    each side of a key tile's exp2s: none of them hoisted above consumer 1's wait (at most the two
    exp2s of the rescale factor ahead of it), all ahead of consumer 0's arrival; P packed among
    them. V transposed in the producer, and under the mask (Fp8MeetCausal) the tiles drawn from the
    counter (an atomic add: the copying thread's draw). Without the mask on a batch of one length
    the last wave is split (kSplitTailFill): the pieces count themselves in with an atomic add, a
    piece's warp stores its slot (head dim / 8 + 1 float4s of 32 lanes), and whole tiles run a
    body of their own (Config::kSplitWholeApart), so O's 16-byte stores come twice. Under the
    mask the last key tile also runs narrow (kNarrowLastTile): S from m64n64, m64n128 and m64n192
    QGMMAs too, each with its meeting around as many exp2s as its width's scores (P packed after
    them there)."""
    for (experiment, variant, causal), body in _fp8_meet_kernels(sass, kind).items():
        where = f"{experiment}/{variant} {kind} Fp8Meet causal={causal}"
        assert _count(body, r"\bQGMMA\.64x256x32\.F32\.E4M3\.E4M3") > 0, f"{where}: no m64n256 QGMMA"
        assert _count(body, r"\bLDSM\.16\.MT88\.4\b") > 0, f"{where}: no ldmatrix.trans of V"
        draws = _count(body, r"\bATOMG\.E\.ADD\b")
        split = not causal and kind == KINDS[0]
        assert draws == int(causal or split), (
            f"{where}: {draws} atomic adds (the dynamic schedule's draw, the split pieces' count), expected {int(causal or split)}")
        if split:
            wide = _count(body, r"\bSTG\.E\.128\s")
            expected = 2 * (128 // 16) + 128 // 8 + 1
            assert wide == expected, f"{where}: {wide} 16-byte stores, expected {expected} (O in two bodies, a piece's slot)"
        assert _count(body, r"\bBAR\.\S+ R\d+, 0x100") == 0, f"{where}: a ping-pong turn (a barrier by register)"
        meets = [n for n, i in enumerate(body) if re.search(rf"\bBAR\.(SYNC|ARV)\S* {EXP_MEET_BARRIER}, 0x100\b", i)]
        assert len(meets) >= 2 and len(meets) % 2 == 0, f"{where}: {len(meets)} meetings (barriers of 256 threads)"
        # S's GEMMs by width (the N of QGMMA.64xNx32): the key tile's, and under the mask the
        # narrow last tile's.
        qk = {n: int(m.group(1)) for n, i in enumerate(body) if (m := re.search(r"\bQGMMA\.64x(\d+)x32\.\S+ R\d+, gdesc\[", i))}
        widths = {n in qk.values() for n in (64, 128, 192)}
        assert widths == {causal}, f"{where}: narrow last key tiles (m64n64/128/192 QGMMA) {widths}, expected {causal}"
        # The last tile's code under the mask, laid out after the key-tile loop from its first
        # narrow S.
        tail = min((n for n, width in qk.items() if width < 256), default=len(body))
        done = 0  # the previous meeting after the exp2s: each mask branch holds its own pair
        for before, after in zip(meets[::2], meets[1::2]):
            start = max([n for n in qk if n < before] + [done])
            width = qk[max(n for n in qk if n < before)]  # S's keys: the exp2s a row's lanes take, a thread's half
            done = after
            ahead = _count(body[start:before], r"\bMUFU\.EX2\b")
            between = _count(body[before:after], r"\bMUFU\.EX2\b")
            assert ahead <= 2 and between >= width // 2, f"{where}: {ahead} exp2s ahead of the meeting, {between} between"
            # kMeetPackInBlock: P's converts among the exp2s (a MUFU.EX2 within the three
            # instructions after most F2FPs), not in one run after O's rescale branch; in the
            # key-tile loop (the last tile's code, once a tile, packs after its exp2s).
            if before > tail:
                continue
            window = body[start:after]
            packs = [i for i, ins in enumerate(window) if re.search(r"\bF2FP\.", ins)]
            among = sum(1 for i in packs if any("MUFU.EX2" in ins for ins in window[i + 1:i + 4]))
            assert len(packs) >= width // 8 and 2 * among >= len(packs), \
                f"{where}: {among} of {len(packs)} packs among the exp2s of a key tile"
        assert _count(body, r"\b(LDL|STL)(\.|\s)") <= (SHORT_SPILL if kind == KINDS[0] else RAGGED_VARIANT_SPILL), where


@pytest.mark.parametrize("kind", KINDS)
def test_o_leaves_through_staging_rows_in_16_byte_stores(sass, kind):
    # kStagedOutput: the warp's staging rows filled by stmatrix (fp8's paired columns: 8-byte
    # shared stores), then whole 16-byte global stores; none of the accumulators' 4- or 8-byte ones.
    for (dtype, head_dim, causal), body in _kernels(sass, FAMILY, DEFAULT, kind).items():
        where = f"{kind} {(dtype, head_dim, causal)}"
        wide, narrow, paired = (_count(body, rf"\bSTG\.E{width}\s") for width in (r"\.128", "", r"\.64"))
        if dtype == FP8:
            assert _count(body, r"\bSTS\.64\b") >= head_dim // 8, f"{where}: O's paired columns not staged"
        else:
            assert _count(body, r"\bSTSM\.16\.M88\.4\b") >= head_dim // 16, f"{where}: O not staged with stmatrix"
        # The 16-bit short kernels without the mask on a batch of one length split their last wave
        # (kSplitTailFill): a split piece's warp also stores its rows' O, max and sum to its slot,
        # a float4 of 32 lanes at a time, and the last piece zeroes its count (hopper_split.cuh).
        split = dtype != FP8 and causal == SHORT and kind == KINDS[0]
        expected = head_dim // 16 + (head_dim // 8 + 1 if split else 0)
        assert wide == expected and narrow == int(split) and paired == 0, (
            f"{where}: {wide} 16-byte stores (expected {expected}), {narrow} 4-byte, {paired} 8-byte")


def test_register_reallocation_only_where_the_policy_asks(sass):
    for (dtype, head_dim, causal), body in _kernels(sass, "prefill_warp_specialization", "ws_realloc").items():
        dealloc = [i for i in body if i.startswith("USETMAXREG.DEALLOC")]
        alloc = [i for i in body if i.startswith("USETMAXREG.TRY_ALLOC")]
        producer = FP8_PRODUCER_REGS if dtype == FP8 else PRODUCER_REGS
        consumer = FP8_CONSUMER_REGS if dtype == FP8 else CONSUMER_REGS[head_dim]
        assert dealloc and all(i.endswith(hex(producer)) for i in dealloc), (dtype, dealloc)
        assert alloc and all(i.endswith(hex(consumer)) for i in alloc), (dtype, head_dim, alloc)
    for variant in ("ws_even_regs", "no_ws"):
        for key, body in _kernels(sass, "prefill_warp_specialization", variant).items():
            assert _count(body, r"USETMAXREG") == 0, f"{variant} {key}: setmaxnreg present"


@pytest.mark.parametrize("kind", KINDS)
def test_pingpong_hands_turns_through_named_barriers(sass, kind):
    for key, body in _kernels(sass, "prefill_pingpong", "pingpong", kind).items():
        assert _count(body, r"^BAR\.SYNC\S* R\d+, 0x100") > 0, f"pingpong {key}: no turn sync"
        assert _count(body, r"^(@!?P\d )?BAR\.ARV R\d+, 0x100") > 0, f"pingpong {key}: no turn hand-over"
    for key, body in _kernels(sass, "prefill_pingpong", "free_running", kind).items():
        assert _count(body, r"BAR\.ARV") == 0, f"free_running {key}: BAR.ARV present"
        syncs = [i for i in body if "BAR.SYNC" in i]
        assert syncs and all(re.search(r"BAR\.SYNC\S* 0x0$", i) for i in syncs), f"free_running {key}: {syncs}"


# R2UR moves allowed in the key-tile loop of the family default's 16-bit kernels. Its wgmma
# descriptors live in uniform registers (0 to 8 moves seen); when ptxas takes the loop for
# possibly divergent it builds them on the vector ALU and moves each over (24 to 48 seen: the
# persistent loops after a per-lane mbarrier wait in Consumer::pass_tiles, and the ragged short
# kernels, which still do and are left out below).
LOOP_R2UR = 12


# A key tile's two GEMMs in SASS: S = Q K^T reads both operands from shared memory (A is a
# descriptor), O += P V reads P from registers.
_QK_MMA = re.compile(r"\b[HQ]GMMA\.\S+ R\d+, gdesc\[")
_PV_MMA = re.compile(r"\b[HQ]GMMA\.\S+ R\d+, R\d+, gdesc\[")


def _key_tile_loops(body: list[str]) -> list[list[str]]:
    """Each loop that holds both GEMMs of a key tile and no other such loop (_key_tile_loop's
    kind, where a kernel has more than one)."""
    spans = [a for a in isa.sass_loops(body)
             if any(_QK_MMA.search(body[j]) for j in a) and any(_PV_MMA.search(body[j]) for j in a)]
    inner = [a for a in spans if not any(b != a and b.start >= a.start and b.stop <= a.stop for b in spans)]
    return [[body[i] for i in a] for a in inner]


def _key_tile_loop(body: list[str]) -> list[str]:
    """The shortest loop that holds both GEMMs of a key tile (the unmasked key tiles' steady
    state; isa.sass_loops). Both GEMMs, not any warpgroup MMA: with the key-tile loop unrolled by
    two (HopperTile::p_buffers) the shortest address range around a MMA was the last tile's PV
    and the next tile's draw, which ptxas laid out after the loop and which holds the draw's
    divisions."""
    return min(_key_tile_loops(body), key=len, default=[])


@pytest.mark.parametrize("kind", KINDS)
def test_key_tile_loops_keep_wgmma_descriptors_in_uniform_registers(sass, kind):
    for key, body in _kernels(sass, "prefill_pingpong", "pingpong", kind).items():
        if key[0] == FP8 or (kind == KINDS[1] and key[2] >= SHORT):
            continue
        loop = _key_tile_loop(body)
        assert loop, f"pingpong {kind} {key}: no loop around the warpgroup MMAs"
        moves = _count(loop, r"^(@!?U?P\w+ )?R2UR\b")
        assert moves <= LOOP_R2UR, f"pingpong {kind} {key}: {moves} R2UR in the key-tile loop (descriptors on the vector ALU)"


# Where the family default packs P among the exponentials: with two P buffers (fp8's 192-key
# tile, and the short causal kernels at head dim 128) and with one where the PV wait is in the
# exponentials' block (pv_wait_from_keys; at head dim 64 tied behind an exponential,
# pv_wait_behind_exp). The short kernel at head dim 64 without the mask packs among them in
# both its loops (mask_loops: the open key tiles', the masked ones'); its kernel of one CTA a tile
# waits after the softmax and packs in a run after the last exponential. At head dim 128
# without the mask (pv_wait_from_keys) the short kernel holds both kinds of loop: the wait in the
# block for tiles of many keys, after it for the others; the kernel of one CTA a tile, which runs
# only launches longer than the short kernel's, the first alone.
def _packs_among_exponentials(dtype: int, head_dim: int, causal: int) -> set[bool]:
    """Whether the packs of each key-tile loop run among the exponentials, as a set over the loops."""
    if dtype != FP8 and head_dim == 128 and causal == SHORT:
        return {True, False}
    if dtype != FP8 and head_dim == 64 and causal == 0:
        return {False}
    return {True}


def _mask_loops(dtype: int, head_dim: int, causal: int) -> bool:
    """Whether the family default splits the kernel's key-tile loop by the mask (mask_loops: the
    short kernel at head dim 64 without the mask, kShortOpenLoops)."""
    return dtype != FP8 and head_dim == 64 and causal == SHORT


@pytest.mark.parametrize("kind", KINDS)
def test_p_is_packed_among_the_exponentials_where_the_policy_says(sass, kind):
    for key, body in _kernels(sass, "prefill_pingpong", "pingpong", kind).items():
        expected = _packs_among_exponentials(*key)
        loops = _key_tile_loops(body) if len(expected) > 1 or _mask_loops(*key) else [_key_tile_loop(body)]
        found = set()
        for loop in loops:
            packs = [i for i, ins in enumerate(loop) if re.search(r"\bF2FP\.", ins)]
            # A pack among the exponentials: a MUFU.EX2 within the three instructions after it.
            among = sum(1 for i in packs if any("MUFU.EX2" in ins for ins in loop[i + 1:i + 4]))
            assert packs, f"pingpong {kind} {key}: no F2FP in a key-tile loop"
            assert 2 * among >= len(packs) or among == 0, f"pingpong {kind} {key}: {among} of {len(packs)} packs among the exp2s"
            found.add(among > 0)
        assert found == expected, f"pingpong {kind} {key}: loops with packs among the exp2s {found}, expected {expected}"


# The family default's 16-bit kernels whose last key tile runs narrow under the mask
# (kNarrowLastTile): 128-key tiles on one P buffer, their PV wait in the exponentials' block; not
# the short causal kernels at head dim 128 (two P buffers) nor the long causal ones (176 keys).
def _narrow_last_16bit(head_dim: int, causal: int) -> bool:
    return causal == 1 or (causal == SHORT + 1 and head_dim == 64)


@pytest.mark.parametrize("kind", KINDS)
def test_16bit_causal_kernels_run_their_last_key_tile_narrow(sass, kind):
    """Under the mask S of the last key tile from an m64n64 GEMM of shared operands (HGMMA
    64x64x16 with gdesc as A; at head dim 64 O += P V is 64x64 too, but P comes from registers),
    beside the whole tile's m64n128, where the policy says (_narrow_last_16bit); nowhere else."""
    for (dtype, head_dim, causal), body in _kernels(sass, "prefill_pingpong", "pingpong", kind).items():
        if dtype == FP8:
            continue
        where = f"pingpong {kind} {(dtype, head_dim, causal)}"
        narrow = _count(body, r"\bHGMMA\.64x64x16\.F32(\.BF16)? R\d+, gdesc\[")
        whole = _count(body, r"\bHGMMA\.64x(128|176)x16\.F32(\.BF16)? R\d+, gdesc\[")
        expected = _narrow_last_16bit(head_dim, causal)
        assert whole > 0 and (narrow > 0) == expected, f"{where}: {narrow} narrow S GEMMs, {whole} whole (narrow expected: {expected})"


@pytest.mark.parametrize("kind", KINDS)
def test_head_dim_64_without_the_mask_runs_its_open_key_tiles_on_a_loop_without_the_mask(sass, kind):
    # mask_loops: the open key tiles' loop holds no per-key select of the mask (a few FSEL of the
    # row maxima's guards), the masked tiles' loop one a score at least (64 a thread).
    checked = 0
    for key, body in _kernels(sass, "prefill_pingpong", "pingpong", kind).items():
        if not _mask_loops(*key):
            continue
        selects = sorted(_count(loop, r"\bFSEL\b") for loop in _key_tile_loops(body))
        assert len(selects) >= 2, f"pingpong {kind} {key}: {len(selects)} key-tile loop(s), expected the open and the masked"
        assert selects[0] < 8 and selects[-1] >= 64, f"pingpong {kind} {key}: FSEL a loop {selects}"
        checked += 1
    assert checked, f"pingpong {kind}: no kernel of head dim 64 without the mask"


def _launch_smem(sass: dict[str, dict[str, list[str]]], experiment: str, variant: str) -> dict[tuple[str, str, str], int]:
    """{(long causal or short wrapper, dtype, head_dim, causal): dynamic shared memory bytes} of one policy's kernels."""
    pattern = _kernel_name(experiment, variant)
    functions = sass[_resolve(experiment, variant)[0]]
    return {(m.group(1) or "", *m.groups()[1:4]): int(m.group(5)) for name in functions if (m := pattern.search(name))}


def test_kv_union_drops_the_v_ring_and_waits_for_each_slots_other_tenant(sass):
    # union_slot: V(j) lands in K(j)'s slot, so the V ring is gone (less shared memory at every
    # shape), and each copy also waits on the other ring's empty barrier (more mbarrier waits).
    separate, union = (_launch_smem(sass, "prefill_kv_rings", v) for v in ("separate", "union_slot"))
    assert separate.keys() == union.keys() and separate
    for key in separate:
        assert union[key] < separate[key], f"{key}: union {union[key]} B, separate {separate[key]} B"
    # The short kernels (the dynamic schedule's persistent loop) are left out of the wait count:
    # ptxas lays that loop out differently for the two, and union_slot's came out with fewer.
    waits = {v: _kernels(sass, "prefill_kv_rings", v) for v in ("separate", "union_slot")}
    for key, body in waits["union_slot"].items():
        if key[2] >= SHORT:
            continue
        n_union, n_separate = (_count(b, r"SYNCS\.PHASECHK") for b in (body, waits["separate"][key]))
        assert n_union > n_separate, f"union_slot {key}: {n_union} mbarrier waits, separate {n_separate}"
