"""The ``overlap`` kind: each pair's hidden share from the GEMM alone, the unit alone and the two
together, within one run; the committed probe run's numbers as its own medians give them."""
import numpy as np
import pytest

from schedlab_analysis import readme, unit_overlap
from schedlab_analysis.load import load_results

import synth

CONFIGS = [{"passes": 2048, "_flops": 1e12, "_bytes": 1e3}]


def _run(root, factors, **kw):
    return synth.experiment_run(root, "hopper_unit_overlap", "hopper_unit_overlap", "gemm", factors, CONFIGS,
                                dtype="fp8_e4m3", reps=11, noise=0.002, **kw)


def test_a_pair_as_long_as_the_gemm_is_all_hidden_and_one_as_long_as_both_none(tmp_path):
    path = _run(tmp_path, {"gemm": 1.0, "exp2": 0.8, "ffma": 0.8, "gemm_and_exp2": 1.0, "gemm_and_ffma": 1.8})
    rows = unit_overlap.overlap_rows(load_results(path), n_boot=200).set_index("unit")
    assert rows.loc["exp2", "hidden"] == pytest.approx(1.0, abs=0.02)
    assert rows.loc["ffma", "hidden"] == pytest.approx(0.0, abs=0.02)
    assert rows.loc["exp2", "low"] <= rows.loc["exp2", "hidden"] <= rows.loc["exp2", "high"]
    assert rows.loc["exp2", "where"] == "another warpgroup"


def test_a_gemm_of_another_width_pairs_with_itself_alone(tmp_path):
    path = _run(tmp_path, {"gemm": 1.0, "gemm_n256": 0.9, "exp2": 1.0, "gemm_n256_and_exp2": 0.9})
    rows = unit_overlap.overlap_rows(load_results(path), n_boot=50)
    assert list(rows["gemm"]) == ["gemm_n256"] and rows["hidden"].iloc[0] == pytest.approx(1.0, abs=0.02)


def test_one_warpgroup_doing_both_is_named_so(tmp_path):
    path = _run(tmp_path, {"gemm": 1.0, "exp2": 1.0, "gemm_then_exp2": 1.5})
    rows = unit_overlap.overlap_rows(load_results(path), n_boot=200)
    assert list(rows["where"]) == ["the same warpgroup"]
    assert rows["hidden"].iloc[0] == pytest.approx(0.5, abs=0.02)


def test_a_unit_never_run_alone_has_no_share_and_a_failed_one_is_refused(tmp_path):
    rows = unit_overlap.overlap_rows(load_results(_run(tmp_path / "a", {"gemm": 1.0, "gemm_and_wait": 1.1})), n_boot=10)
    assert np.isnan(rows["hidden"].iloc[0]) and rows["together_us"].iloc[0] > rows["gemm_us"].iloc[0]
    failed = _run(tmp_path / "b", {"gemm": 1.0, "exp2": 1.0, "gemm_and_exp2": 1.2}, errors={("exp2", 0): "gate failed"})
    with pytest.raises(unit_overlap.OverlapError, match="exp2 alone"):
        unit_overlap.overlap_rows(load_results(failed), n_boot=10)


def test_two_runs_are_refused(tmp_path):
    a = _run(tmp_path, {"gemm": 1.0, "exp2": 1.0, "gemm_and_exp2": 1.2}, stamp="20261120T120000Z",
             context={"run_id": "a"})
    b = _run(tmp_path, {"gemm": 1.0, "exp2": 1.0, "gemm_and_exp2": 1.2}, stamp="20261120T130000Z",
             context={"run_id": "b"})
    with pytest.raises(unit_overlap.OverlapError, match="within one run"):
        unit_overlap.overlap_rows(load_results([a, b]), n_boot=10)


RUN = "results/h200/hopper_unit_overlap/20261201T071139Z-2f94067272.json.gz"


def test_the_committed_run_renders_its_own_medians():
    if not (readme.REPO / RUN).is_file():
        pytest.skip(f"{RUN} is not committed")
    df = load_results(readme.REPO / RUN)
    rows = unit_overlap.overlap_rows(df, n_boot=50)
    ok = df[(df["status"] == "ok") & (df["run_type"] == "iteration")]
    for _, r in rows.iterrows():
        t = lambda v: np.median(ok[(ok["variant"] == v) & (ok["dtype"] == r["dtype"])]["time_us"])
        assert r["hidden"] == pytest.approx((t(r["gemm"]) + t(r["unit"]) - t(r["variant"])) / t(r["unit"]))
    text = readme.render(["overlap"], [RUN])
    assert text.count("\n| `gemm") == len(rows) and "every record passed the accuracy gate" in text


def test_the_figure_is_drawn_for_pairs_only(tmp_path):
    from schedlab_analysis.dataset import Dataset
    pairs = _run(tmp_path / "a", {"gemm": 1.0, "exp2": 1.0, "gemm_and_exp2": 1.2})
    plain = _run(tmp_path / "b", {"gemm": 1.0, "exp2": 1.0})
    for path, drawn in ((pairs, True), (plain, False)):
        ds = Dataset.load([path])
        view = ds.view(*ds.experiments()[0])
        assert (unit_overlap.overlap_figure(view) is not None) == drawn
