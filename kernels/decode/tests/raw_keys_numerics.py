"""A numerical model of fp8 decode's S = Q K^T on the raw e4m3 K tiles (GroupSmem::kRawKeys).

The kernel (kernels/decode/decode_warpgroup.cuh: store_q_split, group_qk_raw_keys) scales each bf16
query row by a power of two s that takes its largest magnitude to [128, 256), splits it into
e4m3 parts hi = e4m3(q s) and lo = e4m3(q s - hi), and issues one e4m3 QGMMA.64x64x32 per part
and k32 step into one f32 accumulator; the softmax multiplies by 1 / s. The variants that
convert K to f16 first compute S as an f16 HGMMA with f32 accumulation.

What the model shows (run this file for the table; test_raw_keys_numerics.py asserts it):
  - The split is not what loses precision. With exact accumulation, hi + lo gives the same
    row errors as the f16 path: lo reaches e4m3's subnormals only where q s < 2^-2, and there
    its error of at most 2^-10 is 2^-17 of the row's largest element.
  - The accumulator is. Hopper's e4m3 tensor-core MMA aligns the products and the incoming
    accumulator to the largest exponent among them and keeps 13 fraction bits below it,
    truncated toward zero (DeepSeek-V3 technical report, arXiv:2412.19437, section 3.5.2;
    SageAttention2, arXiv:2411.10958: an f32 accumulator passed through zero products comes
    back with its low 10 mantissa bits cleared). Issued after hi's step into the same
    accumulator, lo's products (2^-4 of hi's or less) lose their low bits to the running sum's
    alignment, 32 of them a step: most of S's error. The model puts the worst row at about 2.6
    times the f16 path's, the sweep measured 2.8, and the f16 path's own worst and median
    match the sweep's. The sweep also picks the model's two free constants: 12 kept bits, or
    truncation toward minus infinity, put rows past the gate on a few sequences where the sweep
    saw none in 200 seeds; 14 bits leave too little excess.
  - Issuing lo's four steps first, while the accumulator holds only lo's small partial sums,
    keeps lo's products whole; hi's four steps then truncate the sum three times (its first
    step adds the small lo sum to hi's products). The same eight QGMMAs, registers and
    instructions; the worst row's excess over the f16 path falls to about a quarter. Hi and lo
    in accumulators of their own do no better; a second accumulator for two of hi's steps
    (low_first_split_high) closes the rest for 32 registers and an add per score. A third part
    adds four QGMMAs and nothing else (two parts are exact here); a different per-row scale
    target moves S only where lo is subnormal and leaves the row errors as they are.

Inputs follow the seed sweep (kernels/tests/seed_sweep_decode.cpp, kernels/decode/decode_case.hpp):
Q, K, V standard normal, Q bf16, K and V e4m3 (RNE, saturating), per-KV-head k and v scales in
[0.5, 2), softmax scale 1 / sqrt(d), d = 128, MQA; drawn with numpy's generator, not the
harness's, so the model matches the sweep's distributions, not its seeds. The kernel side:
scores times the f32 log2 scale, f32 exp2 against the row's max, P rounded to f16 for P V (V
e4m3, exact in f16), f32 row sums, O / l times v_scale rounded to bf16. The reference is float64
on the same stored values; the error is the relative row error ||o - r|| / ||r|| of the gate.

Run: python3 kernels/decode/tests/raw_keys_numerics.py [--seeds N] [--long-seeds N]
(at the defaults about half an hour on one core: most of it the 20000-key sequences)
"""
from __future__ import annotations

import argparse

import numpy as np

HEAD_DIM = 128
LOG2E = 1.4426950408889634
ROW_GATE = 0.008  # bf16 compute type's per-row bound (common/harness accuracy rule)
MMA_K = 32  # an e4m3 wgmma's k step
ACC_FRAC_BITS = 13  # bits the e4m3 MMA keeps below its largest aligned exponent
HI, LO, THIRD = 0, 1, 2  # Q's parts


def floor_log2(x: np.ndarray) -> np.ndarray:
    """floor(log2 |x|) of each value; zeros give a very small exponent."""
    x = np.asarray(x, np.float64)
    _, e = np.frexp(x)
    return np.where(x == 0, -1000, e - 1)


def round_to(x, fraction_bits: int, min_exp: int, max_value: float | None = None) -> np.ndarray:
    """Round to nearest even in a binary format with fraction_bits, normals from 2^min_exp
    (subnormals below on the grid 2^(min_exp - fraction_bits)), saturating at max_value."""
    x = np.asarray(x, np.float64)
    step = np.ldexp(1.0, np.maximum(floor_log2(x), min_exp) - fraction_bits)
    r = np.round(x / step) * step  # numpy rounds halves to even
    return r if max_value is None else np.clip(r, -max_value, max_value)


def e4m3(x):  # cvt.rn.satfinite.e4m3x2.f32
    return round_to(x, 3, -6, 448.0)


def bf16(x):
    return round_to(x, 7, -126)


def f16(x):
    return round_to(x, 10, -14, 65504.0)


def f32(x):
    return np.asarray(x, np.float32).astype(np.float64)


def _exponent_f32(x: np.ndarray) -> np.ndarray:
    """floor(log2 |x|) of float32 values that are zero or normal (zeros give a very small exponent)."""
    e = ((x.view(np.int32) >> 23) & 0xFF).astype(np.int32) - 127
    return np.where(x == 0, -1000, e)


def mma_e4m3_step(c: np.ndarray, a: np.ndarray, b: np.ndarray, frac_bits: int = ACC_FRAC_BITS) -> np.ndarray:
    """One e4m3 MMA k step, d = a b^T + c, per output element: c (rows, keys) f32, a (rows, 32)
    and b (keys, 32) e4m3 values. The products are exact; they and c are aligned to the largest
    exponent among them and truncated toward zero frac_bits below it, then summed exactly."""
    a, b, c = (np.asarray(t, np.float32) for t in (a, b, c))
    p = a[:, None, :] * b[None, :, :]  # e4m3 x e4m3: 8 significant bits, exact in f32
    # An all-zero step (a zero part) has no exponent; any small one keeps its zeros.
    emax = np.maximum(np.maximum(_exponent_f32(np.abs(p).max(axis=2)), _exponent_f32(c)), -100)
    inv_step = np.ldexp(np.float32(1), frac_bits - emax).astype(np.float32)
    # Integers below 2^20 (33 terms under 2^14 each): every operation here is exact in f32.
    t = np.trunc(p * inv_step[:, :, None]).sum(axis=2) + np.trunc(c * inv_step)
    return t / inv_step


def split_q(q: np.ndarray, target_exp: int = 7, parts: int = 2):
    """store_q_split: per row s = 2^(target_exp - floor(log2 max|q|)); hi = e4m3(q s),
    lo = e4m3(q s - hi) (parts = 3: a third, e4m3 of what hi and lo leave). Returns the parts
    and each row's 1 / s."""
    se = target_exp - floor_log2(np.abs(q).max(axis=1, keepdims=True))
    rest, out = np.ldexp(q, se), []
    for _ in range(parts):
        out.append(e4m3(rest))
        rest = rest - out[-1]
    return out, np.ldexp(1.0, -se)


# An S schedule: accumulators, each a chain of (part, k32 step) QGMMAs issued in order,
# summed in f32 after the last one.
_STEPS = HEAD_DIM // MMA_K
SCHEDULES = {
    # The kernel's order before the fix: hi then lo at each k32 step, one accumulator.
    "interleaved": [[(part, kk) for kk in range(_STEPS) for part in (HI, LO)]],
    # The fix: lo's four steps, then hi's, one accumulator.
    "low_first": [[(LO, kk) for kk in range(_STEPS)] + [(HI, kk) for kk in range(_STEPS)]],
    # Candidate (a): hi and lo in accumulators of their own, added in f32 (lo's power-of-two
    # scale into e4m3's normal range would change nothing here: the split loses nothing S sees).
    "two_accumulators": [[(HI, kk) for kk in range(_STEPS)], [(LO, kk) for kk in range(_STEPS)]],
    # A second accumulator for hi's first half: two truncations of a large sum fewer.
    "low_first_split_high": [[(HI, 0), (HI, 1)], [(LO, kk) for kk in range(_STEPS)] + [(HI, 2), (HI, 3)]],
    # The bound: every QGMMA into a fresh accumulator (eight accumulators' registers).
    "fresh_each_step": [[(part, kk)] for kk in range(_STEPS) for part in (HI, LO)],
    # Candidate (b): a third e4m3 part, ordered as the kernel ordered two.
    "three_parts": [[(part, kk) for kk in range(_STEPS) for part in (HI, LO, THIRD)]],
    # The fault q_high_only: hi alone.
    "high_only": [[(HI, kk) for kk in range(_STEPS)]],
}


def scores_raw_keys(q: np.ndarray, k: np.ndarray, schedule, target_exp: int = 7, key_chunk: int = 2048):
    """S of the raw-keys path before 1 / s (f32 values) and each row's 1 / s."""
    parts, inv = split_q(q, target_exp, 1 + max(part for acc in schedule for part, _ in acc))

    def chunk(kc):
        total = None
        for acc in schedule:
            c = np.zeros((q.shape[0], kc.shape[0]), np.float32)
            for part, kk in acc:
                cols = slice(MMA_K * kk, MMA_K * (kk + 1))
                c = mma_e4m3_step(c, parts[part][:, cols], kc[:, cols])
            total = c if total is None else (total + c).astype(np.float32)
        return total

    s = np.concatenate([chunk(k[i : i + key_chunk]) for i in range(0, k.shape[0], key_chunk)], axis=1)
    return s.astype(np.float64), inv


def kernel_output(s: np.ndarray, row_scale_log2: np.ndarray, v: np.ndarray, v_scale: float) -> np.ndarray:
    """The softmax and P V as the kernel computes them from S (f32 arithmetic, f16 P, bf16 O)."""
    s2 = f32(s * f32(row_scale_log2))
    p = f32(np.exp2(f32(s2 - s2.max(axis=1, keepdims=True))))
    l = p.sum(axis=1, keepdims=True)
    o = f32(f16(p) @ v)
    return bf16(f32(o / l) * np.float32(v_scale))


def reference(q, k, v, k_scale, v_scale, scale):
    s = (q @ k.T) * (k_scale * scale)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p @ v) * v_scale / p.sum(axis=1, keepdims=True)


def row_errors(o, r):
    return np.linalg.norm(o - r, axis=1) / np.linalg.norm(r, axis=1)


def sequence_errors(rng, keys: int, rows: int, k_scale: float, v_scale: float, variants) -> dict:
    """Each variant's relative row errors on one MQA sequence (rows query heads on one KV head).
    Variants: "converted" (Q as f16, K as f16, f32 accumulation), "exact_split" (hi + lo with
    exact accumulation), a SCHEDULES name, or (name, target_exp)."""
    q = bf16(rng.standard_normal((rows, HEAD_DIM)))
    k = e4m3(rng.standard_normal((keys, HEAD_DIM)))
    v = e4m3(rng.standard_normal((keys, HEAD_DIM)))
    scale = 1.0 / np.sqrt(HEAD_DIM)
    scale_log2 = np.float32(np.float32(scale * LOG2E) * np.float32(k_scale))
    ref = reference(q, k, v, k_scale, v_scale, scale)
    out = {}
    for variant in variants:
        name, target = (variant, 7) if isinstance(variant, str) else variant
        if name == "converted":
            s, inv = f32(f16(q) @ k.T), np.ones((rows, 1))
        elif name == "exact_split":
            (hi, lo), inv = split_q(q, target)
            s = f32((hi + lo) @ k.T)
        else:
            s, inv = scores_raw_keys(q, k, SCHEDULES[name], target)
        out[variant] = row_errors(kernel_output(s, f32(scale_log2 * f32(inv)), v, v_scale), ref)
    return out


def sweep(seeds: int, variants, lens, rows: int, first_seed: int = 0) -> dict:
    """Each variant's worst relative row error per seed over sequences of the given lengths
    sharing one KV head's k and v scales (drawn as make_decode_problem draws them)."""
    worst = {v: [] for v in variants}
    for seed in range(first_seed, first_seed + seeds):
        rng = np.random.default_rng(seed)
        k_scale, v_scale = (float(np.float32(0.5 * 2 ** (2 * rng.random()))) for _ in range(2))
        per_seed = {v: 0.0 for v in variants}
        for keys in lens:
            errs = sequence_errors(rng, keys, rows, k_scale, v_scale, variants)
            for v in variants:
                per_seed[v] = max(per_seed[v], float(errs[v].max()))
        for v in variants:
            worst[v].append(per_seed[v])
    return {v: np.array(w) for v, w in worst.items()}


def _label(v):
    return v if isinstance(v, str) else f"{v[0]}@2^{v[1]}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=200, help="seeds of the six 200-key sequences")
    ap.add_argument("--long-seeds", type=int, default=10, help="seeds of the 20000-key sequence")
    ap.add_argument("--rows", type=int, default=64, help="query heads on the KV head (MQA 64/1)")
    args = ap.parse_args()
    variants = ["converted", "exact_split", "interleaved", "low_first", "two_accumulators",
                "low_first_split_high", "three_parts", ("interleaved", 5), "high_only"]
    print(f"worst relative row error / gate {ROW_GATE} (max over seeds; p50 of the seeds' worst rows)")
    for what, lens, seeds, first in (("six 200-key sequences", [200] * 6, args.seeds, 0),
                                     ("one 20000-key sequence", [20000], args.long_seeds, 10_000)):
        res = sweep(seeds, variants, lens, args.rows, first)
        print(f"{what}, {seeds} seeds, {args.rows} rows each:")
        for v in variants:
            w = res[v]
            print(f"  {_label(v):>24}: worst {w.max():.5f} ({w.max() / ROW_GATE:.3f} of the gate), "
                  f"p50 {np.median(w):.5f}")


if __name__ == "__main__":
    main()
