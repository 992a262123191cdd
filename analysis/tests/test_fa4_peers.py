"""analysis/peers/fa4_peers.py and scripts/device_fa4_stage.sh without a GPU, torch or FA4: the
prefill configurations read from our results files, names and work as our harness spells and
declares them, the skip records (FA4 refusing, its compile failing, the budget, the package
absent), and the staging of the packed FA4 in parts."""
from __future__ import annotations

import gzip
import importlib.util
import io
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from schedlab_analysis import dataset, load
import synth

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "analysis" / "peers" / "fa4_peers.py"
STAGE = REPO / "scripts" / "device_fa4_stage.sh"
ACC = {"rel_l2_err": 0.003, "max_abs_err": 0.001, "mismatch_pct": 0.0}


@pytest.fixture(scope="module")
def fa():
    had = {m: m in sys.modules for m in ("torch", "flash_attn", "cutlass")}
    spec = importlib.util.spec_from_file_location("fa4_peers", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["fa4_peers"] = mod  # its dataclass resolves annotations through it
    spec.loader.exec_module(mod)
    for m, was in had.items():
        if not was:
            assert m not in sys.modules, f"importing the script must not import {m}"
    return mod


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
