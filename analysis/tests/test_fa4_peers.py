"""analysis/peers/fa4_peers.py and scripts/device_fa4_stage.sh without a GPU, torch or FA4: the
prefill configurations read from our results files (ragged batches among them), names and work
as our harness spells and declares them, the skip records (FA4 refusing, its compile failing,
the memory limit, the budget, the package absent), the varlen call's lengths and the ragged
reference's sample, and the staging of the packed FA4 in parts."""
from __future__ import annotations

import gzip
import importlib.util
import io
import shutil
import subprocess
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from peer_script import import_peer_script

from schedlab_analysis import dataset, load
import synth

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "analysis" / "peers" / "fa4_peers.py"
STAGE = REPO / "scripts" / "device_fa4_stage.sh"
ACC = {"rel_l2_err": 0.003, "max_abs_err": 0.001, "mismatch_pct": 0.0}


@pytest.fixture(scope="module")
def fa():
    return import_peer_script("fa4_peers", ("torch", "flash_attn", "cutlass"))


def test_names_follow_our_prefill_names(fa):
    # kernels/prefill/prefill_shapes.hpp prefill_shape_name, as common/tests/test_axes.cpp checks it.
    c = fa.Config.fa3(8192, 128, 0)
    assert (c.batch, c.q_heads, c.kv_heads) == (2, 16, 16)
    assert fa.bench_name(c) == "peers_prefill/fa4/bf16/seq:8192/head_dim:128/causal:0"
    assert fa.label(c) == "family=prefill;experiment=peers_prefill;variant=fa4;baseline=fa4;dtype=bf16;peer=1"
    gqa = fa.Config("bf16", 128, 4096, 64, 1, fa.fa3_batch(128), 32, 8)
    assert fa.shape_name(gqa) == "bf16/q_len:128/kv_len:4096/head_dim:64/causal:1/kv_heads:8"
    win = fa.Config("f16", 777, 777, 128, 0, 3, 16, 16, 256)
    assert fa.shape_name(win) == "f16/seq:777/head_dim:128/causal:0/window:256/batch:3"
    for cfg in (c, gqa, win, fa.Config.fa3(512, 64, 1, "fp8_e4m3")):
        assert fa.config_from_name(f"prefill_x/variant/{fa.shape_name(cfg)}/iterations:1/manual_time") == cfg
    assert fa.config_from_name("decode_x/v/bf16/batch:16/context:4096/page:16/manual_time") is None
    assert fa.config_from_name("prefill_x/v/bf16/head_dim:128/causal:0/manual_time") is None


def test_work_as_the_harness_declares_it(fa):
    # The SDPA peers' numbers for the FA3 shapes, and those of our results files.
    for seq, d, causal in ((8192, 128, 0), (8192, 128, 1), (512, 64, 1)):
        axes, flops, nbytes = fa.work(fa.Config.fa3(seq, d, causal))
        ref_axes, ref_flops, ref_bytes = fa.sp.work("prefill", {"seq": seq, "head_dim": d, "causal": causal})
        assert (axes, flops, nbytes) == (ref_axes, ref_flops, ref_bytes)
    assert fa.work(fa.Config.fa3(512, 64, 1))[1:] == (34426847232.0, 268435456.0)  # prefill_pingpong's counters
    # fp8 reads one byte per element and writes O in bf16 (common/problem.cpp min_bytes).
    assert fa.work(fa.Config.fa3(8192, 128, 0, "fp8_e4m3"))[2] == 167772160.0
    # Any mix of causal, window and q_len != kv_len: pairs counted one query at a time.
    for cfg in (fa.Config("bf16", 5, 9, 8, 1, 1, 1, 1), fa.Config("bf16", 9, 9, 8, 1, 1, 1, 1, 3),
                fa.Config("bf16", 7, 4, 8, 0, 1, 1, 1, 2), fa.Config("bf16", 7, 4, 8, 1, 1, 1, 1)):
        brute = 0
        for i in range(cfg.q_len):
            diag = i + cfg.kv_len - cfg.q_len
            for j in range(cfg.kv_len):
                brute += (not cfg.causal or j <= diag) and (cfg.window == 0 or j > diag - cfg.window)
        assert fa.visible_pairs(cfg) == brute, cfg


def test_window_maps_to_fa4s_window_size(fa):
    assert fa.fa4_window(fa.Config.fa3(1024, 128, 1)) == (None, None)
    assert fa.fa4_window(fa.Config("bf16", 9, 9, 128, 1, 1, 1, 1, 3)) == (2, 0)     # keys diag-2 .. diag
    assert fa.fa4_window(fa.Config("bf16", 9, 9, 128, 0, 1, 1, 1, 3)) == (2, None)  # keys diag-2 .. end


def test_refusals_without_calling_fa4(fa):
    assert fa.known_refusal(fa.Config.fa3(8192, 128, 1)) is None
    assert fa.known_refusal(fa.Config.fa3(8192, 64, 0, "f16")) is None
    assert "fp8" in fa.known_refusal(fa.Config.fa3(8192, 128, 0, "fp8_e4m3"))
    assert "head dims 8..256" in fa.known_refusal(fa.Config("bf16", 64, 64, 264, 0, 1, 1, 1))
    assert "not 100" in fa.known_refusal(fa.Config("bf16", 64, 64, 100, 0, 1, 1, 1))
    assert fa.known_refusal(fa.Config.fa3(8192, 128, 0, "fp8_e4m3"), arch_major=10) is None  # FA4 decides


def test_first_call_failures_are_skips_with_the_reason(fa):
    c = fa.Config.fa3(8192, 128, 0)
    refused = fa.first_call_failure(c, AssertionError("SplitKV not supported on SM 9.0"))
    assert refused["error_occurred"] and refused["error_message"] == \
        "skipped: FA4 refused: AssertionError: SplitKV not supported on SM 9.0"
    assert refused["run_name"] == "peers_prefill/fa4/bf16/seq:8192/head_dim:128/causal:0/manual_time"
    assert (refused["flops"], refused["batch"], refused["seq_len"]) == (fa.work(c)[1], 2, 8192)

    class DSLRuntimeError(Exception):
        pass
    compiled = fa.first_call_failure(c, DSLRuntimeError("ptxas fatal: Unresolved extern function"))
    assert compiled["error_message"].startswith("skipped: FA4 compile failed: DSLRuntimeError: ptxas fatal")
    crashed = fa.first_call_failure(c, RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert crashed["error_occurred"] and crashed["error_message"].startswith("FA4 failed: ")
    late = fa.not_started_record(c, 180)
    assert late["error_message"] == "skipped: not started: the 180 s budget was spent"


def test_order_runs_headline_kernels_first_and_once(fa):
    cs = [fa.Config.fa3(512, 64, 0), fa.Config.fa3(8192, 128, 0, "fp8_e4m3"), fa.Config.fa3(512, 128, 1),
          fa.Config.fa3(8192, 128, 1), fa.Config.fa3(8192, 64, 0), fa.Config.fa3(512, 128, 1)]
    got = [fa.shape_name(c) for c in fa.order(cs)]
    assert got == ["bf16/seq:8192/head_dim:128/causal:1", "bf16/seq:512/head_dim:128/causal:1",
                   "bf16/seq:8192/head_dim:64/causal:0", "bf16/seq:512/head_dim:64/causal:0",
                   "fp8_e4m3/seq:8192/head_dim:128/causal:0"]
    assert [fa.compile_key(c) for c in fa.order(cs)][::2] == ["bf16/D128/causal:1", "bf16/D64/causal:0",
                                                              "fp8_e4m3/D128/causal:0"]


def _our_prefill_runs(root: Path):
    """Two prefill experiments of ours at the default tier's shapes (bf16 D 128/64, seq 512/8192,
    causal 0/1), counters as kernels/prefill/prefill_case.hpp writes them, an fp8 configuration,
    and an SDPA peers file of the same call (peer rows are not configurations)."""
    def cfg(seq, d, causal):
        axes, flops, nbytes = sp_work(seq, d, causal)
        return dict(axes, _name="seq:{seq_len}/head_dim:{head_dim}/causal:{causal}", _flops=flops, _bytes=nbytes)

    def sp_work(seq, d, causal):
        import sdpa_peers  # noqa: PLC0415  (on the path once fa4_peers is loaded)
        return sdpa_peers.work("prefill", {"seq": seq, "head_dim": d, "causal": causal})
    default = [cfg(s, d, c) for d in (128, 64) for c in (0, 1) for s in (512, 8192)]
    synth.experiment_run(root, "prefill_pingpong", "prefill", "free_running", {"free_running": 1.0, "pingpong": 0.9},
                         default, context={"run_id": "call-1"})
    synth.experiment_run(root, "prefill_kv_tiles", "prefill", "kv_union", {"kv_union": 1.0},
                         [cfg(8192, 128, 0)], dtype="fp8_e4m3", stamp="20261120T120500Z", context={"run_id": "call-1"})
    synth.experiment_run(root, "peers_prefill", "prefill", "sdpa_flash", {"sdpa_flash": 1.2}, default[:2], peer=True,
                         stamp="20261120T120600Z", context={"run_id": "call-1"})


def test_discovery_and_join(fa, tmp_path):
    root = tmp_path / "results"
    _our_prefill_runs(root)
    # A gzipped file is read too.
    f = sorted((root / "h200" / "prefill_kv_tiles").glob("*.json"))[0]
    with open(f, "rb") as src, gzip.open(str(f) + ".gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    f.unlink()
    found = fa.discover_configs(root, log=lambda *_: None)
    assert len(found) == 9 and fa.Config.fa3(8192, 128, 0, "fp8_e4m3") in found
    assert set(found) - {fa.Config.fa3(8192, 128, 0, "fp8_e4m3")} == \
        {fa.Config.fa3(s, d, c) for d in (128, 64) for c in (0, 1) for s in (512, 8192)}
    recs = []
    for c in fa.order(found):
        why = fa.known_refusal(c)
        recs += [fa.failure_record(c, why, skipped=True)] if why else fa.records(c, [100.0, 101.0, 99.0, 100.5], ACC)
    sp = fa.sp
    ctx = {"device": "NVIDIA H200", "experiment": "peers_prefill", "run_id": "call-1"}
    path = sp.results_path(root, "h200", "prefill", "20261120T121000Z", "0123456789", False)
    sp.write_atomic(path, sp.results_document(ctx, recs))
    assert fa.discover_configs(root, log=lambda *_: None) == found  # our peer rows add no configuration
    df = load.load_results(root)
    mine = df[df["variant"] == "fa4"]
    assert set(mine["status"]) == {"ok", "skipped"}
    assert set(mine[mine["status"] == "skipped"]["dtype"]) == {"fp8_e4m3"}
    view = dataset.Dataset.load(root).view("h200", "prefill_pingpong")
    joined = view.peers
    assert "fa4" in set(joined["variant"])
    fa4_rows = joined[joined["variant"] == "fa4"]
    assert len(fa4_rows) == 8 and set(fa4_rows["config"]) == set(view.summary["config"])


def test_select_configs(fa, tmp_path):
    args = fa.argparse.Namespace(from_results=[], quick=False)
    grid = fa.select_configs(args, log=lambda *_: None)
    assert len(grid) == 24 and {c.q_len for c in grid} == {512, 1024, 2048, 4096, 8192, 16384}
    args.quick = True
    assert [fa.shape_name(c) for c in fa.select_configs(args, log=lambda *_: None)] == \
        ["bf16/seq:8192/head_dim:128/causal:0", "bf16/seq:8192/head_dim:128/causal:1"]
    # Results with no prefill configuration: nothing (the device hook then passes --quick).
    args.quick, args.from_results = False, [str(tmp_path)]
    assert fa.select_configs(args, log=lambda *_: None) == []


def test_main_skips_when_fa4_is_absent(fa, tmp_path, capsys, monkeypatch):
    def absent():
        raise ImportError("No module named 'flash_attn'")
    monkeypatch.setattr(fa, "_fa4", absent)
    rc = fa.main(["--quick", "--results-root", str(tmp_path / "out"), "--site", str(tmp_path / "nothing")])
    assert rc == 3
    assert "skipped: FlashAttention-4 is not importable (ImportError" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # no results file without FA4


@pytest.mark.skipif(importlib.util.find_spec("flash_attn") is not None, reason="a flash_attn is installed here")
def test_main_with_the_package_really_absent(fa, tmp_path, capsys):
    assert fa.main(["--quick", "--results-root", str(tmp_path / "out")]) == 3
    assert "not importable" in capsys.readouterr().err


def test_site_directory_runs_its_pth(fa, tmp_path, monkeypatch):
    # nvidia_cutlass_dsl_packages.pth puts nvidia_cutlass_dsl/dsl_packages on the path; a .pth
    # is read only in a site directory, hence --site and not PYTHONPATH.
    (tmp_path / "pkgs").mkdir()
    (tmp_path / "extra.pth").write_text("import sys, os; sys.path.insert(0, os.path.join(%r, 'pkgs'))\n" % str(tmp_path))
    monkeypatch.setattr(sys, "path", list(sys.path))
    added = fa.add_site(tmp_path)
    assert set(added) == {str(tmp_path), str(tmp_path / "pkgs")}
    assert set(sys.path[:2]) == set(added)


# ---- scripts/device_fa4_stage.sh --------------------------------------------------------------

def _pack(tmp_path: Path, n: int, payload: bytes = b"kernel bytes " * 4000) -> list[Path]:
    """A small stand-in for pack_fa4.sh's output: a tar.xz of one folder, split into n parts."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:xz") as tar:
        info = tarfile.TarInfo("./flash_attn/cute/interface.py")
        info.size = len(payload)
        tar.addfile(info, io.BytesIO(payload))
    data = buf.getvalue()
    out = tmp_path / ".peers"
    out.mkdir(exist_ok=True)
    step = -(-len(data) // n)
    parts = []
    for i in range(n):
        p = out / f"fa4.tar.xz.part-{i + 1}of{n}"
        p.write_bytes(data[i * step:(i + 1) * step])
        parts.append(p)
    return parts


def _stage(tmp_path: Path, part: Path | str):
    env = {"PATH": "/usr/bin:/bin", "FA4_SITE": str(tmp_path / "site"), "FA4_PARTS": str(tmp_path / "parts")}
    return subprocess.run(["bash", str(STAGE), str(part)], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(shutil.which("xz") is None, reason="no xz here")
def test_stage_gathers_parts_then_unpacks_once(tmp_path):
    one, two = _pack(tmp_path, 2)
    r = _stage(tmp_path, one)
    assert r.returncode == 0 and "part 1 of 2 stored" in r.stdout, r.stdout + r.stderr
    assert not (tmp_path / "site").exists()
    assert _stage(tmp_path, one).returncode == 0  # the same part again: nothing changes
    r = _stage(tmp_path, two)
    assert r.returncode == 0 and "complete" in r.stdout, r.stdout + r.stderr
    assert (tmp_path / "site" / "flash_attn" / "cute" / "interface.py").read_bytes().startswith(b"kernel bytes")
    assert (tmp_path / "site" / ".fa4_complete").read_text().startswith("2 parts")
    assert not (tmp_path / "parts").exists()
    r = _stage(tmp_path, two)
    assert r.returncode == 0 and "complete already" in r.stdout


@pytest.mark.skipif(shutil.which("xz") is None, reason="no xz here")
def test_stage_refuses_strangers_and_mixed_packings(tmp_path):
    (tmp_path / "fa4.tar.xz").write_bytes(b"x")
    assert _stage(tmp_path, tmp_path / "fa4.tar.xz").returncode == 2
    assert _stage(tmp_path, tmp_path / "missing.part-1of2").returncode == 2
    first = _pack(tmp_path, 2, b"one packing " * 3000)[0]
    assert _stage(tmp_path, first).returncode == 0
    second = _pack(tmp_path, 2, b"another one " * 3000)[1]
    r = _stage(tmp_path, second)
    assert r.returncode == 1 and "do not form one archive" in r.stdout
    assert not (tmp_path / "site").exists() and not (tmp_path / "parts").exists()
    # A single part that is the whole archive unpacks at once.
    only = _pack(tmp_path, 1)[0]
    assert _stage(tmp_path, only).returncode == 0 and (tmp_path / "site" / ".fa4_complete").exists()


# ---- ragged batches (lengths) -----------------------------------------------------------------

RAGGED = "bf16/lengths:lognormal:30:1536:0.5:256-8192+2x32768/head_dim:128/causal:1/q_heads:64/kv_heads:8"


def test_ragged_names_parse_and_round_trip(fa):
    # kernels/prefill/prefill_shapes.hpp prefill_shape_name: lengths instead of seq and batch.
    from schedlab_analysis.lengths import parse_lengths
    cfg = fa.config_from_name(f"prefill_pingpong/pingpong/{RAGGED}/manual_time")
    cfg.check()
    assert fa.shape_name(cfg) == RAGGED
    assert fa.bench_name(cfg) == f"peers_prefill/fa4/{RAGGED}"
    spec = "lognormal:30:1536:0.5:256-8192+2x32768"
    assert cfg.lengths == tuple(parse_lengths(spec)) and cfg.lengths_spec == spec and cfg.is_ragged
    assert (cfg.batch, cfg.q_len, cfg.kv_len, cfg.q_heads, cfg.kv_heads) == (32, 32768, 32768, 64, 8)
    assert cfg.lengths[-2:] == (32768, 32768) and all(256 <= n <= 8192 for n in cfg.lengths[:30])
    for name in ("bf16/lengths:1000+8192/head_dim:128/causal:0",
                 "f16/lengths:4x1024+1x32768/head_dim:64/causal:1/window:256/kv_heads:8",
                 "fp8_e4m3/lengths:uniform:8:100-300/head_dim:128/causal:1",
                 "bf16/lengths:one_long:16:65536:256-4096/head_dim:128/causal:1/q_heads:32"):
        c = fa.config_from_name(f"prefill_x/v/{name}/iterations:1/manual_time")
        c.check()
        assert fa.shape_name(c) == name and fa.config_from_name(f"x/y/{fa.shape_name(c)}") == c
    # Heads default as a uniform name's do: 2048 / head_dim, kv_heads = q_heads.
    c = fa.config_from_name("x/y/bf16/lengths:1000+8192/head_dim:64/causal:0")
    assert (c.q_heads, c.kv_heads, c.batch, c.q_len, c.window) == (32, 32, 2, 8192, 0)
    assert c == fa.Config.ragged("1000+8192", 64, 0)
    assert c != fa.Config.ragged("1000+1x8192", 64, 0)  # another spec, another name
    assert fa.Config.fa3(8192, 128, 0).lengths is None and not fa.Config.fa3(8192, 128, 0).is_ragged


def test_ragged_names_the_harness_refuses(fa, tmp_path):
    with pytest.raises(ValueError, match="also has seq"):
        fa.config_from_name("x/y/bf16/lengths:1000+8192/seq:8192/head_dim:128/causal:0")
    with pytest.raises(ValueError, match="batch"):
        fa.config_from_name("x/y/bf16/lengths:1000+8192/head_dim:128/causal:0/batch:2")
    with pytest.raises(ValueError, match="not a whole number"):
        fa.config_from_name("x/y/bf16/lengths:1++3/head_dim:128/causal:0")
    # A Config whose lengths are not its spec's draws, or that names lengths it does not hold.
    good = fa.Config.ragged("3x5+7", 8, 1)
    for bad, says in ((replace(good, lengths=(5, 5, 5, 6), q_len=6, kv_len=6), "does not draw"),
                      (replace(good, batch=3), "4 entries for batch 3"),
                      (replace(good, q_len=8), "the longest is 7"),
                      (replace(good, lengths=None), "holds no lengths")):
        with pytest.raises(fa.SpecError, match=says):
            bad.check()


def _ragged_brute_pairs(n: int, causal: int, window: int) -> int:
    return sum((not causal or j <= i) and (window == 0 or j > i - window) for i in range(n) for j in range(n))


def test_ragged_work_is_the_sum_over_sequences(fa):
    # common/problem.cpp: flops 4 * D * q_heads * (pairs of every sequence), bytes Q, K, V, O
    # over the total tokens; prefill_case.hpp: seq_len/kv_len the longest, tokens all of them.
    for spec, causal, window in (("1000+8192+3x7", 1, 0), ("1000+8192+3x7", 0, 0), ("5+9+1+13", 1, 3),
                                 ("5+9+1+13", 0, 4)):
        cfg = fa.Config.ragged(spec, 64, causal, q_heads=8, kv_heads=2, window=window)
        axes, flops, nbytes = fa.work(cfg)
        per_seq = [fa.work(fa.Config("bf16", n, n, 64, causal, 1, 8, 2, window)) for n in cfg.lengths]
        assert flops == sum(w[1] for w in per_seq)
        assert nbytes == sum(w[2] for w in per_seq)
        assert axes == {"batch": len(cfg.lengths), "q_heads": 8, "kv_heads": 2, "seq_len": max(cfg.lengths),
                        "kv_len": max(cfg.lengths), "head_dim": 64, "causal": causal, "window": window,
                        "tokens": sum(cfg.lengths)}
        if max(cfg.lengths) < 100:
            assert fa.total_pairs(cfg) == sum(_ragged_brute_pairs(n, causal, window) for n in cfg.lengths)
            assert [fa.visible_pairs(cfg, s) for s in range(cfg.batch)] == \
                [_ragged_brute_pairs(n, causal, window) for n in cfg.lengths]
    causal = fa.Config.ragged("1000+8192", 128, 1)
    assert fa.work(causal)[1] == 4.0 * 128 * 16 * (1000 * 1001 // 2 + 8192 * 8193 // 2)
    assert fa.work(causal)[2] == 9192 * 16 * 128 * 2 * 4.0  # Q, K, V read, O written, bf16
    fp8 = fa.Config.ragged("1000+8192", 128, 1, "fp8_e4m3")
    assert fa.work(fp8)[2] == 9192 * 16 * 128 * (3 * 1 + 2)  # e4m3 in, O in bf16
    # A uniform batch written as lengths does the uniform batch's work.
    assert fa.work(fa.Config.ragged("2x8192", 128, 1))[1:] == fa.work(fa.Config.fa3(8192, 128, 1))[1:]
    # Per-sequence key ranges: bottom-right per sequence, as each sequence has as many keys as queries.
    win = fa.Config.ragged("5+9", 8, 1, window=3)
    assert fa.visible_range(win, 4, 0) == (2, 5) and fa.visible_range(win, 8, 1) == (6, 9)


def test_cu_seqlens_and_varlen_arguments(fa):
    cfg = fa.Config.ragged("1000+8192+3x7", 128, 1)
    assert fa.cu_seqlens(cfg) == [0, 1000, 9192, 9199, 9206, 9213]
    assert fa.total_tokens(cfg) == 9213
    assert fa.varlen_arguments(cfg) == {"cu_seqlens_q": [0, 1000, 9192, 9199, 9206, 9213],
                                        "cu_seqlens_k": [0, 1000, 9192, 9199, 9206, 9213],
                                        "max_seqlen_q": 8192, "max_seqlen_k": 8192}
    assert fa.cu_seqlens(fa.Config.fa3(8192, 128, 0)) == [0, 8192, 16384]  # the uniform packing
    assert fa.seq_lengths(cfg, 1) == (8192, 8192) and fa.seq_lengths(fa.Config("bf16", 5, 9, 8, 1, 2, 1, 1)) == (5, 9)


def test_ragged_refusals_compile_keys_and_memory(fa):
    ok = fa.Config.ragged("1000+8192", 128, 1)
    assert fa.known_refusal(ok) is None and fa.memory_refusal(ok) is None
    assert "fp8" in fa.known_refusal(fa.Config.ragged("1000+8192", 128, 1, "fp8_e4m3"))
    assert "not 100" in fa.known_refusal(fa.Config.ragged("1000+8192", 100, 1, q_heads=16))
    assert fa.compile_key(ok) == "bf16/D128/causal:1/varlen"
    assert fa.compile_key(fa.Config.ragged(RAGGED.split("/")[1][len("lengths:"):], 128, 1, q_heads=64, kv_heads=8)) \
        == "bf16/D128/causal:1/gqa:8/varlen"
    assert fa.compile_key(fa.Config.ragged("300x64", 128, 0)) == "bf16/D128/causal:0/varlen/lookup"
    # The memory estimate: Q, K, V and O over every token.
    big = fa.Config.ragged("64x65536", 128, 1)
    assert fa.tensor_bytes(big) == 64 * 65536 * 16 * 128 * 2 * 4.0
    assert fa.memory_refusal(big) == "Q/K/V/O need 68.7 GB, over this script's 40 GB limit"
    assert fa.memory_refusal(fa.Config.fa3(16384, 128, 1)) is None
    rec = fa.failure_record(big, fa.memory_refusal(big), skipped=True)
    assert rec["error_message"].startswith("skipped: Q/K/V/O need") and rec["tokens"] == 64 * 65536
    assert rec["run_name"] == "peers_prefill/fa4/bf16/lengths:64x65536/head_dim:128/causal:1/manual_time"
    refused = fa.first_call_failure(ok, AssertionError("cu_seqlens_q must have shape (batch_size + 1,)"))
    assert refused["error_message"] == \
        "skipped: FA4 refused: AssertionError: cu_seqlens_q must have shape (batch_size + 1,)"


def test_ragged_reference_sample(fa):
    cfg = fa.Config.ragged("300+17+4000+5+9+1000", 128, 1)
    picks, heads = fa.ragged_reference_sample(cfg, fa.random.Random(7))
    seqs = [s for s, _ in picks]
    assert len(seqs) == fa.REF_SEQUENCES and seqs[0] == 0 and seqs[-1] == cfg.batch - 1 and seqs == sorted(set(seqs))
    for s, rows in picks:
        n = cfg.lengths[s]
        assert rows == sorted(set(rows)) and rows[0] == 0 and rows[-1] == n - 1 and len(rows) <= fa.REF_ROWS + 2
    assert len(heads) == fa.REF_HEADS and all(0 <= h < cfg.q_heads for h in heads)
    assert fa.ragged_reference_sample(cfg, fa.random.Random(7)) == (picks, heads)  # seeded: repeatable
    one = fa.Config.ragged("1", 128, 0)
    assert fa.ragged_reference_sample(one, fa.random.Random(0))[0] == [(0, [0])]
    two = fa.Config.ragged("3+2", 128, 0, q_heads=2)
    assert fa.ragged_reference_sample(two, fa.random.Random(0)) == ([(0, [0, 1, 2]), (1, [0, 1])], [0, 1])


def test_order_puts_ragged_after_the_uniform_kernel_and_keeps_uniform_order(fa):
    uniform = [fa.Config.fa3(512, 64, 0), fa.Config.fa3(8192, 128, 1), fa.Config.fa3(512, 128, 1)]
    ragged = [fa.Config.ragged("1000+8192", 128, 1), fa.Config.ragged("2x4096+1", 128, 1)]
    got = [fa.shape_name(c) for c in fa.order(ragged + uniform)]
    assert got == ["bf16/seq:8192/head_dim:128/causal:1", "bf16/seq:512/head_dim:128/causal:1",
                   "bf16/lengths:1000+8192/head_dim:128/causal:1", "bf16/lengths:2x4096+1/head_dim:128/causal:1",
                   "bf16/seq:512/head_dim:64/causal:0"]
    assert [c for c in fa.order(ragged + uniform) if not c.is_ragged] == fa.order(uniform)


def test_contexts_name_the_varlen_call_only_where_ragged_ran(fa):
    uniform = [fa.Config.fa3(8192, 128, 1)]
    assert fa.layout_context(uniform) == (
        "flash_attn.cute.flash_attn_func(q, k, v, causal, window_size), Q [batch, q_len, q_heads, D], "
        "K/V [batch, kv_len, kv_heads, D], contiguous; the first call of each kernel (its JIT "
        "compile) is timed apart (first_call_s) and followed by the warm-up")
    assert fa.accuracy_context(uniform) == (
        "float64 torch reference on the GPU from the upcast inputs, sampled 2 batch items x 4 heads x 256+ "
        "query rows; gate rel_l2 <= 0.01, mismatch (atol 0.01 + rtol 0.02) <= 0.1%")
    both = uniform + [fa.Config.ragged("1000+8192", 128, 1)]
    assert fa.layout_context(both).startswith(fa.layout_context(uniform) + "; a ragged batch: "
                                              "flash_attn.cute.flash_attn_varlen_func(")
    assert "4 sequences (the first and last among them)" in fa.accuracy_context(both)


def test_select_configs_with_lengths(fa):
    args = fa.argparse.Namespace(from_results=[], quick=False, lengths=["1000+8192"])
    got = [fa.shape_name(c) for c in fa.select_configs(args, log=lambda *_: None)]
    assert got == ["bf16/lengths:1000+8192/head_dim:128/causal:0", "bf16/lengths:1000+8192/head_dim:128/causal:1"]


def test_main_refuses_a_bad_lengths_before_any_gpu_work(fa, capsys):
    assert fa.main(["--lengths", "1++2"]) == 2
    assert "not a whole number" in capsys.readouterr().err


def test_profile_refuses_a_name_that_is_no_prefill_problem_before_any_gpu_work(fa, capsys):
    assert fa.main(["--profile", "prefill_pingpong/pingpong/bf16/seq:8192"]) == 2
    assert "not a prefill benchmark name" in capsys.readouterr().err
    assert fa.main(["--profile", "prefill_pingpong/pingpong/bf16/seq:8192/head_dim:64/causal:3"]) == 2
    assert "causal 3 is not 0 or 1" in capsys.readouterr().err


def test_profile_name_forms_the_peer_configuration(fa):
    cfg = fa.config_from_name("prefill_pingpong/pingpong/bf16/seq:8192/head_dim:64/causal:0/iterations:1")
    assert cfg == fa.Config.fa3(8192, 64, 0)


def _our_ragged_runs(root: Path, fa):
    """Our prefill_pingpong on two ragged batches and a uniform one (counters as prefill_case.hpp
    writes them, tokens for a ragged batch), and one name the harness would refuse."""
    def cfg(c):
        axes, flops, nbytes = fa.work(c)
        name = fa.shape_name(c).split("/", 1)[1]
        return dict(axes, _name=name, _flops=flops, _bytes=nbytes)
    ragged = [fa.Config.ragged("1000+8192", 128, 1), fa.Config.ragged("4x512+1x4096", 128, 0)]
    configs = [cfg(c) for c in ragged] + [cfg(fa.Config.fa3(8192, 128, 1))]
    bad = dict(configs[0], _name="lengths:1000+8192/seq:8192/head_dim:128/causal:1")
    synth.experiment_run(root, "prefill_pingpong", "prefill", "free_running", {"free_running": 1.0, "pingpong": 0.9},
                         configs + [bad], context={"run_id": "call-2"})
    return ragged


def test_ragged_discovery_and_join(fa, tmp_path):
    root = tmp_path / "results"
    ragged = _our_ragged_runs(root, fa)
    said = []
    found = fa.discover_configs(root, log=said.append)
    assert found == ragged + [fa.Config.fa3(8192, 128, 1)]
    assert any("also has seq" in line for line in said)
    recs = []
    for c in fa.order(found):
        recs += fa.records(c, [100.0, 101.0, 99.0, 100.5], ACC)
    sp = fa.sp
    path = sp.results_path(root, "h200", "prefill", "20261120T121000Z", "0123456789", False)
    sp.write_atomic(path, sp.results_document({"device": "NVIDIA H200", "experiment": "peers_prefill",
                                               "run_id": "call-2"}, recs))
    assert fa.discover_configs(root, log=lambda *_: None) == found  # our peer rows add no configuration
    view = dataset.Dataset.load(root).view("h200", "prefill_pingpong")
    fa4_rows = view.peers[view.peers["variant"] == "fa4"]
    refused = "causal=1 lengths=1000+8192 seq=8192"  # ours only: the name the peer left out
    assert refused in set(view.summary["config"])
    assert len(fa4_rows) == 3 and set(fa4_rows["config"]) == set(view.summary["config"]) - {refused}
    assert set(fa4_rows["tokens"].dropna()) == {9192, 6144}
