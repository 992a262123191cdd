"""The raw-keys S model (raw_keys_numerics.py): its roundings, and its finding on the split of Q
and the order of the e4m3 QGMMAs (group_qk_raw_keys in kernels/decode/decode_warpgroup.cuh).

Run: python3 -m pytest -q kernels/decode/tests/test_raw_keys_numerics.py
"""
from __future__ import annotations

import numpy as np
import pytest

import raw_keys_numerics as model


def test_e4m3_rounds_to_nearest_even_with_subnormals_and_saturates():
    x = [1 + 1 / 16, 1 + 3 / 16, 248.0, 247.0, 500.0, -1e9, 2.0**-10, 3 * 2.0**-10, 2.0**-9 * 2.5]
    want = [1.0, 1.25, 256.0, 240.0, 448.0, -448.0, 0.0, 2.0**-8, 2.0**-8]
    assert model.e4m3(x).tolist() == want


def test_split_is_exact_where_the_scaled_value_reaches_a_quarter():
    rng = np.random.default_rng(3)
    q = model.bf16(rng.standard_normal((256, model.HEAD_DIM)) * np.exp2(rng.integers(-20, 20, (256, 1))))
    (hi, lo), inv = model.split_q(q)
    y = q / inv
    assert np.abs(y).max(axis=1).min() >= 128 and np.abs(y).max() < 256
    big = np.abs(y) >= 0.25
    assert np.array_equal((hi + lo)[big], y[big])
    assert np.abs(hi + lo - y)[~big].max() <= 2.0**-10


def test_mma_keeps_13_bits_of_the_accumulator():
    # An accumulator with more than 13 fraction bits passed through zero products keeps its
    # top 13, truncated (the probe of SageAttention2's FP22 finding).
    c = np.array([[1 + 2.0**-13 + 2.0**-20], [-(1 + 2.0**-13 + 2.0**-20)]], np.float32)  # 2 rows, 1 key
    out = model.mma_e4m3_step(c, np.zeros((2, model.MMA_K)), np.zeros((1, model.MMA_K)))
    assert out.ravel().tolist() == [1 + 2.0**-13, -(1 + 2.0**-13)]


def test_the_row_scale_target_leaves_the_error():
    # Candidate (c): a lower target (largest magnitude to [32, 64)) moves S only where lo is
    # subnormal; the accumulator's truncation is relative to powers of two and stays.
    rng = np.random.default_rng(7)
    errs = model.sequence_errors(rng, 200, 64, 1.9, 1.0, ["interleaved", ("interleaved", 5)])
    assert errs[("interleaved", 5)].max() == pytest.approx(errs["interleaved"].max(), rel=0.01)


@pytest.fixture(scope="module")
def worst_rows():
    """Each variant's worst row error over four 200-key MQA 64/1 sequences with a k scale near
    the top of the tests' range (sharp scores: S's error shows most)."""
    variants = ["converted", "exact_split", "interleaved", "low_first", "high_only"]
    rng = np.random.default_rng(1)
    worst = dict.fromkeys(variants, 0.0)
    for _ in range(4):
        errs = model.sequence_errors(rng, keys=200, rows=64, k_scale=1.9, v_scale=1.0, variants=variants)
        for v in variants:
            worst[v] = max(worst[v], float(errs[v].max()))
    return worst


def test_the_split_with_exact_sums_matches_f16_keys(worst_rows):
    # hi + lo loses nothing S can see: e4m3's subnormal lo is not the raw-keys path's error.
    assert worst_rows["exact_split"] == pytest.approx(worst_rows["converted"], rel=1e-6)


def test_lo_after_hi_in_one_accumulator_reproduces_the_sweeps_excess(worst_rows):
    # The H200 sweep: raw keys at about 2.8 times the f16 path's worst row.
    assert worst_rows["interleaved"] > 1.5 * worst_rows["converted"]


def test_lo_first_keeps_the_f16_paths_error_with_margin(worst_rows):
    assert worst_rows["low_first"] < 1.25 * worst_rows["converted"]
    assert worst_rows["low_first"] < 0.5 * model.ROW_GATE


def test_high_part_alone_fails_the_gate(worst_rows):
    # The injected fault q_high_only must stay a failure.
    assert worst_rows["high_only"] > 2 * model.ROW_GATE
