"""analysis/peers/cudnn_prefill_peers.py without a GPU, torch or the cuDNN frontend: it imports
without them, names its fp8 rows as before (``cudnn_fp8``) and 16-bit ragged rows ``cudnn``,
takes the fp8 configurations and the 16-bit ragged batches of our results (not the 16-bit
uniform ones), and lays a ragged batch out as cuDNN's THD tensors (ragged offsets, dims and
strides)."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from peer_script import import_peer_script

import synth

PEERS = Path(__file__).resolve().parents[1] / "peers"
SCRIPT = PEERS / "cudnn_prefill_peers.py"


@pytest.fixture(scope="module")
def cp():
    return import_peer_script("cudnn_prefill_peers", ("torch", "cudnn"))


def test_fp8_rows_keep_their_names_16bit_ragged_rows_are_cudnn(cp):
    fa = cp.fa
    fp8 = fa.Config.fa3(8192, 128, 1, "fp8_e4m3")
    assert cp.bench_name(fp8) == "peers_prefill/cudnn_fp8/fp8_e4m3/seq:8192/head_dim:128/causal:1"
    assert cp.label(fp8) == ("family=prefill;experiment=peers_prefill;variant=cudnn_fp8;baseline=cudnn_fp8;"
                             "dtype=fp8_e4m3;peer=1")
    bf16 = fa.Config.ragged("1000+8192", 128, 1)
    assert cp.bench_name(bf16) == "peers_prefill/cudnn/bf16/lengths:1000+8192/head_dim:128/causal:1"
    assert "variant=cudnn;baseline=cudnn;dtype=bf16;peer=1" in cp.label(bf16)
    rec = cp.failure_record(bf16, "cudnnGraphNotSupportedError: No valid engine configs", skipped=True)
    assert rec["error_message"] == "skipped: cudnnGraphNotSupportedError: No valid engine configs"
    assert rec["tokens"] == 9192 and rec["flops"] == fa.work(bf16)[1]
    assert cp.bench_name(fa.Config.ragged("1000+8192", 128, 0, "fp8_e4m3")).startswith("peers_prefill/cudnn_fp8/")


def test_refusals(cp):
    fa = cp.fa
    assert cp.known_refusal(fa.Config.fa3(8192, 128, 1, "fp8_e4m3")) is None
    uniform_bf16 = cp.known_refusal(fa.Config.fa3(8192, 128, 1))
    assert "16-bit cuDNN on uniform batches is the SDPA peers' sdpa_cudnn" in uniform_bf16
    assert cp.known_refusal(fa.Config.ragged("1000+8192", 128, 1)) is None
    assert cp.known_refusal(fa.Config.ragged("1000+8192", 128, 1, "f16")) is None
    assert cp.known_refusal(fa.Config.ragged("1000+8192", 128, 1, "fp8_e4m3")) is None  # per sequence: q = kv
    assert "top-left" in cp.known_refusal(fa.Config("fp8_e4m3", 128, 4096, 128, 1, 2, 16, 16))
    assert cp.known_refusal(fa.Config.ragged("1000+8192", 128, 1, window=256)) == "no sliding window in this peer"
    assert "multiples of 16 up to 128" in cp.known_refusal(fa.Config.ragged("9+7", 256, 0, "fp8_e4m3"))
    assert "multiples of 8" in cp.known_refusal(fa.Config.ragged("9+7", 100, 0, q_heads=4))
    assert cp.known_refusal(fa.Config.ragged("9+7", 256, 0, q_heads=4)) is None  # 16-bit: cuDNN decides


def test_thd_layout_and_ragged_offsets(cp):
    # As the frontend's THD tests give them: logical (B, H, S_max, D), strides (S_max*H*D, D, H*D, 1);
    # the ragged offsets in elements, the prefix sums of the lengths times heads x D.
    cfg = cp.fa.Config.ragged("1000+8192+3x7", 128, 1, q_heads=64, kv_heads=8)
    assert cp.thd_layout(cfg, 64) == ((5, 64, 8192, 128), (8192 * 64 * 128, 128, 64 * 128, 1))
    assert cp.thd_layout(cfg, 8) == ((5, 8, 8192, 128), (8192 * 8 * 128, 128, 8 * 128, 1))
    assert cp.ragged_offsets(cfg, 64) == [0, 1000 * 8192, 9192 * 8192, 9199 * 8192, 9206 * 8192, 9213 * 8192]
    assert cp.ragged_offsets(cfg, 8) == [t * 1024 for t in (0, 1000, 9192, 9199, 9206, 9213)]
    assert cp.ragged_offset_type(92000) == "INT64" and cp.ragged_offset_type(90600) == "INT64"
    assert cp.ragged_offset_type(90500) == "INT32"


def test_contexts_keep_the_fp8_text_and_add_thd_only_where_ragged_ran(cp):
    fa = cp.fa
    fp8 = [fa.Config.fa3(8192, 128, 1, "fp8_e4m3")]
    assert cp.layout_context(fp8) == (
        "cuDNN sdpa_fp8: Q, K, V and O e4m3 in [batch, len, heads, D], unit Q/K/V/O scales, S scaled by 256 into "
        "e4m3; causal top-left (q_len == kv_len only); the graph built once per configuration, outside the timed "
        "region")
    assert cp.accuracy_context(fp8) == (
        "float64 torch reference from the e4m3 values (FlashAttention-4's peer sample); fp8 compute gate rel_l2 <= "
        "0.06, each row <= 0.1, every element within 0.4 x its row's RMS")
    both = fp8 + [fa.Config.ragged("1000+8192", 128, 1)]
    assert cp.layout_context(both).startswith(cp.layout_context(fp8) + "; a ragged batch (THD)")
    assert "16-bit (cudnn): the same reference from the inputs" in cp.accuracy_context(both)


def test_select_configs_takes_fp8_and_16bit_ragged(cp, tmp_path):
    fa = cp.fa

    def cfg(c):
        axes, flops, nbytes = fa.work(c)
        return dict(axes, _name=fa.shape_name(c).split("/", 1)[1], _flops=flops, _bytes=nbytes)
    root = tmp_path / "results"
    bf16 = [fa.Config.fa3(8192, 128, 1), fa.Config.ragged("1000+8192", 128, 1)]
    synth.experiment_run(root, "prefill_pingpong", "prefill", "pingpong", {"pingpong": 1.0}, [cfg(c) for c in bf16])
    fp8 = [fa.Config.fa3(4096, 128, 0, "fp8_e4m3"), fa.Config.ragged("1000+8192", 128, 1, "fp8_e4m3")]
    synth.experiment_run(root, "prefill_kv_tiles", "prefill", "kv_union", {"kv_union": 1.0}, [cfg(c) for c in fp8],
                         dtype="fp8_e4m3", stamp="20261120T120500Z")
    said = []
    got = cp.select_configs(argparse.Namespace(from_results=[str(root)], lengths=[]), said.append)
    headline = [fa.Config.fa3(8192, d, c, "fp8_e4m3") for d in (128, 64) for c in (0, 1)]
    assert got == [*fp8, bf16[1], *headline]  # files in path order; the 16-bit uniform batch is the SDPA peers'
    assert said[-1].endswith(": 2 fp8 prefill configurations, 1 16-bit ragged batches")
    # Uniform results alone: the configurations (and the log line) of before.
    only = tmp_path / "uniform"
    synth.experiment_run(only, "prefill_kv_tiles", "prefill", "kv_union", {"kv_union": 1.0}, [cfg(fp8[0])],
                         dtype="fp8_e4m3")
    said.clear()
    got = cp.select_configs(argparse.Namespace(from_results=[str(only)], lengths=[]), said.append)
    assert got == [fp8[0], *headline] and said[-1].endswith(": 1 fp8 prefill configurations")
    got = cp.select_configs(argparse.Namespace(from_results=[], lengths=["3x7"]), said.append)
    assert [cp.bench_name(c) for c in got[:4]] == [
        "peers_prefill/cudnn/bf16/lengths:3x7/head_dim:128/causal:1",
        "peers_prefill/cudnn/bf16/lengths:3x7/head_dim:128/causal:0",
        "peers_prefill/cudnn_fp8/fp8_e4m3/lengths:3x7/head_dim:128/causal:1",
        "peers_prefill/cudnn_fp8/fp8_e4m3/lengths:3x7/head_dim:128/causal:0"]


def test_profile_refuses_a_name_that_is_no_prefill_problem_before_any_gpu_work(cp, capsys):
    assert cp.main(["--profile", "prefill_pingpong/pingpong/fp8_e4m3/seq:8192"]) == 2
    assert "not a prefill benchmark name" in capsys.readouterr().err
    assert cp.main(["--profile", "prefill_pingpong/pingpong/fp8_e4m3/seq:8192/head_dim:128/causal:3"]) == 2
    assert "causal 3 is not 0 or 1" in capsys.readouterr().err
