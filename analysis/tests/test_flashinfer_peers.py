"""analysis/peers/flashinfer_peers.py without a GPU: the lengths grammar (the harness's), the
names and records, and the discovery of decode configurations from our results files, read back
through schedlab_analysis so that the peer rows join our decode experiment."""
from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from peer_script import import_peer_script

from schedlab_analysis import dataset, load
import synth

SCRIPT = Path(__file__).resolve().parents[1] / "peers" / "flashinfer_peers.py"
ACC = {"rel_l2_err": 0.003, "max_abs_err": 0.001, "mismatch_pct": 0.0}


@pytest.fixture(scope="module")
def fi():
    return import_peer_script("flashinfer_peers", ("torch", "flashinfer"))


def test_lengths_lists_and_repeats(fi):
    assert fi.parse_lengths("1+65536+300") == [1, 65536, 300]
    assert fi.parse_lengths("3x7+1x9+2") == [7, 7, 7, 9, 2]
    assert fi.parse_lengths("4096") == [4096]


def test_named_distributions_draw_what_the_harness_draws(fi):
    # common/harness/axes.cpp parse_lengths, compiled and run: the same SplitMix64 sequence.
    assert fi.parse_lengths("uniform:6:256-4096") == [3042, 2236, 3107, 3105, 3602, 460]
    assert fi.parse_lengths("one_long:5:131072:256-4096") == [131072, 3042, 2236, 3107, 3105]
    assert fi.parse_lengths("one_long:1:5000:1-2") == [5000]
    assert fi.parse_lengths("uniform:3:9-9") == [9, 9, 9]


@pytest.mark.parametrize("spec, fault", [
    ("zipf:4:1-9", "unknown distribution 'zipf'"), ("uniform:4", "uniform:BATCH:MIN-MAX"),
    ("one_long:4:100", "one_long:BATCH:LONG:MIN-MAX"), ("uniform:4:9-1", "MIN > MAX"),
    ("uniform:4:9", "expected a range MIN-MAX"), ("1+0+3", "below 1"), ("1++3", "not a whole number"),
    ("0x5", "below 1"), ("70000x1", "more than 65536"), ("-3", "not a whole number")])
def test_malformed_specs_name_their_fault(fi, spec, fault):
    with pytest.raises(ValueError, match=fault.replace("+", r"\+")):
        fi.parse_lengths(spec)


def test_names_follow_our_decode_names(fi):
    c = fi.Config("bf16", 16, 16384)
    assert fi.bench_name("flashinfer_tc", c) == "peers_decode/flashinfer_tc/bf16/batch:16/context:16384/page:16"
    r = fi.Config.ragged("4x1024+1x65536", "fp8_e4m3", page=32, q_heads=64, kv_heads=1)
    assert (r.batch, r.context) == (5, 65536)
    assert fi.bench_name("flashinfer_cuda_core", r) == \
        "peers_decode/flashinfer_cuda_core/fp8_e4m3/batch:5/lengths:4x1024+1x65536/page:32/q_heads:64/kv_heads:1"
    assert fi.label("flashinfer_cuda_core", r) == ("family=decode;experiment=peers_decode;variant=flashinfer_cuda_core;"
                                                   "baseline=flashinfer_tc;dtype=fp8_e4m3;peer=1")
    # Round trip: a name spells the configuration it was made from.
    for cfg in (c, r, fi.Config("bf16", 8, 8191, 16, 64, 1)):
        assert fi.config_from_name(fi.bench_name("flashinfer_tc", cfg) + "/manual_time") == cfg
    assert fi.config_from_name("decode_x/v/bf16/batch:1/context:9/page:16/window:128/manual_time") is None
    assert fi.config_from_name("prefill_x/v/bf16/seq:1024/head_dim:128/causal:0") is None


def test_work_as_the_harness_declares_it(fi):
    axes, flops, nbytes = fi.work(fi.Config("bf16", 16, 16384))
    assert flops == 4294967296 and nbytes == 1074003968  # the numbers of our decode results
    axes, flops, nbytes = fi.work(fi.Config.ragged("1+65536+300", "fp8_e4m3"))
    keys = 1 + 65536 + 300
    assert flops == 4.0 * keys * 128 * 32
    assert nbytes == 2.0 * keys * 8 * 128 * 1 + 2.0 * 3 * 32 * 128 * 2
    assert axes == {"batch": 3, "q_heads": 32, "kv_heads": 8, "head_dim": 128, "page_size": 16, "context": 65536,
                    "window": 0}


def test_refusal_is_a_skip_and_other_errors_fail(fi):
    c = fi.Config("bf16", 8, 8191, 16, 64, 1)
    skip = fi.failure_record("flashinfer_cuda_core", c, "RuntimeError: Unsupported group_size: 64")
    assert skip["error_occurred"] and skip["error_message"].startswith("skipped: FlashInfer refused: ")
    fail = fi.failure_record("flashinfer_cuda_core", c, "RuntimeError: ninja build failed")
    assert fail["error_occurred"] and not fail["error_message"].startswith("skipped: ")


def test_default_grid(fi):
    cs = fi.default_configs()
    assert len(cs) == 2 * 12 and {c.dtype for c in cs} == {"bf16", "fp8_e4m3"}
    assert {(c.batch, c.context) for c in cs} == {(b, n) for b in (1, 16, 64) for n in (1024, 4096, 16384, 65536)}


def _our_decode_run(root: Path):
    """A decode experiment of ours: uniform bf16 and fp8, a ragged batch, and MQA heads; counters
    as kernels/decode/decode_case.hpp writes them (context: the longest sequence)."""
    def cfg(name, batch, context, q=32, kv=8, keys=None, dt=2):
        keys = keys if keys is not None else batch * context
        return {"batch": batch, "context": context, "page_size": 16, "q_heads": q, "kv_heads": kv, "head_dim": 128,
                "window": 0, "_name": name, "_flops": 4.0 * keys * 128 * q,
                "_bytes": 2.0 * keys * kv * 128 * dt + 2.0 * batch * q * 128 * 2}
    uniform = [cfg("batch:16/context:16384/page:16", 16, 16384)]
    ragged = [cfg("batch:3/lengths:1+65536+300/page:16", 3, 65536, keys=65837),
              cfg("batch:8/context:8191/page:16/q_heads:64/kv_heads:1", 8, 8191, 64, 1)]
    synth.experiment_run(root, "decode_work_split", "decode", "split", {"split": 1.0, "even": 1.1},
                         uniform + ragged)
    synth.experiment_run(root, "decode_kv_fp8", "decode", "split", {"split": 1.0}, uniform, dtype="fp8_e4m3",
                         stamp="20261120T120500Z")


def test_discovery_and_join(fi, tmp_path):
    root = tmp_path / "results"
    _our_decode_run(root)
    # A gzipped file is read too, and a peer file or a prefill file adds nothing.
    f = sorted((root / "h200" / "decode_kv_fp8").glob("*.json"))[0]
    with open(f, "rb") as src, gzip.open(str(f) + ".gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    f.unlink()
    found = fi.discover_configs(root, log=lambda *_: None)
    assert found == [fi.Config("fp8_e4m3", 16, 16384),  # files in path order: decode_kv_fp8 first
                     fi.Config("bf16", 16, 16384), fi.Config.ragged("1+65536+300", "bf16"),
                     fi.Config("bf16", 8, 8191, 16, 64, 1)]
    recs = []
    for c in found:
        for v in fi.VARIANTS:
            if v == "flashinfer_cuda_core" and c.q_heads == 64:
                recs.append(fi.failure_record(v, c, "Unsupported group_size: 64"))
            else:
                recs.append(fi.records(v, c, [100.0, 101.0, 99.0, 100.5], ACC))
    sp = fi.sp
    ctx = {"device": "NVIDIA H200", "experiment": "peers_decode", "run_id": "r1"}
    path = sp.results_path(root, "h200", "decode", "20261120T121000Z", "0123456789", False)
    sp.write_atomic(path, sp.results_document(ctx, [r for rs in recs for r in (rs if isinstance(rs, list) else [rs])]))
    assert fi.discover_configs(root, log=lambda *_: None) == found  # our peer rows are not configurations
    df = load.load_results(root)
    peers = df[df["peer"] == 1]
    assert set(peers["status"]) == {"ok", "skipped"}
    assert (peers[peers["status"] == "skipped"]["q_heads"] == 64).all()
    view = dataset.Dataset.load(root).view("h200", "decode_work_split")
    joined = view.peers
    assert set(joined["variant"]) == {"flashinfer_tc", "flashinfer_cuda_core"}
    # bf16 only (the experiment's dtype): uniform and ragged with both variants, MQA with the tensor-core one.
    assert len(joined) == 5
    assert set(joined["config"]) == set(view.summary["config"])


def test_select_configs(fi):
    args = fi.argparse.Namespace(from_results=[], lengths=["2x100+5"], page=32, heads=["32/8", "64/1"],
                                 dtypes=["bf16"], quick=False)
    cs = fi.select_configs(args, log=lambda *_: None)
    assert cs == [fi.Config.ragged("2x100+5", "bf16", 32, 32, 8), fi.Config.ragged("2x100+5", "bf16", 32, 64, 1)]
    args.lengths = []
    assert len(fi.select_configs(args, log=lambda *_: None)) == 2 * 12  # the grid, both heads
    args.heads = ["48/7"]
    with pytest.raises(fi.SpecError, match="not a multiple"):
        fi.select_configs(args, log=lambda *_: None)
    # bf16 before fp8, whatever order they came in.
    args.heads, args.dtypes, args.lengths = ["32/8"], ["fp8_e4m3", "bf16"], ["7"]
    assert [c.dtype for c in fi.select_configs(args, log=lambda *_: None)] == ["bf16", "fp8_e4m3"]


def _fake_device(sp, monkeypatch, order):
    """The timing helpers without a GPU: each queued / whole-call time appends to ``order``."""
    monkeypatch.setattr(sp, "_spin_cycles", lambda lead_us: 1)
    monkeypatch.setattr(sp, "_events", lambda: None)
    monkeypatch.setattr(sp, "_queued_once", lambda call, flush, cycles, lead_us, ev: order.append("k") or 5.0)
    monkeypatch.setattr(sp, "_call_once", lambda call, flush, ev: order.append("c") or 7.0)


def test_peer_timing_alternates_kernel_and_call_times(fi, monkeypatch):
    sp, order = fi.sp, []
    _fake_device(sp, monkeypatch, order)
    monkeypatch.setattr(sp, "time_kernels", lambda call, flush, reps: ([6.0] * reps, ["k1", "k2"], "linkage"))
    t = sp.time_peer(None, None, 3)
    # One kernel time (as the harness takes ours) and one whole-call time per repetition,
    # alternating, so a drift in clocks reaches both; the profiler only names the kernels.
    assert order == ["k", "c"] * 3
    assert t.kernel_us == [5.0] * 3 and t.call_us == [7.0] * 3
    assert t.kernels == ["k1", "k2"] and t.profiler_kernel_us == 6.0 and "spin" in t.method
    notes = {}
    sp.note_timing(notes, "bench", t)
    assert notes["call_time_us"]["bench"]["median"] == 7.0 and notes["profiler_kernel_us"]["bench"] == 6.0


def test_unattributable_kernels_leave_the_timing_and_drop_the_profiler_sum(fi, monkeypatch):
    sp, order = fi.sp, []
    _fake_device(sp, monkeypatch, order)

    def no_attribution(call, flush, reps):
        raise RuntimeError("could not attribute kernels to calls (20 call ranges, 0 with kernels, 20 expected)")

    monkeypatch.setattr(sp, "time_kernels", no_attribution)
    t = sp.time_peer(None, None, 3)
    assert t.kernel_us == [5.0] * 3 and t.kernels == [] and t.profiler_kernel_us is None
    notes = {}
    sp.note_timing(notes, "bench", t)
    assert "profiler_kernel_us" not in notes

    def other_failure(call, flush, reps):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(sp, "time_kernels", other_failure)
    with pytest.raises(RuntimeError, match="illegal memory"):  # only a missing attribution is tolerated
        sp.time_peer(None, None, 3)
