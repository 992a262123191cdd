import json
import warnings

import numpy as np
import pandas as pd
import pytest

import synth
from schedlab_analysis import load
from schedlab_analysis.dataset import Dataset


@pytest.fixture()
def tree(tmp_path):
    return synth.full_tree(tmp_path / "results")


def test_one_row_per_record_with_label_counters_context_and_source(tree):
    df = load.load_results(tree)
    # decode: 2 variants x 4 configs, prefill 2 x 3, peers 2 x 4 and 2 x 3; each ok benchmark has
    # 6 iteration rows + 4 aggregates, each failed/skipped one a single row.
    ok_benchmarks = 2 * 4 - 2 + 2 * 3 + 2 * 4 + 2 * 3
    assert len(df) == ok_benchmarks * 10 + 2
    row = df[(df["experiment"] == "decode_kv_streaming") & (df["variant"] == "streaming")
             & (df["run_type"] == "iteration")].iloc[0]
    assert row["family"] == "decode" and row["baseline"] == "resident" and row["dtype"] == "bf16"
    assert row["peer"] == 0
    assert row["ctx_device"] == "NVIDIA H200" and row["ctx_copy_bandwidth_GBps"] == "4250.0"
    assert row["device_slug"] == "h200"
    assert row["source_file"].endswith("20261120T120000Z-0123456789.json")
    assert row["benchmark"].startswith("decode_kv_streaming/streaming/bf16/") and "manual_time" not in row["benchmark"]
    assert set(row["axes"].split(",")) == {"batch", "context", "head_dim", "kv_heads", "page", "page_size",
                                           "q_heads", "window", "num_splits"}
    assert row["name_axes"] == "batch,context,page" and row["page"] == 16
    assert row["flops"] > 0 and row["time_us"] == row["real_time"]  # time_unit us


def test_errors_and_skips_have_no_time(tree):
    df = load.load_results(tree)
    failed = df[df["status"] == "failed"]
    skipped = df[df["status"] == "skipped"]
    assert len(failed) == 1 and failed["error_message"].iloc[0].startswith("accuracy gate failed")
    assert len(skipped) == 1 and skipped["error_message"].iloc[0].startswith("skipped: ")
    assert df.loc[df["status"] != "ok", "time_us"].isna().all()
    assert df.loc[df["aggregate_name"] == "cv", "time_us"].isna().all()  # cv is a ratio, not a time


def test_peers_are_flagged(tree):
    df = load.load_results(tree)
    peers = df[df["peer"] == 1]
    assert set(peers["experiment"]) == {"peers_decode", "peers_prefill"}
    assert set(peers["variant"]) == {"sdpa_flash", "sdpa_cudnn"}
    assert (peers["ctx_timing"] == "kernel time (torch.profiler)").all()


def test_samples_prefer_iterations_and_fall_back_to_aggregates(tmp_path):
    root = tmp_path / "results"
    synth.experiment_run(root, "e_iter", "prefill", "a", {"a": 1.0}, synth.PREFILL_CONFIGS[:1], reps=5)
    synth.experiment_run(root, "e_agg", "prefill", "a", {"a": 1.0}, synth.PREFILL_CONFIGS[:1], reps=5,
                         iterations=False)
    s = load.samples(load.load_results(root))
    it = s[s["experiment"] == "e_iter"]
    agg = s[s["experiment"] == "e_agg"]
    assert len(it) == 5 and not it["from_aggregate"].any()
    assert len(agg) == 1 and agg["from_aggregate"].all() and agg["aggregate_name"].iloc[0] == "median"


def test_time_units_are_converted(tmp_path):
    rec = {"name": "x/manual_time", "run_name": "x/manual_time", "run_type": "iteration", "real_time": 2.0,
           "time_unit": "ms", "label": "family=f;experiment=x;variant=v;baseline=v"}
    path = synth.write_results_file(tmp_path / "d" / "x" / "r.json", {"device": "NVIDIA H200"}, [rec])
    assert load.load_results(path)["time_us"].iloc[0] == pytest.approx(2000.0)


def test_non_benchmark_json_is_skipped_and_other_kinds_are_found(tree):
    files = load.iter_json_files(tree)
    kinds = {f.name: load.file_kind(f, load.read_json(f)) for f in files}
    assert kinds["notes.json"] == "other" and kinds["resources.json"] == "resources"
    assert sorted(k for k in kinds.values() if k in ("stalls", "probes")) == ["probes", "stalls"]
    assert set(load.load_results(tree)["source_file"]).isdisjoint({str(f) for f in files if kinds[f.name] != "benchmarks"})


def test_malformed_file_error_names_the_file(tmp_path):
    bad = tmp_path / "h200" / "x" / "broken.json"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"benchmarks": [', encoding="utf-8")
    with pytest.raises(load.ResultsFileError, match="broken.json: malformed JSON"):
        load.load_results(tmp_path)
    bad.write_text(json.dumps({"context": {}, "benchmarks": {"name": "x"}}), encoding="utf-8")
    with pytest.raises(load.ResultsFileError, match="broken.json: 'benchmarks' is not a list"):
        load.load_results(tmp_path)


def test_latest_run_per_benchmark_wins(tmp_path):
    root = tmp_path / "results"
    cfg = synth.PREFILL_CONFIGS[:1]
    synth.experiment_run(root, "e", "prefill", "a", {"a": 1.0}, cfg, stamp="20261101T000000Z", sha="old")
    synth.experiment_run(root, "e", "prefill", "a", {"a": 2.0}, cfg, stamp="20261102T000000Z", sha="new")
    df = load.load_results(root)
    latest = load.latest_runs(df)
    assert df["source_file"].nunique() == 2
    assert latest["source_file"].nunique() == 1 and latest["source_file"].iloc[0].endswith("-new.json")


def test_label_and_name_axes_parsing():
    assert load.parse_label("family=decode;peer=1;scale=0.5;variant=x") == {
        "family": "decode", "peer": 1, "scale": 0.5, "variant": "x"}
    assert load.name_axes("exp/v/bf16/batch:16/context:1024/manual_time") == {"batch": 16, "context": 1024}


def test_records_and_resources(tree):
    stalls = load.load_records(tree, "stalls")
    probes = load.load_records(tree, "probes")
    res = load.load_resources(tree)
    assert len(stalls) == 2 and set(stalls["experiment"]) == {"prefill_kv_tiles"}
    assert np.allclose(sorted(stalls["memwait_share"]), [0.19, 0.31])
    assert {"wait_async_wait", "wait_block_barrier"} <= set(probes.columns)
    assert len(res) == 6 and set(res["target"]) == {"sm_90a", "gfx950"}


def test_empty_directory_gives_empty_frame_with_columns_and_a_warning(tmp_path):
    (tmp_path / "notes.json").write_text("{}")  # JSON, but no benchmark results
    with pytest.warns(load.NoResultsWarning, match=f"no benchmark results files .* in {tmp_path}$"):
        df = load.load_results(tmp_path)
    assert df.empty and set(load.BASE_COLUMNS) <= set(df.columns)
    assert isinstance(load.samples(df), pd.DataFrame)
    with pytest.warns(load.NoResultsWarning):
        assert load(str(tmp_path)).empty
    with warnings.catch_warnings():  # profiles are optional: an empty folder is no news there
        warnings.simplefilter("error")
        assert load.load_records(tmp_path, "stalls").empty and load.load_resources(tmp_path).empty
        assert Dataset.load(tmp_path).empty  # says so through .empty


def test_warning_names_only_the_empty_path(tree, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.warns(load.NoResultsWarning) as caught:
        df = load.load_results([tree, empty])
    assert len(df) == len(load.load_results(tree))
    assert [str(w.message).rsplit(" in ", 1)[1] for w in caught] == [str(empty)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load.load_results(tree)


def test_a_path_that_does_not_exist_is_an_error(tree, tmp_path):
    wrong = tmp_path / "wrong" / "path"
    for call in (lambda: load(str(wrong)), lambda: load.load_results([tree, wrong]),
                 lambda: load.load_records(wrong, "stalls"), lambda: load.load_resources(wrong),
                 lambda: load.iter_json_files(wrong)):
        with pytest.raises(FileNotFoundError, match="no such results file or folder") as e:
            call()
        assert e.value.filename == str(wrong)
    assert len(Dataset.load([tree, wrong]).results) == len(load.load_results(tree))  # a fresh clone: no results yet


def test_configuration_comes_from_name_axes_when_names_spell_them(tree):
    df = load.load_results(tree)
    decode = df[df["experiment"] == "decode_kv_streaming"]
    # num_splits differs between the variants (a plan property): it must not split configurations.
    assert decode.groupby("variant")["num_splits"].first().to_dict() == {"resident": 8, "streaming": 4}
    assert load.config_columns(decode) == ["batch", "context", "page", "dtype"]
    prefill = df[df["experiment"] == "prefill_kv_tiles"]
    assert "seq_len" in load.config_columns(prefill) and "dtype" in load.config_columns(prefill)


def test_a_directory_scan_leaves_older_builds_out(tmp_path):
    """results/<device>/builds/ holds the older build of a comparison of builds (same call):
    a scan of the tree must not mix it into the call's run; naming the file still loads it."""
    newer = synth.experiment_run(tmp_path, "prefill_demo", "prefill", "base", {"base": 1.0}, synth.PREFILL_CONFIGS,
                                 sha="bbbbbbbbbb")
    older = synth.experiment_run(tmp_path / "h200" / load.OLDER_BUILDS_DIR, "prefill_demo", "prefill", "base",
                                 {"base": 1.0}, synth.PREFILL_CONFIGS, sha="aaaaaaaaaa", device_slug="")
    assert load.iter_json_files(tmp_path) == [newer]
    assert set(load.load_results([newer, older])["source_file"]) == {str(newer), str(older)}
