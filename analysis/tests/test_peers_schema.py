"""analysis/peers/sdpa_peers.py without a GPU: the work formulas, names, records and results file
(fed fake timings), read back through schedlab_analysis.load. torch is not needed (nor imported)."""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from schedlab_analysis import dataset, load, stats
import synth
from peer_script import import_peer_script


@pytest.fixture(scope="module")
def peers():
    return import_peer_script("sdpa_peers", ("torch",))


# ---- work, as common/problem.cpp declares it -----------------------------------------------

def test_decode_work(peers):
    # B=16, context 16k, 32 q / 8 kv heads, D=128, bf16.
    assert peers.decode_flops(16, 16384) == 4 * 16 * 16384 * 128 * 32 == 4294967296
    kv = 2 * 16 * 16384 * 8 * 128 * 2
    q_and_o = 2 * 16 * 32 * 128 * 2
    assert peers.decode_bytes(16, 16384) == kv + q_and_o == 1074003968
    assert peers.decode_bytes(1, 1024) == 2 * 1024 * 8 * 128 * 2 + 2 * 32 * 128 * 2


def test_prefill_work(peers):
    axes, flops, nbytes = peers.work("prefill", {"seq": 8192, "head_dim": 128, "causal": 0})
    assert axes["batch"] == 2 and axes["q_heads"] == axes["kv_heads"] == 16
    assert flops == 4 * 8192 * 8192 * 128 * 16 * 2 == 1099511627776
    assert nbytes == (2 + 2) * 2 * 16 * 8192 * 128 * 2 == 268435456
    _, causal_flops, causal_bytes = peers.work("prefill", {"seq": 8192, "head_dim": 128, "causal": 1})
    assert causal_flops == 4 * (8192 * 8193 // 2) * 128 * 16 * 2 == 549822922752
    assert causal_bytes == nbytes
    axes64, flops64, _ = peers.work("prefill", {"seq": 512, "head_dim": 64, "causal": 0})
    assert axes64["batch"] == 32 and axes64["q_heads"] == 32
    assert flops64 == 4 * 512 * 512 * 64 * 32 * 32


@pytest.mark.parametrize("q_len,kv_len", [(5, 5), (3, 7), (1, 4), (16, 16)])
def test_visible_pairs_matches_the_mask(peers, q_len, kv_len):
    # PrefillProblem::visible_keys: bottom-right alignment, query i sees keys <= i + kv - q.
    brute = sum(1 for i in range(q_len) for j in range(kv_len) if j <= i + kv_len - q_len)
    assert peers.visible_pairs(q_len, kv_len, True) == brute
    assert peers.visible_pairs(q_len, kv_len, False) == q_len * kv_len


def test_shapes(peers):
    assert len(peers.decode_shapes()) == 12
    pre = peers.prefill_shapes()
    assert len(pre) == 24 and {s["head_dim"] for s in pre} == {64, 128} and {s["causal"] for s in pre} == {0, 1}
    assert max(peers.tensor_bytes("decode", s) for s in peers.decode_shapes()) < peers.MEMORY_LIMIT_BYTES


def test_device_slug(peers):
    assert peers.device_slug("NVIDIA H200") == "h200"
    assert peers.device_slug("NVIDIA H100 80GB HBM3") == "h100-80gb-hbm3"
    assert peers.device_slug("AMD Instinct MI300X") == "instinct-mi300x"
    assert peers.device_slug("") == "gpu"
    for name in ("NVIDIA H200", "NVIDIA GeForce RTX 4090"):
        assert peers.device_slug(name) == load.slugify(name)


def test_names_and_labels(peers):
    assert (peers.bench_name("decode", "sdpa_cudnn", {"batch": 16, "context": 16384})
            == "peers_decode/sdpa_cudnn/bf16/batch:16/context:16384/page:0")
    assert (peers.bench_name("prefill", "sdpa_flash", {"seq": 8192, "head_dim": 128, "causal": 0})
            == "peers_prefill/sdpa_flash/bf16/seq:8192/head_dim:128/causal:0")
    assert load.parse_label(peers.label("decode", "sdpa_cudnn")) == {
        "family": "decode", "experiment": "peers_decode", "variant": "sdpa_cudnn", "baseline": "sdpa_flash",
        "dtype": "bf16", "peer": 1}


# ---- records and the results file ---------------------------------------------------------

CONTEXT = {"device": "NVIDIA H200", "arch": "sm_90", "schedlab_commit": "0123456789abcdef", "schedlab_dirty": "false",
           "timing": "kernel time (torch.profiler, sum of kernels per call)", "copy_bandwidth_GBps": "4250.000000"}
ACC = {"rel_l2_err": 0.002, "max_abs_err": 0.004, "mismatch_pct": 0.0}


def fake_family(peers, family, shapes, *, reps=7, seed=0):
    """Records as run_family builds them, from fake kernel times (rate: 4 TB/s or 500 TFLOP/s)."""
    rng = np.random.default_rng(seed)
    records = []
    for shape in shapes:
        axes, flops, nbytes = peers.work(family, shape)
        for i, variant in enumerate(peers.VARIANTS):
            t = (nbytes / 4e12 + flops / 500e12) * 1e6 * (1.0 - 0.1 * i)
            times = list(t * (1 + 0.01 * rng.standard_normal(reps)))
            records += peers.benchmark_records(peers.bench_name(family, variant, shape), peers.label(family, variant),
                                               times, axes, flops, nbytes, ACC)
    return records


def write_family(peers, root, family, records, stamp="20261120T120000Z", commit="0123456789abcdef0123"):
    path = peers.results_path(root, "h200", family, stamp, commit, False)
    return peers.write_atomic(path, peers.results_document(dict(CONTEXT, experiment=f"peers_{family}"), records))


def test_records_load_as_peers(peers, tmp_path):
    shapes = [{"batch": 16, "context": 16384}, {"batch": 1, "context": 4096}]
    records = fake_family(peers, "decode", shapes)
    records.append(peers.error_record(peers.bench_name("decode", "sdpa_cudnn", {"batch": 64, "context": 65536}),
                                      peers.label("decode", "sdpa_cudnn"), "skipped: no kernel",
                                      *peers.work("decode", {"batch": 64, "context": 65536})))
    path = write_family(peers, tmp_path / "results", "decode", records)
    assert path == tmp_path / "results" / "h200" / "peers_decode" / "20261120T120000Z-0123456789.json"
    df = load.load_results(tmp_path / "results")
    assert set(df["peer"]) == {1} and set(df["experiment"]) == {"peers_decode"} and set(df["family"]) == {"decode"}
    assert set(df["device_slug"]) == {"h200"}
    assert set(df["variant"]) == {"sdpa_flash", "sdpa_cudnn"} and set(df["baseline"]) == {"sdpa_flash"}
    ok = df[df["status"] == "ok"]
    assert set(ok["benchmark"]) == {peers.bench_name("decode", v, s) for v in peers.VARIANTS for s in shapes}
    assert set(ok["name_axes"]) == {"batch,context,page"}
    assert set(ok["axes"]) == {"batch,context,head_dim,kv_heads,page,q_heads,window"}
    assert set(load.config_columns(ok)) == {"batch", "context", "page", "dtype"}
    skipped = df[df["status"] == "skipped"]
    assert len(skipped) == 1 and skipped["time_us"].isna().all()
    # Seven repetitions per run as iteration rows, and the four aggregates.
    samp = load.samples(df)
    assert len(samp) == 7 * 4 and not samp["from_aggregate"].any()
    assert sorted(ok["aggregate_name"].dropna().unique()) == ["cv", "mean", "median", "stddev"]
    s = stats.summarize(load.latest_runs(df)).set_index("benchmark")
    b = peers.bench_name("decode", "sdpa_flash", {"batch": 16, "context": 16384})
    assert s.loc[b, "n"] == 7 and s.loc[b, "spread_kind"] == stats.SPREAD_IQR
    flops = peers.decode_flops(16, 16384)
    assert s.loc[b, "flops"] == flops and s.loc[b, "bytes"] == peers.decode_bytes(16, 16384)
    t_exp = (peers.decode_bytes(16, 16384) / 4e12 + flops / 500e12) * 1e6
    assert s.loc[b, "time_us"] == pytest.approx(t_exp, rel=0.03)
    assert s.loc[b, "rel_l2_err"] == ACC["rel_l2_err"]
    # The median aggregate agrees with the iteration rows it summarizes.
    it = ok[(ok["benchmark"] == b) & (ok["run_type"] == "iteration")]["time_us"]
    med = ok[(ok["benchmark"] == b) & (ok["aggregate_name"] == "median")]["time_us"].iloc[0]
    assert med == pytest.approx(float(np.median(it)))
    assert load.context_number(df, "copy_bandwidth_GBps") == 4250.0
    # The bootstrap speedup of cuDNN over the flash baseline, per configuration.
    latest = load.latest_runs(df)
    speed = stats.speedups(stats.summarize(latest), latest)
    assert len(speed) == 2 and set(speed["variant"]) == {"sdpa_cudnn"}


def test_prefill_peers_join_our_prefill_experiment(peers, tmp_path):
    """Our prefill names (.../seq:S/head_dim:D/causal:C, axis counters of prefill_case.hpp) and the
    peers' meet on the same configurations in Dataset.view."""
    root = tmp_path / "results"
    configs = []
    for s in (1024, 8192):
        a = peers.prefill_axes(s, 128, 0)
        configs.append(dict(a, _name="seq:{seq_len}/head_dim:{head_dim}/causal:{causal}",
                            _flops=peers.prefill_flops(a["batch"], 16, s, 128, False),
                            _bytes=peers.prefill_bytes(a["batch"], 16, 16, s, 128)))
    synth.experiment_run(root, "prefill_kv_tiles", "prefill", "kv_union", {"kv_union": 1.0, "kv_separate": 0.95},
                         configs)
    shapes = [{"seq": s, "head_dim": 128, "causal": c} for s in (1024, 8192) for c in (0, 1)]
    write_family(peers, root, "prefill", fake_family(peers, "prefill", shapes))
    data = dataset.Dataset.load(root)
    view = data.view("h200", "prefill_kv_tiles")
    assert set(view.peers["variant"]) == {"sdpa_flash", "sdpa_cudnn"}
    assert len(view.peers) == 4  # 2 configurations x 2 backends; the causal ones have no partner
    assert set(view.peers["seq_len"]) == {1024, 8192} and set(view.peers["causal"]) == {0}
    pv = data.view("h200", "peers_prefill")
    assert len(pv.summary) == 8 and (pv.summary["status"] == "ok").all()


def test_results_path_never_overwrites(peers, tmp_path):
    p1 = write_family(peers, tmp_path, "prefill", [])
    p2 = write_family(peers, tmp_path, "prefill", [])
    assert p1 != p2 and p1.exists() and p2.exists() and p2.name.endswith("-1.json")
    dirty = peers.results_path(tmp_path, "h200", "decode", "20261120T120000Z", "abcdef0123456789", True)
    assert dirty.name == "20261120T120000Z-abcdef0123-dirty.json"


def test_atomic_write_leaves_no_temp_file(peers, tmp_path, monkeypatch):
    target = tmp_path / "h200" / "peers_decode" / "20261120T120000Z-0123456789.json"
    peers.write_atomic(target, {"context": CONTEXT, "benchmarks": []})
    assert json.loads(target.read_text()) == {"context": CONTEXT, "benchmarks": []}
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]

    def boom(*a, **k):
        raise OSError("disk full")

    other = target.with_name("20261120T130000Z-0123456789.json")
    monkeypatch.setattr(peers.json, "dump", boom)
    with pytest.raises(OSError):
        peers.write_atomic(other, {"context": {}, "benchmarks": []})
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name]  # no partial, no new file


def test_git_provenance_falls_back_to_env(peers, tmp_path, monkeypatch):
    monkeypatch.setenv("SCHEDLAB_COMMIT", "feedfacefeedfacefeedface")
    monkeypatch.setenv("SCHEDLAB_DIRTY", "true")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert peers.git_provenance(tmp_path) == ("feedfacefeedfacefeedface", "true")


def test_git_head_read_without_git(peers, tmp_path, monkeypatch):
    # A copied checkout where git cannot run: HEAD is read from .git itself (loose or packed ref).
    monkeypatch.delenv("SCHEDLAB_COMMIT", raising=False)
    monkeypatch.delenv("SCHEDLAB_DIRTY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    git = tmp_path / "repo" / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    sub = tmp_path / "repo" / "analysis" / "peers"
    sub.mkdir(parents=True)
    (git / "packed-refs").write_text("# pack-refs\n" + "ab" * 20 + " refs/heads/main\n")
    assert peers.git_provenance(sub) == ("ab" * 20, "unknown")
    (git / "refs" / "heads" / "main").write_text("cd" * 20 + "\n")
    assert peers.git_provenance(sub) == ("cd" * 20, "unknown")


def test_table_and_summary_line(peers):
    recs = fake_family(peers, "prefill", [{"seq": 8192, "head_dim": 128, "causal": 0}], reps=3)
    bench = peers.bench_name("prefill", "sdpa_flash", {"seq": 8192, "head_dim": 128, "causal": 0})
    notes = {"call_time_us": {bench: {"q1": 1.0, "median": 2500.0, "q3": 3.0}}}
    out = peers.table(recs, notes)
    assert bench in out and "2500.0" in out
    assert "TFLOP/s" in peers.summary_line(recs[:7], notes)
    err = [peers.error_record(bench, peers.label("prefill", "sdpa_flash"), "skipped: x", {}, 1.0, 1.0)]
    assert peers.summary_line(err) == "skipped: x"


# ---- the device's idle before each timed call -------------------------------------------------

def test_launch_lead_is_the_peers_own_unless_the_call_sets_one(peers, monkeypatch):
    monkeypatch.delenv(peers.LEAD_ENV, raising=False)
    assert peers.launch_lead_us() == peers.OWN_LEAD_US == 500.0
    assert peers.launch_lead_us(3000.0) == 3000.0
    # One lead for the whole device call, ours included (--schedlab_launch_lead_us).
    monkeypatch.setenv(peers.LEAD_ENV, "3000")
    assert peers.launch_lead_us() == 3000.0 and peers.launch_lead_us(3000.0) == 3000.0
    monkeypatch.setenv(peers.LEAD_ENV, " ")
    assert peers.launch_lead_us() == 500.0
    # Shorter than a peer's host side needs: its Python time would be inside the events.
    monkeypatch.setenv(peers.LEAD_ENV, "500")
    with pytest.raises(ValueError, match="below the 3000 us"):
        peers.launch_lead_us(3000.0)
    for bad in ("abc", "nan", "-1"):
        monkeypatch.setenv(peers.LEAD_ENV, bad)
        with pytest.raises(ValueError, match=peers.LEAD_ENV):
            peers.launch_lead_us()


def test_time_peer_spins_for_the_calls_lead(peers, monkeypatch):
    leads = []
    monkeypatch.setattr(peers, "_spin_cycles", lambda lead_us: leads.append(lead_us) or 1)
    monkeypatch.setattr(peers, "_events", lambda: None)
    monkeypatch.setattr(peers, "_queued_once", lambda call, flush, cycles, lead_us, ev: leads.append(lead_us) or 5.0)
    monkeypatch.setattr(peers, "_call_once", lambda call, flush, ev: 7.0)
    monkeypatch.setattr(peers, "time_kernels", lambda call, flush, reps: ([6.0] * reps, ["k"], "linkage"))
    monkeypatch.setenv(peers.LEAD_ENV, "3000")
    peers.time_peer(None, None, 2)
    assert leads == [3000.0] * 3
    monkeypatch.delenv(peers.LEAD_ENV)
    leads.clear()
    peers.time_peer(None, None, 2, own_lead_us=1200.0)
    assert leads == [1200.0] * 3


# ---- --profile: the name of one of our benchmarks, refused before any GPU work ---------------

def test_profile_takes_the_fa3_shape_of_our_benchmark_name(peers):
    assert peers.profile_shape("prefill_pingpong/pingpong/bf16/seq:1024/head_dim:128/causal:1/iterations:1") == {
        "seq": 1024, "head_dim": 128, "causal": 1}
    assert peers.profile_shape("prefill_pingpong/pingpong/bf16/seq:512/head_dim:64/causal:0") == {
        "seq": 512, "head_dim": 64, "causal": 0}


@pytest.mark.parametrize("name, why", [
    ("prefill_pingpong/pingpong/bf16/seq:8192", "not a prefill benchmark name"),
    ("prefill_pingpong/pingpong/fp8_e4m3/seq:8192/head_dim:128/causal:0", "runs bf16, not fp8_e4m3"),
    ("prefill_pingpong/pingpong/bf16/seq:8192/head_dim:128/causal:1/q_heads:64/kv_heads:8", "the FA3 setting"),
    ("prefill_pingpong/pingpong/bf16/lengths:4x512/head_dim:128/causal:1", "the FA3 setting"),
])
def test_profile_refuses_any_other_name_before_any_gpu_work(peers, capsys, name, why):
    assert peers.main(["--profile", name]) == 2
    err = capsys.readouterr().err
    assert why in err and name in err
    assert "torch" not in sys.modules
