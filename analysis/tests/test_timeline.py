"""schedlab_analysis.timeline: the per-CTA timeline counters of a timeline build, on synthetic files."""
import gzip
import json

import pytest

from schedlab_analysis import load, timeline

BASE = "decode_work_partition/{v}/fp8_e4m3/batch:31/{c}/page:16/iterations:1/manual_time"
TL = {"tl_k0_ctas": 576, "tl_k0_start_last": 34.3, "tl_k0_end_p10": 32.8, "tl_k0_end_p50": 35.1,
      "tl_k0_end_p90": 41.0, "tl_k0_end": 48.4, "tl_k0_cta_p50": 33.2, "tl_k0_tail_idle": 0.172, "tl_span": 48.4}


def _record(name, real_time, counters, aggregate=None):
    r = {"name": name + (f"_{aggregate}" if aggregate else ""), "run_type": "aggregate" if aggregate else "iteration",
         "real_time": real_time, **counters}
    if aggregate:
        r["aggregate_name"] = aggregate
    return r


def _write(path, records, timeline="on: each CTA's start, end and SM recorded"):
    with gzip.open(path, "wt") as f:
        json.dump({"context": {"cta_timeline": timeline}, "benchmarks": records}, f)
    return path


def test_rows_are_the_median_records(tmp_path):
    ragged = BASE.format(v="token_balanced", c="lengths:16x128+1x32768")
    twin = BASE.format(v="split", c="context:2048")
    combine = dict(TL, tl_gap=-2.3, tl_k1_end=51.0, tl_span=51.0)
    f = _write(tmp_path / "sweep.json.gz", [
        _record(ragged, 51.9, TL), _record(ragged, 51.5, dict(TL, tl_k0_end=99.0)),
        _record(ragged, 51.5, TL, aggregate="median"), _record(ragged, 51.6, TL, aggregate="mean"),
        _record(twin, 42.6, combine, aggregate="median")])
    rows = timeline.timeline_rows([f]).set_index("variant")
    assert list(rows.index) == ["token_balanced", "split"]
    assert rows.loc["token_balanced", "config"] == "fp8_e4m3/batch:31/lengths:16x128+1x32768/page:16"
    assert rows.loc["token_balanced", "tl_k0_end"] == 48.4  # the median record's, not a repetition's
    assert rows.loc["split", "tl_k1_end"] == 51.0
    md = timeline.markdown([f], ["lengths:"])
    assert "| token_balanced | 51.5 | 576 | 34.3 | 32.8 / 35.1 / 41.0 / 48.4 | 17% |  |" in md
    assert "split" not in md.split("\n\n")[0].split("\n", 2)[2]  # the twin filtered out
    assert "| split | 42.6 | 576 |" in timeline.markdown([f])
    with pytest.raises(ValueError, match="no configuration"):
        timeline.markdown([f], ["batch:7/"])


def test_files_without_timelines_are_errors(tmp_path):
    name = BASE.format(v="split", c="context:2048")
    off = _write(tmp_path / "off.json.gz", [_record(name, 42.0, TL, aggregate="median")], timeline="off")
    with pytest.raises(ValueError, match="not from a build with per-CTA timelines"):
        timeline.timeline_rows([off])
    bare = _write(tmp_path / "bare.json.gz", [_record(name, 42.0, {}, aggregate="median")])
    with pytest.raises(ValueError, match="no benchmark with per-CTA timeline counters"):
        timeline.timeline_rows([bare])
    assert timeline.main([str(bare)]) == 1
    with pytest.raises(ValueError, match="not a results file"):
        timeline.timeline_rows([tmp_path / "x.csv"])


def test_directory_scans_leave_timelines_out(tmp_path):
    run = tmp_path / "h200" / "decode_work_partition"
    run.mkdir(parents=True)
    kept = _write(run / "20261126T000000Z-abc.json.gz", [])
    tl = tmp_path / "h200" / load.TIMELINES_DIR / "decode_work_partition" / "20261126T000000Z-abc"
    tl.mkdir(parents=True)
    _write(tl / "sweep.json.gz", [])
    assert load.iter_json_files(tmp_path) == [kept]
