"""One comparison, one run: variants meet their baseline only within one run (device call) and
configuration; profiles join only the harness rows of the run and binary they profiled; the
faster/slower rule needs the whole 95% interval beyond the band (1% or the A/A floor)."""
import json
import re

import numpy as np
import pandas as pd
import pytest

import synth
from schedlab_analysis import load, published, stats, table
from schedlab_analysis.dataset import Dataset

CONFIGS = synth.DECODE_CONFIGS  # 4 configurations


def two_calls(root, *, run_ids=(None, None)):
    """A complete older run (b 10% faster) and a later call that re-timed one shape, where b
    is 30% slower: a table mixing the two would show b's later number against a's older one."""
    ctx = [{"run_id": r} if r else {} for r in run_ids]
    first = synth.experiment_run(root, "decode_x", "decode", "a", {"a": 1.0, "b": 1 / 1.1}, CONFIGS,
                                 stamp="20261120T100000Z", noise=0.0, context=ctx[0])
    second = synth.experiment_run(root, "decode_x", "decode", "a", {"b": 1.3}, CONFIGS[:1],
                                  stamp="20261120T110000Z", noise=0.0, seed=5, context=ctx[1])
    return first, second


def test_legacy_files_are_runs_and_the_table_never_mixes_them(tmp_path):
    root = tmp_path / "results"
    first, second = two_calls(root)
    df = load.load_results(root)
    assert set(df["run"]) == {str(first), str(second)}
    text = table.render(Dataset.load(root), "h200", "decode_x")
    rows = [l for l in text.splitlines() if l.startswith("| batch")]
    assert len(rows) == len(CONFIGS)
    assert all("+10.0%, faster" in r for r in rows)  # all from the complete run
    # The later call's b (23% slower) never appears; match the rendered change, not any "-23"
    # (pytest's temporary directory, part of the file paths in the text, can be pytest-23).
    assert not re.search(r"-23\.\d%", text) and not any("slower" in r for r in rows)
    assert first.name in text and second.name not in text


def test_run_ids_group_files_and_never_pair_across(tmp_path):
    root = tmp_path / "results"
    two_calls(root, run_ids=("call-1", "call-2"))
    ds = Dataset.load(root)
    assert set(ds.results["run"]) == {"call-1", "call-2"}
    # The later call timed b alone: it has no baseline in its own run, so nothing is compared.
    later = ds.view("h200", "decode_x", run="call-2")
    assert later.speedups.empty
    assert "call-1" in table.render(ds, "h200", "decode_x")
    # Two files of one run are one run.
    synth.experiment_run(root, "decode_y", "decode", "a", {"a": 1.0}, CONFIGS, stamp="20261120T120000Z",
                         context={"run_id": "call-3"})
    synth.experiment_run(root, "decode_y", "decode", "a", {"b": 0.5}, CONFIGS, stamp="20261120T120001Z",
                         context={"run_id": "call-3"}, seed=3)
    view = Dataset.load(root).view("h200", "decode_y")
    assert len(view.speedups) == len(CONFIGS) and (view.speedups["run"] == "call-3").all()


def test_comparison_across_runs_or_configurations_is_an_error():
    base = {"run": "r1", "benchmark": "x/a", "batch": 16, "dtype": "bf16"}
    with pytest.raises(stats.ComparisonError, match="another run"):
        stats.check_comparable(base, dict(base, run="r2", benchmark="x/b"), ["batch", "dtype"])
    with pytest.raises(stats.ComparisonError, match="differ in dtype"):
        stats.check_comparable(base, dict(base, dtype="fp8_e4m3"), ["batch", "dtype"])
    stats.check_comparable(base, dict(base, benchmark="x/b"), ["batch", "dtype"])


def test_claims_pair_only_within_a_run(tmp_path):
    root = tmp_path / "results"
    # Baseline only in one run, variant only in another: no pair, said so.
    synth.experiment_run(root, "decode_x", "decode", "a", {"a": 1.0}, CONFIGS, stamp="20261120T100000Z",
                         context={"run_id": "r1"})
    synth.experiment_run(root, "decode_z", "decode", "a", {"a": 1.0}, CONFIGS, stamp="20261120T100000Z",
                         context={"run_id": "r1"})
    synth.experiment_run(root, "decode_z", "decode", "a", {"b": 0.5}, CONFIGS, stamp="20261120T110000Z",
                         context={"run_id": "r2"}, seed=2)
    claim = published.Claim("c", "s", "h", "s", "time_us", "us", 100, 50, "lower_is_better", 0.05, "geomean",
                            published.parse_match("experiment=decode_z; baseline=a; variant=b"), "comparable", "n")
    m = published.measure(claim, Dataset.load(root))
    assert m.problem and "run" in m.problem


def test_classify_needs_the_whole_interval_beyond_the_band():
    assert stats.classify(0.05, 0.03, 0.07) == stats.FASTER
    assert stats.classify(-0.05, -0.07, -0.03) == stats.SLOWER
    assert stats.classify(0.012, 0.008, 0.016) == stats.NO_DIFFERENCE   # straddles the 1% band
    assert stats.classify(0.003, 0.001, 0.005) == stats.NO_DIFFERENCE   # excludes zero, inside the band
    assert stats.classify(0.05, 0.03, 0.07, band=0.04) == stats.NO_DIFFERENCE  # a larger A/A floor
    assert stats.classify(0.05, float("nan"), float("nan")) == stats.NO_CI


def test_aa_floor_widens_the_band(tmp_path):
    root = tmp_path / "results"
    # The same kernel registered twice differs by 3% in this run: a 2% effect is not a result.
    synth.experiment_run(root, "decode_x", "decode", "a", {"a": 1.0, "a_aa": 1.03, "b": 1 / 1.02}, CONFIGS,
                         noise=0.001, reps=12)
    view = Dataset.load(root).view("h200", "decode_x")
    assert view.noise_floor == pytest.approx(1 - 1 / 1.03, abs=0.004)
    assert view.band == view.noise_floor
    b = view.speedups[view.speedups["variant"] == "b"]
    assert (b["verdict"] == stats.NO_DIFFERENCE).all() and (b["change"] > 0.015).all()
    assert "no difference" in table.render_view(view) and "A/A noise floor" in table.render_view(view)
    # Without the control the same effect is called faster.
    synth.experiment_run(root, "decode_y", "decode", "a", {"a": 1.0, "b": 1 / 1.02}, CONFIGS, noise=0.001, reps=12)
    view = Dataset.load(root).view("h200", "decode_y")
    assert view.noise_floor == 0 and (view.speedups["verdict"] == stats.FASTER).all()


def _stall_file(path, context, benchmarks):
    synth.write_records(path, context, synth.stall_records(benchmarks, [0.5] * len(benchmarks)))


def _three_profiles(root):
    """A run "call-1" and three profiles of its rows: the same run and binary, another binary,
    another run. Returns the run's results file."""
    ctx = {"run_id": "call-1", "binary_sha256": "aa" * 32}
    f = synth.experiment_run(root, "decode_x", "decode", "a", {"a": 1.0, "b": 0.9}, CONFIGS, context=ctx)
    context = json.loads(f.read_text())["context"]
    names = [n for n in load.load_results(f)["benchmark"].unique()][:2]
    d = root / "h200" / "decode_x"
    _stall_file(d / "stalls-20261120T121000Z-0123456789.json", context, names)
    _stall_file(d / "stalls-20261120T121001Z-0123456789.json", dict(context, binary_sha256="bb" * 32), names)
    _stall_file(d / "stalls-20261120T121002Z-0123456789.json", dict(context, run_id="call-2"), names)
    return f


def test_stalls_attach_only_to_the_same_run_and_binary(tmp_path):
    root = tmp_path / "results"
    _three_profiles(root)
    ds = Dataset.load(root)
    assert sorted(p.rsplit("/", 1)[-1] for p in set(ds.stalls["source_file"])) == [
        "stalls-20261120T121000Z-0123456789.json"]
    assert len(ds.unattached) == 2
    view = ds.view("h200", "decode_x")
    assert set(view.stalls["run"]) == {"call-1"}


def test_the_files_of_a_run_attach_its_profiles_as_the_whole_tree_does(tmp_path):
    root = tmp_path / "results"
    f = _three_profiles(root)
    # Another run of another experiment, and a file that names call-1 only outside its context.
    synth.experiment_run(root, "decode_y", "decode", "a", {"a": 1.0}, CONFIGS, stamp="20261120T130000Z",
                         context={"run_id": "call-3"})
    synth.experiment_run(root, "decode_y", "decode", "a", {"a": 1.0}, CONFIGS, stamp="20261120T140000Z",
                         context={"run_id": "call-4", "note": "after call-1"})
    assert load.results_files_of_runs(root, {"call-1"}) == [f]
    assert load.results_files_of_runs(root, {"call-2"}) == []
    records = load.load_records(root, "stalls")
    narrow = load.attach_records(records, load.load_results(load.results_files_of_runs(root, {"call-1", "call-2"})))
    assert set(narrow["source_file"]) == set(Dataset.load(root).stalls["source_file"]) and len(narrow)


def test_legacy_stalls_attach_by_the_context_they_copy(tmp_path):
    root = tmp_path / "results"
    f = synth.experiment_run(root, "decode_x", "decode", "a", {"a": 1.0}, CONFIGS, stamp="20261120T120000Z")
    context = json.loads(f.read_text())["context"]
    names = list(load.load_results(f)["benchmark"].unique())[:1]
    d = root / "h200" / "decode_x"
    _stall_file(d / "stalls-20261120T121000Z-0123456789.json", context, names)  # same call: attaches
    _stall_file(d / "stalls-20261120T121100Z-0123456789.json", dict(context, profiled_build="fedcba9 (clean)"),
                names)  # another binary
    # A harness run of another commit after the results, then a profile claiming the old run.
    synth.experiment_run(root, "decode_w", "decode", "a", {"a": 1.0}, CONFIGS, stamp="20261120T130000Z",
                         context={"schedlab_commit": "fedcba9876543210"})
    _stall_file(d / "stalls-20261120T131000Z-0123456789.json", context, names)
    ds = Dataset.load(root)
    attached = {p.rsplit("/", 1)[-1] for p in set(ds.stalls["source_file"])}
    assert attached == {"stalls-20261120T121000Z-0123456789.json"}
    assert len(ds.unattached) == 2


def test_dirty_runs_are_not_chosen_over_clean_ones(tmp_path):
    root = tmp_path / "results"
    clean = synth.experiment_run(root, "decode_x", "decode", "a", {"a": 1.0, "b": 1.0}, CONFIGS[:2],
                                 stamp="20261120T100000Z")
    synth.experiment_run(root, "decode_x", "decode", "a", {"a": 1.0, "b": 1.0}, CONFIGS,
                         stamp="20261120T110000Z", context={"schedlab_dirty": "true"})
    assert set(Dataset.load(root).view("h200", "decode_x").summary["source_file"]) == {str(clean)}


def test_verdicts_count_proxies_and_construction_apart(tmp_path):
    root = synth.full_tree(tmp_path / "results")
    data = Dataset.load(root)
    match = published.parse_match("experiment=prefill_kv_tiles; baseline=union; variant=separate")
    base = dict(source="s", hardware="h", setting="s", metric="time_us", unit="us", baseline_value=100,
                variant_value=96, direction="lower_is_better", tolerance=0.05, reduce="geomean", match=match,
                applicability="comparable", note="why")
    measured = published.Claim(id="m", **base)
    proxy = published.Claim(id="p", evidence="proxy", **base)
    built = published.Claim(id="b", evidence="by_construction", **base)
    out = {o.claim.id: o for o in published.evaluate([measured, proxy, built], data)}
    assert out["m"].verdict == published.REPRODUCED
    assert out["p"].verdict == published.PROXY and "moves as the claim does" in out["p"].text
    assert out["b"].verdict == published.BY_CONSTRUCTION
    run = Dataset.load(root).view("h200", "prefill_kv_tiles").run.rsplit("/", 1)[-1]
    assert f"run {run}" in out["m"].text and "95% CI" in out["m"].text


def test_project_claims_label_the_seed_001_proxies_and_fp8_bytes():
    claims = {c.id: c for c in published.load_claims()}
    assert all(c.evidence == "proxy" for i, c in claims.items() if i.startswith("s001_"))
    assert claims["s002_fp8_vs_bf16"].evidence == "by_construction"


def test_load_returns_the_frame_in_one_call(tmp_path):
    import schedlab_analysis
    root = synth.full_tree(tmp_path / "results")
    df = schedlab_analysis.load(root)
    assert isinstance(df, pd.DataFrame) and {"run", "binary_sha256", "time_us"} <= set(df.columns)
    assert np.isfinite(df["time_us"]).any()


def test_a_view_is_computed_once_and_handed_out_as_a_copy(tmp_path, monkeypatch):
    root = tmp_path / "results"
    two_calls(root, run_ids=("call-1", "call-2"))
    ds = Dataset.load(root)
    calls = []
    real = stats.speedups
    monkeypatch.setattr(stats, "speedups", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = ds.view("h200", "decode_x", run="call-1")
    first.summary["time_us"] = 0.0  # a caller changing its copy
    first.speedups.loc[:, "speedup"] = 0.0
    first.label_columns.append("x")
    again = ds.view("h200", "decode_x", run="call-1")
    assert len(calls) == 1
    assert (again.summary["time_us"] > 0).all() and (again.speedups["speedup"] > 0).all()
    assert "x" not in again.label_columns
    ds.view("h200", "decode_x")  # the default run is a view of its own
    assert len(calls) == 2


def test_a_paged_peer_meets_our_configuration_of_its_own_page(tmp_path):
    """A paged peer (page > 0) is the same configuration as ours only at the same page: one key
    a page is not sixteen. A contiguous peer (no page) meets ours whatever our page."""
    root = tmp_path / "results"
    shape = {"batch": 16, "q_heads": 32, "kv_heads": 8, "head_dim": 128, "context": 4096, "window": 0,
             "_name": "batch:{batch}/context:{context}/page:{page_size}"}
    ours = [dict(shape, page_size=p) for p in (1, 16)]
    run = {"run_id": "one-call"}
    synth.experiment_run(root, "decode_x", "decode", "a", {"a": 1.0}, ours, noise=0.0, context=run)
    # The paged peer is slower at page 1 than at 16, so a mix-up shows in the rates.
    for page, factor, stamp in ((1, 1.5, "20261120T120100Z"), (16, 1.0, "20261120T120200Z")):
        synth.experiment_run(root, "peers_decode", "decode", "paged", {"paged": factor},
                             [dict(shape, page_size=page)], peer=True, noise=0.0, context=run, stamp=stamp)
    contiguous = {k: v for k, v in shape.items() if k != "_name"}
    synth.experiment_run(root, "peers_decode", "decode", "paged", {"contiguous": 1.2}, [contiguous], peer=True,
                         noise=0.0, context=run, stamp="20261120T120300Z")
    view = Dataset.load(root).view("h200", "decode_x")
    paged = view.peers[view.peers["variant"] == "paged"].set_index("config")
    labels = {p: view.summary.loc[view.summary["page"] == p, "config"].iloc[0] for p in (1, 16)}
    assert set(paged.index) == set(labels.values())
    assert paged.loc[labels[1], "time_us"] == pytest.approx(1.5 * paged.loc[labels[16], "time_us"])
    assert len(view.peers[view.peers["variant"] == "contiguous"]) == 1
