"""Probe counters in a results file become probes-*.json records the loader reads."""
import json

from schedlab_analysis import probes
from schedlab_analysis.load import load_records


def _results(tmp_path):
    bench = {"name": "decode_x/streaming/bf16/batch:16/context:16384/page:16/manual_time", "run_type": "iteration",
             "repetition_index": 0, "real_time": 250.0, "time_unit": "us",
             "label": "family=decode;experiment=decode_x;variant=streaming;baseline=resident;dtype=bf16;peer=0",
             "probe_wait_async_copy": 0.30, "probe_wait_block_barrier": 0.05, "probe_total_cycles": 1e9}
    data = {"context": {"schedlab_commit": "abc", "schedlab_dirty": "false", "device": "NVIDIA H200"},
            "benchmarks": [bench, dict(bench, repetition_index=1),
                           dict(bench, run_type="aggregate", aggregate_name="median")]}
    p = tmp_path / "20261121T000000Z-abc.json"
    p.write_text(json.dumps(data))
    return p


def test_records_sum_wait_points_once_per_benchmark(tmp_path):
    recs = probes.probe_records(json.loads(_results(tmp_path).read_text()))
    assert len(recs) == 1
    assert recs[0]["benchmark"] == "decode_x/streaming/bf16/batch:16/context:16384/page:16"
    assert abs(recs[0]["wait_cycles_share"] - 0.35) < 1e-12
    assert abs(recs[0]["wait_async_copy"] - 0.30 * 1e9) < 1.0  # cycles


def test_cli_writes_a_probes_file_the_loader_reads(tmp_path):
    assert probes.main([str(_results(tmp_path))]) == 0
    table = load_records([tmp_path], "probes")
    assert len(table) == 1 and abs(float(table["wait_cycles_share"].iloc[0]) - 0.35) < 1e-12


def test_cli_fails_without_probe_counters(tmp_path):
    p = tmp_path / "r.json"
    p.write_text(json.dumps({"context": {}, "benchmarks": [{"name": "x/manual_time", "run_type": "iteration"}]}))
    assert probes.main([str(p)]) == 1
