"""analysis/peers/cudnn_peers.py without a GPU: it imports without torch or the cuDNN frontend,
names its rows as our decode rows (beside FlashInfer's, same baseline), tells cuDNN's refusals
from failures, and its command line refuses what forms no configuration before touching a GPU."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from peer_script import import_peer_script

PEERS = Path(__file__).resolve().parents[1] / "peers"
SCRIPT = PEERS / "cudnn_peers.py"


@pytest.fixture(scope="module")
def cd():
    return import_peer_script("cudnn_peers", ("torch", "cudnn"))


def test_rows_join_our_decode_names_beside_flashinfer(cd):
    cfg = cd.fp.Config("bf16", 16, 16384, page=1)
    rec = cd.failure_record(cfg, "RuntimeError: out of memory")
    assert rec["name"] == "peers_decode/cudnn_paged/bf16/batch:16/context:16384/page:1/manual_time"
    assert "variant=cudnn_paged;baseline=flashinfer_tc;dtype=bf16;peer=1" in rec["label"]
    assert rec["error_message"] == "RuntimeError: out of memory" and rec["error_occurred"]


def test_a_refusal_is_a_skip_a_failure_is_not(cd):
    cfg = cd.fp.Config("fp8_e4m3", 16, 16384)
    refused = cd.failure_record(cfg, "cudnnGraphNotSupportedError: No valid engine configs for ...")
    assert refused["error_message"].startswith("skipped: cuDNN refused: cudnnGraphNotSupportedError")
    assert not cd.is_refusal("RuntimeError: CUDA error: an illegal memory access was encountered")


@pytest.mark.parametrize("args, says", [(["--lengths", "1++3"], "not a whole number"),
                                        (["--dtypes", "int4"], "invalid choice"),
                                        (["--reps", "1"], "--reps must be >= 2")])
def test_bad_arguments_are_refused_before_any_gpu_work(args, says):
    proc = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and says in proc.stderr
