import numpy as np
import pytest

import synth
from schedlab_analysis import load, stats


def test_bootstrap_known_case_matches_exact_distribution():
    # Baseline always 4; the variant's resampled median of two draws from {1, 3} is 1, 2 or 3 with
    # probabilities 1/4, 1/2, 1/4, so the ratio is 4, 2 or 4/3 and the 2.5% / 97.5% percentiles are
    # exactly 4/3 and 4.
    point, low, high = stats.bootstrap_ratio_ci([4.0, 4.0], [1.0, 3.0], n_boot=20_000, seed=1)
    assert point == pytest.approx(2.0)
    assert low == pytest.approx(4 / 3)
    assert high == pytest.approx(4.0)


def test_bootstrap_uses_medians_not_means():
    # median([1, 1, 4]) = 1 (a mean would give 2). A resampled median is 4 only when two of three
    # draws are the 4 (probability 7/27), so the ratio 4/median is 1 or 4 and the 95% interval is [1, 4].
    point, low, high = stats.bootstrap_ratio_ci([4.0] * 3, [1.0, 1.0, 4.0], n_boot=20_000, seed=2)
    assert point == pytest.approx(4.0)
    assert (low, high) == pytest.approx((1.0, 4.0))


def test_bootstrap_constant_samples_have_a_zero_width_interval():
    point, low, high = stats.bootstrap_ratio_ci([10.0] * 8, [5.0] * 8)
    assert (point, low, high) == pytest.approx((2.0, 2.0, 2.0))


def test_bootstrap_is_seeded_and_covers_a_known_ratio():
    rng = np.random.default_rng(7)
    base = 100 * (1 + 0.02 * rng.standard_normal(30))
    var = 80 * (1 + 0.02 * rng.standard_normal(30))
    a = stats.bootstrap_ratio_ci(base, var, seed=3)
    b = stats.bootstrap_ratio_ci(base, var, seed=3)
    c = stats.bootstrap_ratio_ci(base, var, seed=4)
    assert a == b and a != c
    assert a[1] < 1.25 < a[2] and a[2] - a[1] < 0.05


def test_bootstrap_needs_two_samples_for_an_interval():
    point, low, high = stats.bootstrap_ratio_ci([2.0], [1.0, 1.0])
    assert point == 2.0 and np.isnan(low) and np.isnan(high)
    with pytest.raises(ValueError):
        stats.bootstrap_ratio_ci([], [1.0])


def test_summary_median_iqr_and_rates(tmp_path):
    rec = []
    times = [10.0, 11.0, 12.0, 13.0, 14.0]
    rec += synth.benchmark_records("e/a/bf16/n:1", "family=f;experiment=e;variant=a;baseline=a;dtype=bf16", times,
                                   {"n": 1, "flops": 1e12, "bytes": 1e9})
    synth.write_results_file(tmp_path / "h200" / "e" / "20261120T000000Z-x.json", synth.DEVICE_CONTEXT, rec)
    s = stats.summarize(load.load_results(tmp_path))
    row = s.iloc[0]
    assert row["n"] == 5 and row["time_us"] == 12.0
    assert (row["time_lo"], row["time_hi"]) == (11.0, 13.0)
    assert row["tflops"] == pytest.approx(1e12 / 12e-6 / 1e12)
    assert row["tflops_lo"] == pytest.approx(1e12 / 13e-6 / 1e12)  # slowest quartile -> lowest rate
    assert row["gbps"] == pytest.approx(1e9 / 12e-6 / 1e9)
    assert row["spread_kind"] == stats.SPREAD_IQR


def test_summary_aggregates_only_uses_stddev(tmp_path):
    synth.experiment_run(tmp_path, "e", "prefill", "a", {"a": 1.0}, synth.PREFILL_CONFIGS[:1], iterations=False)
    row = stats.summarize(load.load_results(tmp_path)).iloc[0]
    assert row["n"] == 0 and row["spread_kind"] == stats.SPREAD_STDDEV
    assert row["time_lo"] < row["time_us"] < row["time_hi"]


def test_speedups_pair_variant_with_its_baseline(tmp_path):
    synth.experiment_run(tmp_path, "e", "prefill", "base", {"base": 1.0, "fast": 0.5}, synth.PREFILL_CONFIGS,
                         noise=0.0)
    df = load.load_results(tmp_path)
    sp = stats.speedups(stats.summarize(df), df)
    assert len(sp) == len(synth.PREFILL_CONFIGS)
    assert (sp["variant"] == "fast").all() and (sp["baseline"] == "base").all()
    assert np.allclose(sp["speedup"], 2.0) and np.allclose(sp["ci_low"], 2.0) and np.allclose(sp["ci_high"], 2.0)
    assert sp["config"].str.contains("seq_len=").all()


def test_speedups_pair_across_a_plan_counter_that_differs(tmp_path):
    tree = synth.full_tree(tmp_path / "results")
    df = load.latest_runs(load.load_results(tree))
    sp = stats.speedups(stats.summarize(df), df)
    decode = sp[sp["experiment"] == "decode_kv_streaming"]
    # 4 configs; one baseline skipped and one variant failed leave 2 comparable pairs.
    assert len(decode) == 2 and (decode["speedup"] > 1.05).all() and (decode["ci_low"] > 1.0).all()


def test_summary_takes_each_records_first_declared_work_and_first_failure(tmp_path):
    lab = "family=f;experiment=e;variant={v};baseline=a;dtype=bf16"
    late = synth.benchmark_records("e/b/bf16/n:1", lab.format(v="b"), [20.0, 21.0, 22.0], {"n": 1, "bytes": 2e9})
    del late[0]["bytes"]  # the first repetition lacks the declared bytes; the second has them
    failing = synth.benchmark_records("e/c/bf16/n:1", lab.format(v="c"), [30.0, 31.0], {"n": 1, "bytes": 1e9})
    failing.insert(1, dict(failing[0], error_occurred=True, error_message="accuracy: mismatch"))
    rec = synth.benchmark_records("e/a/bf16/n:1", lab.format(v="a"), [10.0, 12.0], {"n": 1}) + late + failing
    synth.write_results_file(tmp_path / "h200" / "e" / "20261120T000000Z-x.json", synth.DEVICE_CONTEXT, rec)
    s = stats.summarize(load.load_results(tmp_path)).set_index("variant")
    assert list(s.index) == ["a", "b", "c"]  # records in the order the file lists them
    assert s.loc["b", "bytes"] == 2e9 and s.loc["b", "gbps"] == pytest.approx(2e9 / 21e-6 / 1e9)
    assert np.isnan(s.loc["a", "bytes"]) and np.isnan(s.loc["a", "gbps"]) and s.loc["a", "time_us"] == 11.0
    assert s.loc["c", "status"] == "failed" and s.loc["c", "error_message"] == "accuracy: mismatch"
    assert s.loc["c", "n"] == 0 and np.isnan(s.loc["c", "time_us"])
