"""schedlab_analysis.allocations: per-process times of one configuration, on synthetic files."""
import gzip
import json

import pytest

import synth

from schedlab_analysis import allocations, load

NAME = "decode_work_partition/token_balanced/bf16/batch:8/lengths:1+16/page:32/iterations:1/manual_time"
PEER = "peers_decode/flashinfer_tc/bf16/batch:8/lengths:1+16/page:32/manual_time"


def _write(path, name, times, gz=True):
    data = {"context": {}, "benchmarks": [{"name": name, "run_type": "iteration", "real_time": t, "repetition_index": i}
                                          for i, t in enumerate(times)]
            + [{"name": name + "_median", "run_type": "aggregate", "real_time": 0.0}]}
    if gz:
        with gzip.open(path, "wt") as f:
            json.dump(data, f)
    else:
        path.write_text(json.dumps(data))
    return path


def test_spread_follows_the_process(tmp_path):
    files = [_write(tmp_path / "process-1.json.gz", NAME, [127.0, 127.4, 126.8]),
             _write(tmp_path / "process-2.json.gz", NAME, [133.9, 134.1, 134.0]),
             _write(tmp_path / "process-10.json.gz", NAME, [134.2, 134.0, 134.4]),
             _write(tmp_path / "interleaved.json.gz", NAME, [125.5, 133.8, 134.0]),
             _write(tmp_path / "flashinfer-1.json", PEER, [128.5, 128.7], gz=False),
             _write(tmp_path / "flashinfer-2.json", PEER, [128.2, 128.4], gz=False)]
    t = allocations.spread_table(allocations.process_times(files)).set_index("variant")
    ours = t.loc["token_balanced"]
    assert ours["processes"] == 3
    assert ours["process_medians_us"] == [127.0, 134.0, 134.2]  # by process number, not by name
    assert ours["within"] == pytest.approx((127.4 - 126.8) / 127.0)  # processes only, not the interleaved run
    assert ours["between"] == pytest.approx((134.2 - 127.0) / 127.0)
    assert ours["interleaved_us"] == "125.5-134.0"
    fi = t.loc["flashinfer_tc"]
    assert fi["processes"] == 2 and fi["config"] == ours["config"]
    assert fi["interleaved_us"] == ""
    md = allocations.markdown(files)
    assert "| token_balanced |" in md and "127.0, 134.0, 134.2" in md and "5.7%" in md


def test_bad_files_are_errors(tmp_path):
    with pytest.raises(ValueError, match="not a results file"):
        allocations.process_times([tmp_path / "x.csv"])
    empty = tmp_path / "process-1.json"
    empty.write_text(json.dumps({"benchmarks": [{"name": NAME, "run_type": "aggregate", "real_time": 1.0}]}))
    with pytest.raises(ValueError, match="no timed repetition"):
        allocations.process_times([empty])
    assert allocations.main([str(empty)]) == 1


def test_directory_scans_leave_allocations_and_side_runs_out(tmp_path):
    run = tmp_path / "h200" / "decode_work_partition"
    run.mkdir(parents=True)
    kept = _write(run / "20261126T000000Z-abc.json.gz", NAME, [1.0])
    probe = tmp_path / "h200" / load.ALLOCATIONS_DIR / "decode_work_partition" / "20261126T000000Z-abc"
    probe.mkdir(parents=True)
    _write(probe / "process-1.json.gz", NAME, [1.0])
    side = tmp_path / "h200" / load.SIDE_DIR / "decode_work_partition"
    side.mkdir(parents=True)
    label = "family=decode;experiment=decode_work_partition;variant=v;baseline=v;dtype=bf16;peer=0"
    ctx = dict(synth.DEVICE_CONTEXT, device="NVIDIA B200")  # the path, not the context, names the device
    side_file = synth.write_results_file(side / "20261126T000000Z-abc.json",
                                         ctx, synth.benchmark_records("decode_work_partition/v/bf16", label, [1.0, 1.1], {}))
    assert load.iter_json_files(tmp_path) == [kept]
    # Named on its own, a side run's file belongs to the device above it, not to "side".
    assert set(load.load_results(side_file)["device_slug"]) == {"h200"}
