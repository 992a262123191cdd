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


def _span_file(path, launches):
    """launches: {launch: [(cta, sm, start_ns, end_ns), ...]} as the timeline build writes them."""
    lines = ["launch,kernel,cta,sm,start_ns,end_ns"]
    for launch, ctas in launches.items():
        lines += [f"{launch},0,{c},{sm},{s},{e}" for c, sm, s, e in ctas]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_spans_per_launch_and_the_spread_of_one_pair_on_one_sm(tmp_path):
    from schedlab_analysis.timeline import launch_table, pair_spread, read_spans
    # Four CTAs on two SMs; in launch 1 the same pairs sit on the same SMs but SM 0 ends 5 us
    # later, in launch 2 the pairs swap SMs (no pair repeats there).
    a = _span_file(tmp_path / "a.csv", {
        0: [(0, 0, 1000, 11000), (1, 1, 1000, 9000), (2, 0, 1000, 10000), (3, 1, 1000, 3000)],
        1: [(0, 0, 2000, 17000), (1, 1, 2000, 10000), (2, 0, 2000, 16000), (3, 1, 2000, 4000)],
        2: [(0, 1, 0, 10000), (1, 0, 0, 8000), (2, 1, 0, 9000), (3, 0, 0, 2000)]})
    spans = read_spans([a])
    launches = launch_table(spans, 4, 1)
    assert list(launches["span_us"]) == [10.0, 10.0, 15.0]
    assert launches.iloc[-1]["tail_sms"] == (1,)
    pairs = pair_spread(spans, 4)
    top = pairs.iloc[0]
    assert (top["sm"], top["ctas"], top["spread_us"]) == (0, (0, 2), 5.0)
    assert len(pairs) == 2  # SM 0 with (0, 2) and SM 1 with (1, 3), each twice
    assert launch_table(spans, 5, 1).empty  # no launch of five CTAs


def test_span_files_are_checked(tmp_path):
    from schedlab_analysis.timeline import read_spans
    bad = tmp_path / "bad.csv"
    bad.write_text("launch,cta,sm\n0,0,1\n")
    with pytest.raises(ValueError, match="not a CTA span file"):
        read_spans([bad])
    torn = _span_file(tmp_path / "torn.csv", {0: [(0, 0, 5000, 1000)]})
    with pytest.raises(ValueError, match="ends before it starts"):
        read_spans([torn])


def test_launches_by_where_the_tail_lands_and_each_sm_blocks_pace(tmp_path):
    from schedlab_analysis.timeline import read_spans, sm_block_ends, tail_on_sms
    # Six CTAs on SMs 0, 1 and 8; CTA 5 is the tail. Launch 0 puts it on SM 8 (the top range
    # from SM 8), launches 1 and 2 on SM 0; they end at 12, 12 and 14 us. SM 8 (block 8) runs
    # two head CTAs in launches 1 and 2, ending at 6 and 8 us; in block 0, SMs with two head
    # CTAs end at 10 and 12 (launch 0), 11 (SM 0, launch 1) and 14 (SM 1, launch 2).
    f = _span_file(tmp_path / "p.csv", {
        0: [(0, 0, 0, 10000), (1, 1, 0, 12000), (2, 0, 0, 9000), (3, 1, 0, 11000), (4, 8, 0, 7000), (5, 8, 0, 1000)],
        1: [(0, 8, 0, 6000), (1, 1, 0, 12000), (2, 8, 0, 5000), (3, 0, 0, 11000), (4, 0, 0, 10000), (5, 0, 0, 1000)],
        2: [(0, 8, 0, 8000), (1, 1, 0, 14000), (2, 8, 0, 7000), (3, 1, 0, 13000), (4, 0, 0, 9000), (5, 0, 0, 1000)]})
    spans = read_spans([f])
    by_top = tail_on_sms(spans, 6, 1, 8)
    assert by_top.to_dict("records") == [{"on_top": 0, "launches": 2, "min_us": 12.0, "max_us": 14.0},
                                         {"on_top": 1, "launches": 1, "min_us": 12.0, "max_us": 12.0}]
    blocks = sm_block_ends(spans, 6, 1).set_index("first_sm")
    assert blocks.loc[0, "sms_seen"] == 4 and blocks.loc[0, "mean_end_us"] == pytest.approx((10 + 12 + 11 + 14) / 4)
    assert blocks.loc[8, "sms_seen"] == 2 and blocks.loc[8, "mean_end_us"] == pytest.approx(7.0)
    assert tail_on_sms(spans, 7, 1, 8).empty
