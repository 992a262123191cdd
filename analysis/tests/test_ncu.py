import json
import os
import stat
import sys
from pathlib import Path

import pytest

import synth
from schedlab_analysis import load, ncu

FIXTURES = Path(__file__).parent / "fixtures"


def test_hand_written_raw_csv_gives_known_shares():
    table = ncu.parse_ncu_csv(FIXTURES / "ncu_raw_two_launches.csv")
    assert list(table["id"]) == [0, 1]
    assert table["kernel"][1] == "void schedlab::decode_kernel<resident>(Params)"
    assert table["gpu_time_ns"].tolist() == pytest.approx([251_230.0, 1_615_200.0])  # usecond, "1,615.20"
    assert table["memwait_share"].tolist() == pytest.approx([0.40, 0.50])
    assert table["stall_long_scoreboard"].tolist() == pytest.approx([0.2, 0.4])
    assert table["stall_barrier"].tolist() == pytest.approx([0.3, 0.2])
    assert table["share_sum"].tolist() == pytest.approx([1.0, 1.0])
    assert "stall_gmma" not in table  # absent from this CSV: not invented


def test_real_h200_capture_matches_the_definition():
    raw, units = ncu.read_ncu_csv(FIXTURES / "ncu_raw_h200_cudnn_sdpa.csv")
    assert units[ncu.METRIC_TIME] == "ns" and len(raw) == 1
    table = ncu.stall_breakdown(raw, units)
    row = table.iloc[0]
    latency = ncu.parse_number(raw[ncu.METRIC_LATENCY].iloc[0])
    memwait = sum(ncu.parse_number(raw[ncu.stall_metric(r)].iloc[0]) for r in ncu.MEMWAIT_REASONS) / latency
    assert row["memwait_share"] == pytest.approx(memwait)
    assert row["memwait_share"] == pytest.approx(0.168, abs=0.005)
    assert row["share_sum"] == pytest.approx(1.0, abs=0.02)  # every reason, gmma included
    assert row["gpu_time_ns"] > 100_000  # "216,832" with the separator parsed


def test_memwait_reasons_are_defined_once():
    assert ncu.MEMWAIT_REASONS == ("long_scoreboard", "short_scoreboard", "lg_throttle", "mio_throttle")
    assert set(ncu.MEMWAIT_REASONS) <= set(ncu.STALL_REASONS)
    package = Path(ncu.__file__).parent
    defining = [f.name for f in package.glob("*.py") if '"long_scoreboard", "short_scoreboard", "lg_throttle"'
                in f.read_text(encoding="utf-8")]
    assert defining == ["ncu.py"]
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    assert all(r in readme for r in ncu.MEMWAIT_REASONS)


def test_csv_without_header_is_an_error():
    with pytest.raises(ncu.NcuCsvError, match="no raw-page header"):
        ncu.read_ncu_csv("==PROF== Connected\n==ERROR== The application returned an error\n")


def test_parse_number():
    assert ncu.parse_number("217,088") == 217088.0
    assert ncu.parse_number("1,615.20") == 1615.2
    assert ncu.parse_number("n/a") != ncu.parse_number("n/a")  # NaN


def test_ncu_command_profiles_one_launch_after_the_accuracy_check():
    cmd = ncu.ncu_command("build/bench_decode", ncu.benchmark_filter_for("decode/streaming/batch:16/manual_time"),
                          "out.csv", "decode_kernel")
    assert cmd[0] == "ncu"
    joined = " ".join(cmd)
    for part in ("--clock-control none", "--csv", "--page raw", "--launch-skip 1", "--launch-count 1",
                 "-k regex:decode_kernel", "--log-file out.csv"):
        assert part in joined
    metrics = cmd[cmd.index("--metrics") + 1].split(",")
    assert ncu.METRIC_LATENCY in metrics and ncu.stall_metric("long_scoreboard") in metrics
    assert cmd[-3:] == ["build/bench_decode", "--benchmark_filter=^decode/streaming/batch:16(/manual_time)?$",
                        "--schedlab_profile_once"]
    with pytest.raises(ValueError):
        ncu.ncu_command("b", "f", "o.csv", "")


def test_write_stall_file_names_and_context(tmp_path):
    ctx = dict(synth.DEVICE_CONTEXT, experiment="e")
    path = ncu.write_stall_file([{"benchmark": "e/a/manual_time", "memwait_share": 0.2}], ctx, tmp_path / "h200" / "e",
                                extra_context={"profiler": "ncu test"})
    again = ncu.write_stall_file([{"benchmark": "e/a", "memwait_share": 0.3}], ctx, tmp_path / "h200" / "e")
    assert path.name.startswith("stalls-") and path.name.endswith("-0123456789.json") and again != path
    data = json.loads(path.read_text())
    assert data["context"]["schedlab_commit"] == ctx["schedlab_commit"] and data["context"]["profiler"] == "ncu test"
    recs = load.load_records(tmp_path, "stalls")
    assert set(recs["benchmark"]) == {"e/a"} and len(recs) == 2


@pytest.mark.skipif(sys.platform == "win32", reason="uses a shell-script stand-in for ncu")
def test_profile_runs_ncu_per_benchmark_and_writes_one_stall_file(tmp_path):
    root = tmp_path / "results"
    run = synth.experiment_run(root, "decode_kv_streaming", "decode", "resident",
                               {"resident": 1.0, "streaming": 0.9}, synth.DECODE_CONFIGS[:1])
    fake = tmp_path / "fake_ncu"
    # Stands in for ncu: copies the fixture to the --log-file path, as ncu writes its report there.
    fake.write_text("#!/bin/sh\n"
                    "if [ \"$1\" = --version ]; then echo 'Version 2025.3.1.0 (fake)'; exit 0; fi\n"
                    "while [ $# -gt 0 ]; do if [ \"$1\" = --log-file ]; then out=$2; fi; shift; done\n"
                    f"cp '{FIXTURES / 'ncu_raw_two_launches.csv'}' \"$out\"\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    path = ncu.profile(Path("bench"), run, "decode_kernel", ncu=str(fake))
    assert path.parent == run.parent and path.name.startswith("stalls-")
    data = json.loads(path.read_text())
    assert data["context"]["profiler"].startswith("ncu Version 2025.3.1.0")
    assert {r["benchmark"] for r in data["records"]} == {
        "decode_kv_streaming/resident/bf16/batch:1/context:4096/page:16",
        "decode_kv_streaming/streaming/bf16/batch:1/context:4096/page:16"}
    assert len(data["records"]) == 4 and all("memwait_share" in r for r in data["records"])
    assert len(list(Path(data["context"]["profiler_raw_dir"]).glob("*.csv"))) == 2


def test_cli_parse_prints_shares(capsys):
    assert ncu.main(["parse", str(FIXTURES / "ncu_raw_two_launches.csv")]) == 0
    out = capsys.readouterr().out
    assert "memwait_share" in out and "0.4" in out
    assert ncu.main(["parse", os.devnull]) == 2
