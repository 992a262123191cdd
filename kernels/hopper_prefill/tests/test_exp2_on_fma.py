"""exp2_on_fma (kernels/attention/online_softmax.hpp), replayed in float32 numpy: the exp2 the
fp8 softmax may compute on the FMA pipe instead of the multi-function unit. Its arithmetic is
copied here step by step (round by 1.5 x 2^23, cubic in the remainder, the integer part added
to the exponent bits); keep the two in step by hand.
Run: python3 -m pytest -q kernels/hopper_prefill/tests
"""
from __future__ import annotations

import numpy as np

F32 = np.float32
COEFFS = (F32(0.99992806), F32(0.69326097), F32(0.24261113), F32(0.05517161))  # c0 + c1 f + c2 f^2 + c3 f^3
ROUND = F32(12582912.0)


def exp2_on_fma(x: np.ndarray) -> np.ndarray:
    underflow = x < F32(-126.0)
    x = np.maximum(x.astype(F32), F32(-126.0))
    t = (x + ROUND).astype(F32)
    f = (x - (t - ROUND)).astype(F32)
    c0, c1, c2, c3 = COEFFS
    p = ((c3 * f + c2) * f + c1) * f + c0  # fmaf rounds once per step; float32 steps round twice: within tolerance
    bits = p.astype(F32).view(np.int32).astype(np.int64) + (t.view(np.int32).astype(np.int64) << 23)
    y = (bits & 0xFFFFFFFF).astype(np.uint32).view(F32)
    return np.where(underflow, F32(0.0), y)


def test_relative_error_over_the_softmax_range():
    # Scores minus the running max: at most the rescaling threshold (8) above it, down to underflow.
    x = np.linspace(-120.0, 8.0, 400_001, dtype=F32)
    got = exp2_on_fma(x).astype(np.float64)
    ref = np.exp2(x.astype(np.float64))
    assert np.max(np.abs(got - ref) / ref) < 1e-4  # e4m3 P steps by 2^-4, bf16 by 2^-8


def test_masked_and_underflowing_scores_give_zero():
    got = exp2_on_fma(np.array([-np.inf, -1e30, -126.5, -127.0, -200.0], dtype=F32))
    assert np.all(got == 0.0) and not np.any(np.signbit(got))  # a row with no visible key keeps l = 0


def test_the_smallest_kept_scores_stay_finite_and_positive():
    x = np.linspace(-126.0, -120.0, 10_001, dtype=F32)
    got = exp2_on_fma(x)
    assert np.all(np.isfinite(got)) and np.all(got > 0.0)


def test_integer_powers_are_the_cubic_at_zero_times_a_power_of_two():
    k = np.arange(-100, 9, dtype=F32)
    np.testing.assert_allclose(exp2_on_fma(k), np.exp2(k.astype(np.float64)) * float(COEFFS[0]), rtol=1e-6)
