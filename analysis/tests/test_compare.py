"""schedlab-compare: two runs configuration by configuration, a verdict each under the one rule
(stats.classify against the threshold or the runs' A/A noise floor), failed records as
errors, run ids resolved under a results root, and the exit statuses a CI gate or a bisect
relies on."""
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import synth
from schedlab_analysis import compare, stats

REPO = Path(__file__).resolve().parents[2]
TILE = REPO / "results" / "h200" / "decode_tile_schedule"
# Two default-tier runs of one experiment, from different device calls (commits 84ac4b9f18 and fdd3d599df).
RUN_A, FILE_A = "20261125T145416Z-b081333a", TILE / "20261125T145856Z-84ac4b9f18.json.gz"
RUN_B, FILE_B = "20261125T183507Z-f252d03c", TILE / "20261125T183653Z-fdd3d599df.json.gz"
QUICK = TILE / "20261123T195934Z-ef2304752a.json.gz"   # the quick tier: half the configurations
PREFILL = REPO / "results" / "h200" / "naive_attention" / "20261125T145617Z-84ac4b9f18.json.gz"
ACCURACY_FAILURE = "accuracy gate failed: rel_l2_err 0.2 > 0.005"


@pytest.fixture(scope="module")
def committed():
    return compare.compare(compare.load_side(str(FILE_A), TILE), compare.load_side(str(FILE_B), TILE))


def _row(c, variant, config):
    rows = c.rows[(c.rows["variant"] == variant) & (c.rows["config"] == config)]
    assert len(rows) == 1, (variant, config, list(c.rows["config"]))
    return rows.iloc[0]


def test_committed_runs_every_configuration_with_a_verdict(committed):
    c = committed
    assert len(c.both) == 24 and c.count(*compare.ONLY_IN.values()) == 0
    assert "split_aa" not in set(c.rows["variant"])            # the control gives the floor, it is not listed
    assert set(c.rows["verdict"]) == {stats.SLOWER, stats.NO_DIFFERENCE}
    worst = _row(c, "split", "batch=64 context=4096 page=16 fp8_e4m3")
    assert worst["verdict"] == stats.SLOWER and worst["a_us"] == pytest.approx(157.0, abs=0.1)
    assert worst["change"] == pytest.approx(worst["a_us"] / worst["b_us"] - 1, abs=1e-3)
    assert worst["ci_low"] <= worst["ci_high"] < -0.01
    # Each run's own A/A control sets a floor, below the 1% threshold here.
    floor_a, floor_b = c.floors["decode_tile_schedule"]
    assert 0 < floor_a < 0.01 and 0 < floor_b < 0.01
    assert (c.rows["band"] == 0.01).all()
    assert c.warnings == []
    assert RUN_A in c.sides["A"] and "84ac4b9f18" in c.sides["A"] and RUN_B in c.sides["B"]
    text = compare.render(c)
    assert "24 configurations in both: 0 faster, 5 slower, 19 no difference, 0 errors" in text
    assert "geometric-mean change of B against A -1.4%" in text


def _two_runs(tmp_path, a_variants, b_variants, *, a_kwargs=None, b_kwargs=None, configs=synth.PREFILL_CONFIGS):
    """Synthetic runs A and B of one experiment, baseline ``base``, with little noise."""
    files = []
    for side, variants, kwargs in (("a", a_variants, a_kwargs or {}), ("b", b_variants, b_kwargs or {})):
        kwargs = dict(kwargs)
        ctx = dict(run_id=f"20261120T12000{len(files)}Z-{side * 8}", **kwargs.pop("context", {}))
        files.append(synth.experiment_run(tmp_path / side, "prefill_x", "prefill", "base", variants, configs,
                                          noise=0.002, reps=8, seed=len(files), context=ctx, **kwargs))
    return tuple(compare.load_side(str(f), tmp_path) for f in files)


def test_faster_slower_and_no_difference(tmp_path):
    a, b = _two_runs(tmp_path, {"base": 1.0, "up": 1.0, "down": 1.0, "same": 1.0},
                     {"base": 1.0, "up": 0.9, "down": 1.1, "same": 1.002})
    c = compare.compare(a, b)
    verdicts = c.rows.groupby("variant")["verdict"].agg(set).to_dict()
    assert verdicts == {"up": {stats.FASTER}, "down": {stats.SLOWER}, "same": {stats.NO_DIFFERENCE},
                        "base": {stats.NO_DIFFERENCE}}
    up = c.rows[c.rows["variant"] == "up"]
    assert np.allclose(up["change"], 1 / 0.9 - 1, atol=0.01)
    assert c.floors == {"prefill_x": (0.0, 0.0)}          # no A/A control: the threshold alone
    assert "A no control, B no control" in compare.render(c)
    # The threshold is a minimum: a 10% change within a 15% threshold is no difference.
    wide = compare.compare(a, b, threshold=0.15)
    assert set(wide.rows["verdict"]) == {stats.NO_DIFFERENCE}


def test_noise_floor_from_the_aa_control_raises_the_band(tmp_path):
    # B's baseline registered twice came out 5% apart: changes of 3% are within that run's noise.
    a, b = _two_runs(tmp_path, {"base": 1.0, "base_aa": 1.0, "x": 1.0}, {"base": 1.0, "base_aa": 1.05, "x": 0.97})
    c = compare.compare(a, b)
    floor_a, floor_b = c.floors["prefill_x"]
    assert floor_a < 0.01 and floor_b == pytest.approx(0.05, abs=0.005)
    x = c.rows[c.rows["variant"] == "x"]
    assert (x["change"] > 0.025).all() and (x["verdict"] == stats.NO_DIFFERENCE).all()
    assert np.allclose(c.rows["band"], floor_b)
    assert "base_aa" not in set(c.rows["variant"])
    # Without the control the same 3% is faster.
    a, b = _two_runs(tmp_path / "no_aa", {"base": 1.0, "x": 1.0}, {"base": 1.0, "x": 0.97})
    assert set(compare.compare(a, b).rows.query("variant == 'x'")["verdict"]) == {stats.FASTER}


def test_an_accuracy_failure_is_an_error_not_a_time(tmp_path):
    a, b = _two_runs(tmp_path, {"base": 1.0, "x": 1.0}, {"base": 1.0, "x": 0.5},
                     b_kwargs={"errors": {("x", 1): ACCURACY_FAILURE}})
    c = compare.compare(a, b)
    row = c.rows[c.rows["verdict"] == compare.ERROR]
    assert len(row) == 1
    row = row.iloc[0]
    assert row["variant"] == "x" and row["failed_in"] == "B" and ACCURACY_FAILURE in row["message"]
    assert np.isnan(row["b_us"]) and np.isnan(row["change"])
    assert c.count(compare.ERROR) == 1 and len(c.failed_in_b()) == 1
    assert f"error (B: {ACCURACY_FAILURE})" in compare.render(c)
    # The other configurations of the variant are still timed (and twice as fast).
    assert (c.rows.query("variant == 'x' and verdict != 'error'")["verdict"] == stats.FASTER).all()
    # A failure in A alone is an error too, but it does not fail the gate (B is what is judged).
    a, b = _two_runs(tmp_path / "in_a", {"base": 1.0, "x": 1.0}, {"base": 1.0, "x": 1.0},
                     a_kwargs={"errors": {("x", 1): ACCURACY_FAILURE}})
    c = compare.compare(a, b)
    assert c.count(compare.ERROR) == 1 and c.failed_in_b().empty


def test_configurations_of_one_side_and_provenance_warnings(tmp_path):
    a, b = _two_runs(tmp_path, {"base": 1.0, "old": 1.0}, {"base": 1.0, "new": 1.0},
                     a_kwargs={"context": {"schedlab_dirty": "true"}},
                     b_kwargs={"context": {"toolkit_version": "12.8 (12080)", "compiler_flags": "-O2"}})
    c = compare.compare(a, b)
    assert set(c.rows.query("verdict == 'only in A'")["variant"]) == {"old"}
    assert set(c.rows.query("verdict == 'only in B'")["variant"]) == {"new"}
    assert len(c.both) == len(synth.PREFILL_CONFIGS)
    text = "\n".join(c.warnings)
    assert 'toolkit_version differs: A "13.0 (13000)", B "12.8 (12080)"' in text
    assert "compiler_flags differs" in text and "A was built from a dirty tree" in text
    assert "device differs" not in text
    assert "Only in A (3):" in compare.render(c)


def test_run_ids_resolve_under_the_results_root():
    assert compare.resolve(RUN_A, TILE) == [FILE_A]                        # the context's run id
    assert compare.resolve("20261125T1454", TILE) == [FILE_A]              # a unique prefix of it
    assert compare.resolve("20261125T183653Z-fdd3d599df", TILE) == [FILE_B]  # a file's stem
    assert compare.resolve(str(FILE_A), TILE) == [FILE_A]
    with pytest.raises(compare.UsageError, match="no results file under .* has this run id"):
        compare.resolve("20991231T000000Z-00000000", TILE)
    with pytest.raises(compare.UsageError, match=r"names \d+ runs"):
        compare.resolve("20261123T", TILE)
    with pytest.raises(compare.UsageError, match="no such file"):
        compare.resolve("results/h200/nowhere.json.gz", TILE)


def test_a_folder_is_one_run_of_every_experiment(tmp_path):
    run = {"run_id": "20261120T115900Z-0badcafe"}
    for exp, seed in (("prefill_x", 0), ("prefill_y", 1)):
        synth.experiment_run(tmp_path / "run", exp, "prefill", "base", {"base": 1.0}, synth.PREFILL_CONFIGS,
                             context=run, seed=seed)
    rows = compare.load_side(str(tmp_path / "run"), tmp_path)
    assert set(rows["experiment"]) == {"prefill_x", "prefill_y"}
    assert compare.resolve("20261120T115900Z-0badcafe", tmp_path / "run") == sorted(
        (tmp_path / "run").rglob("*.json"))
    with pytest.raises(compare.UsageError, match=r"holds \d+ runs of h200/decode_tile_schedule"):
        compare.load_side(str(TILE), TILE)


def test_exit_statuses_and_outputs(tmp_path, capsys):
    common = ["--results", str(TILE)]
    out = tmp_path / "cmp.csv"
    # split at batch=64 context=4096 fp8 is 7% slower: over a 5% gate, not over a 10% one.
    assert compare.main([RUN_A, RUN_B, "--fail-above", "5", "--format", "csv", "--out", str(out)] + common) == 1
    captured = capsys.readouterr()
    assert "1 configuration(s) slower than A by more than 5%" in captured.err
    assert "24 configurations in both" in captured.out
    csv = pd.read_csv(out)
    assert list(csv.columns) == compare.COLUMNS and len(csv) == 24
    assert set(csv["verdict"]) == {stats.SLOWER, stats.NO_DIFFERENCE}
    assert compare.main([str(FILE_A), str(FILE_B), "--fail-above", "10", "--format", "markdown"] + common) == 0
    md = capsys.readouterr().out
    assert "| experiment | variant | configuration | A (us) | B (us) | change | 95% CI | verdict |" in md
    assert "| decode_tile_schedule | split | batch=64 context=4096 page=16 fp8_e4m3 | 157.0 |" in md
    assert "- decode_tile_schedule: band +-1.0%" in md


def test_a_failed_record_in_b_exits_1(tmp_path, capsys):
    a, b = (synth.experiment_run(tmp_path / side, "prefill_x", "prefill", "base", {"base": 1.0, "x": 1.0},
                                 synth.PREFILL_CONFIGS, errors=errors, seed=i)
            for i, (side, errors) in enumerate((("a", None), ("b", {("x", 0): ACCURACY_FAILURE}))))
    assert compare.main([str(a), str(b)]) == 1
    assert "1 record(s) of B failed" in capsys.readouterr().err
    assert compare.main([str(b), str(a)]) == 0   # the failure is A's: reported, not a failure of the gate


@pytest.mark.parametrize("argv, message", [
    (["results/h200/decode_tile_schedule/nowhere.json.gz", str(FILE_B)], "no such file or folder"),
    (["20991231T000000Z-00000000", str(FILE_B), "--results", str(TILE)], "has this run id"),
    ([str(PREFILL), str(FILE_B)], "no configuration in common"),
    ([str(QUICK), str(FILE_B), "--threshold", "-1"], "a percentage at or above 0"),
    ([str(FILE_A)], "the following arguments are required"),
])
def test_usage_errors_exit_2_with_a_message(argv, message, capsys):
    assert compare.main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.startswith("schedlab-compare: error:")


def test_a_committed_dirty_run_without_repetitions():
    # An early run: built from a dirty tree, older compiler flags, median aggregates only.
    kv = REPO / "results" / "h200" / "prefill_kv_tiles"
    a = compare.load_side(str(kv / "20261121T011026Z-9302de1c37-dirty.json.gz"), kv)
    b = compare.load_side(str(kv / "20261125T145800Z-84ac4b9f18.json.gz"), kv)
    c = compare.compare(a, b)
    assert len(c.both) == 16 and set(c.both["verdict"]) == {stats.NO_CI}   # no interval, no direction
    assert c.count(compare.ONLY_IN["A"]) == 16 and c.count(compare.ONLY_IN["B"]) == 2
    assert any(w.startswith("A was built from a dirty tree (commit 9302de1c37)") for w in c.warnings)
    assert any(w.startswith("compiler_flags differs") for w in c.warnings)
    assert "16 no difference (16 without an interval" in compare.summary_line(c)


def test_an_unsupported_combination_is_skipped_not_an_error(tmp_path):
    skip = {("x", 0): "skipped: invalid problem: " + "page_size " * 20}
    a, b = _two_runs(tmp_path, {"base": 1.0, "x": 1.0}, {"base": 1.0, "x": 1.0},
                     a_kwargs={"errors": skip}, b_kwargs={"errors": skip})
    c = compare.compare(a, b)
    row = c.rows[c.rows["verdict"] == compare.SKIPPED].iloc[0]
    assert row["message"].startswith("A and B: skipped: invalid problem") and row["failed_in"] == ""
    assert c.count(compare.ERROR) == 0 and c.failed_in_b().empty
    cell = compare.render(c).splitlines()
    assert any(l.endswith("...)") and "skipped (A and B: skipped: invalid problem" in l for l in cell)
