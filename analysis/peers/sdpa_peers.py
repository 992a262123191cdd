#!/usr/bin/env python3
"""Peers measured in the same run: PyTorch's scaled_dot_product_attention, flash backend
(FlashAttention-2) and cuDNN backend, on the decode and prefill shapes our kernels run,
written as results files in our schema (Google Benchmark JSON, ``peer=1``).

Run on the GPU machine (torch, numpy and the standard library only):

    python3 analysis/peers/sdpa_peers.py --results-root results --family all
    python3 analysis/peers/sdpa_peers.py --quick            # a couple of shapes
    python3 analysis/peers/sdpa_peers.py --backend sdpa_cudnn --profile NAME   # one call, for Nsight Compute

Timing is the KERNEL time, taken as our harness takes ours (common/harness/bench.cpp): CUDA
events around the call, the L2 flushed before it by reading a buffer of twice its size
(``L2_cache_size``). Our harness enqueues its launch while the flush kernel runs, so no host
time is inside its events; a peer's Python call takes longer to enqueue than the flush runs,
so the stream also spins on the device (``torch.cuda._sleep``) after the flush and the call is
enqueued while it spins (``time_queued``): the events then hold the call's kernels back to back
(the split-KV combine kernel, any layout copy, ...). Each repetition also times the whole call
with events and no spin (``call_time_us`` in the context), alternating with the kernel time, so
a drift in clocks or temperature reaches both alike. The profiler (``torch.profiler``) is used
only to name the kernels a call launches and, as a cross-check kept in the context
(``profiler_kernel_us``), for the sum of their durations: that sum was seen above the whole
call's time (a cuDNN prefill kernel timed in a separate profiled pass after the call pass),
which no timing of the same kernels under the same conditions can give, so it is not a time
we report.

Work is declared as common/problem.cpp declares it for our kernels:
  decode:  flops = 4 * keys * D * q_heads, bytes = K + V of the visible keys + Q + O once;
  prefill: flops = 4 * visible (q, k) pairs * D * heads * batch (causal: n(n+1)/2 pairs),
           bytes = (Q + O + K + V) once.

Accuracy: each backend's output against a float64 reference computed by torch on the GPU from
the upcast inputs (a sample of batch items / heads / query rows where the problem is large),
reported as rel_l2_err, max_abs_err, mismatch_pct (atol 1e-2 + rtol 2e-2) and gated like
ours (bf16: rel_l2 <= 1e-2, mismatches <= 0.1 %).

torch is imported lazily (inside functions): the pure parts (work formulas, names, records,
the results file) are importable and tested without it (analysis/tests/test_peers_schema.py).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

# ---- the problems ------------------------------------------------------------------------

DTYPE = "bf16"
ELEM_BYTES = 2  # bf16
DECODE_Q_HEADS, DECODE_KV_HEADS, DECODE_HEAD_DIM = 32, 8, 128
DECODE_BATCHES = (1, 16, 64)
DECODE_CONTEXTS = (1024, 4096, 16384, 65536)
PREFILL_TOTAL_TOKENS, PREFILL_HIDDEN = 16384, 2048
PREFILL_HEAD_DIMS = (128, 64)
PREFILL_SEQS = (512, 1024, 2048, 4096, 8192, 16384)
MEMORY_LIMIT_BYTES = 40e9  # skip a shape whose tensors would exceed this

VARIANTS = {"sdpa_flash": "FLASH_ATTENTION", "sdpa_cudnn": "CUDNN_ATTENTION"}
BASELINE = "sdpa_flash"
SKIPPED_PREFIX = "skipped: "  # common/harness/bench.hpp kSkippedPrefix
MANUAL_TIME_SUFFIX = "/manual_time"

# The bf16 gate of common/harness/accuracy.cpp (kBf16Tolerance).
REL_L2_MAX, ATOL, RTOL, MAX_MISMATCH_PCT = 1e-2, 1e-2, 2e-2, 0.1
# fp8 compute (Q, K, V, P and O in e4m3): common/harness/accuracy.cpp kFp8ComputeTolerance.
FP8_COMPUTE_REL_L2_MAX, FP8_COMPUTE_ROW_REL_L2_MAX, FP8_COMPUTE_ELEM_REL = 6e-2, 1e-1, 4e-1

TIMING = ("kernel time: CUDA events around the call, enqueued behind the L2 flush and a device spin "
          "(no host time inside), as the harness times ours")
CALL_TIMING = "CUDA events around the whole Python call, L2 flushed before each, alternating with the kernel time"
PROFILED_REPS = 5  # profiled calls per benchmark: kernel names and the profiler's cross-check
COPY_BYTES = 2 << 30  # 2 GiB, as common/harness/gpu_platform.cu
COPY_REPEATS = 9

# Sampling of the float64 reference (bounded memory and time on the largest shapes).
REF_DECODE_BATCH_ITEMS = 4
REF_PREFILL_BATCH_ITEMS = 2
REF_PREFILL_HEADS = 4
REF_PREFILL_ROWS = 256



def gate(diffs: list, refs: list, compared: str = "values compared") -> dict:
    """The peers' accuracy gate over sampled outputs: ``diffs`` (ours minus reference) and ``refs``
    (the float64 reference), as lists of flat tensors. Every peer script (SDPA, FlashInfer,
    FlashAttention-4) reports through this one rule and message."""
    import torch  # noqa: PLC0415  (lazy: the pure parts run without torch)
    d, r = torch.cat(diffs), torch.cat(refs)
    finite = torch.isfinite(d)
    nonfinite = int((~finite).sum())
    d = torch.where(finite, d, torch.full_like(d, float("inf")))
    bad = (d.abs() > ATOL + RTOL * r.abs())
    rel = float(torch.linalg.vector_norm(d) / torch.linalg.vector_norm(r))
    res = {"rel_l2_err": rel, "max_abs_err": float(d.abs().max()), "mismatch_pct": 100.0 * float(bad.double().mean()),
           "compared": int(r.numel()), "nonfinite": nonfinite}
    res["passed"] = nonfinite == 0 and rel <= REL_L2_MAX and res["mismatch_pct"] <= MAX_MISMATCH_PCT
    res["message"] = (f"rel_l2 {rel:.3g} (max {REL_L2_MAX:g}), max_abs {res['max_abs_err']:.3g}, "
                      f"{res['mismatch_pct']:.3g}% outside atol {ATOL:g} + rtol {RTOL:g} (max {MAX_MISMATCH_PCT:g}%), "
                      f"{nonfinite} non-finite, {res['compared']} {compared}")
    return res


def fp8_compute_gate(diffs: list, refs: list, compared: str = "values compared", row_len: int = 0) -> dict:
    """The gate of fp8 compute (P and O rounded to e4m3) as common/harness/accuracy.cpp bounds our
    fp8 kernels: the rel. L2 over all values, each output row's rel. L2 and each element's error
    against its row's RMS (rows of ``row_len`` values, the head dim; 0: one row). For a peer whose
    Q, P and O are e4m3 (cuDNN's fp8 SDPA on sm_90 writes no 16-bit O)."""
    import torch  # noqa: PLC0415
    d, r = torch.cat(diffs), torch.cat(refs)
    finite = torch.isfinite(d)
    nonfinite = int((~finite).sum())
    d = torch.where(finite, d, torch.full_like(d, float("inf")))
    n = row_len or r.numel()
    dr, rr = d.reshape(-1, n), r.reshape(-1, n)
    row_norm = torch.linalg.vector_norm(rr, dim=1).clamp_min(1e-30)
    row_rel = float((torch.linalg.vector_norm(dr, dim=1) / row_norm).max())
    elem = (dr.abs() / (row_norm / math.sqrt(n))[:, None])
    worst = float(elem.max())
    rel = float(torch.linalg.vector_norm(d) / torch.linalg.vector_norm(r))
    res = {"rel_l2_err": rel, "max_abs_err": float(d.abs().max()), "compared": int(r.numel()), "nonfinite": nonfinite,
           "max_row_rel_err": row_rel, "mismatch_pct": 100.0 * float((elem > FP8_COMPUTE_ELEM_REL).double().mean())}
    res["passed"] = (nonfinite == 0 and rel <= FP8_COMPUTE_REL_L2_MAX and row_rel <= FP8_COMPUTE_ROW_REL_L2_MAX
                     and worst <= FP8_COMPUTE_ELEM_REL)
    res["message"] = (f"rel_l2 {rel:.3g} (max {FP8_COMPUTE_REL_L2_MAX:g}, fp8 compute), worst row {row_rel:.3g} (max "
                      f"{FP8_COMPUTE_ROW_REL_L2_MAX:g}), worst element {worst:.3g} x its row's RMS (max "
                      f"{FP8_COMPUTE_ELEM_REL:g}), {nonfinite} non-finite, {res['compared']} {compared}")
    return res


def decode_shapes() -> list[dict]:
    return [{"batch": b, "context": c} for b in DECODE_BATCHES for c in DECODE_CONTEXTS]


def prefill_shapes() -> list[dict]:
    # Same order as kernels/prefill/prefill_bench.hpp.
    return [{"seq": s, "head_dim": d, "causal": int(c)}
            for d in PREFILL_HEAD_DIMS for c in (False, True) for s in PREFILL_SEQS]


def quick_shapes(family: str) -> list[dict]:
    if family == "decode":
        return [{"batch": 16, "context": 16384}, {"batch": 1, "context": 4096}]
    return [{"seq": 8192, "head_dim": 128, "causal": 0}, {"seq": 8192, "head_dim": 128, "causal": 1}]


def decode_axes(batch: int, context: int) -> dict:
    """The axis counters of a decode peer, named as kernels/decode/decode_case.hpp names them
    (no page_size: SDPA reads a contiguous KV; the name says page:0)."""
    return {"batch": batch, "q_heads": DECODE_Q_HEADS, "kv_heads": DECODE_KV_HEADS,
            "head_dim": DECODE_HEAD_DIM, "context": context, "window": 0}


def prefill_axes(seq: int, head_dim: int, causal: int) -> dict:
    """fa3_setting() of kernels/prefill/prefill_case.hpp: 16k tokens, hidden 2048."""
    heads = PREFILL_HIDDEN // head_dim
    return {"batch": PREFILL_TOTAL_TOKENS // seq, "q_heads": heads, "kv_heads": heads, "seq_len": seq,
            "kv_len": seq, "head_dim": head_dim, "causal": int(bool(causal)), "window": 0}


def decode_flops(batch: int, context: int, q_heads: int = DECODE_Q_HEADS, head_dim: int = DECODE_HEAD_DIM) -> float:
    """DecodeProblem::flops(): 4 per visible key, per dim, per query head."""
    return 4.0 * float(batch) * context * head_dim * q_heads


def decode_bytes(batch: int, context: int, q_heads: int = DECODE_Q_HEADS, kv_heads: int = DECODE_KV_HEADS,
                 head_dim: int = DECODE_HEAD_DIM, elem_bytes: int = ELEM_BYTES) -> float:
    """DecodeProblem::min_bytes(): K and V of the visible keys, plus Q read and O written once."""
    kv = 2.0 * float(batch) * context * kv_heads * head_dim * elem_bytes
    q_and_o = 2.0 * float(batch) * q_heads * head_dim * elem_bytes
    return kv + q_and_o


def visible_pairs(q_len: int, kv_len: int, causal: bool) -> int:
    """PrefillProblem::visible_keys() summed over queries (bottom-right alignment)."""
    if not causal:
        return q_len * kv_len
    return sum(min(kv_len, i + (kv_len - q_len) + 1) for i in range(q_len)) if q_len != kv_len \
        else q_len * (q_len + 1) // 2


def prefill_flops(batch: int, heads: int, seq: int, head_dim: int, causal: bool) -> float:
    """PrefillProblem::flops(): 4 per visible (query, key) pair, per dim, per head, per batch."""
    return 4.0 * float(visible_pairs(seq, seq, causal)) * head_dim * heads * batch


def prefill_bytes(batch: int, q_heads: int, kv_heads: int, seq: int, head_dim: int,
                  elem_bytes: int = ELEM_BYTES) -> float:
    """PrefillProblem::min_bytes(): Q read and O written, K and V read, once each."""
    q_elems = float(batch) * q_heads * seq * head_dim
    kv_elems = float(batch) * kv_heads * seq * head_dim
    return (2 * q_elems + 2 * kv_elems) * elem_bytes


def work(family: str, shape: dict) -> tuple[dict, float, float]:
    """(axis counters, flops, bytes) of one shape."""
    if family == "decode":
        b, c = shape["batch"], shape["context"]
        return decode_axes(b, c), decode_flops(b, c), decode_bytes(b, c)
    a = prefill_axes(shape["seq"], shape["head_dim"], shape["causal"])
    flops = prefill_flops(a["batch"], a["q_heads"], a["seq_len"], a["head_dim"], bool(a["causal"]))
    return a, flops, prefill_bytes(a["batch"], a["q_heads"], a["kv_heads"], a["seq_len"], a["head_dim"])


def tensor_bytes(family: str, shape: dict) -> float:
    """Bytes of Q, K, V and O of a shape (what the script allocates besides the flush buffer)."""
    _, _, nbytes = work(family, shape)
    return nbytes


# ---- names, labels, records ---------------------------------------------------------------

def experiment_name(family: str) -> str:
    return f"peers_{family}"


def bench_name(family: str, variant: str, shape: dict) -> str:
    """Mirrors our names: decode .../batch:B/context:C/page:0 (contiguous KV, not paged);
    prefill .../seq:S/head_dim:D/causal:0|1."""
    if family == "decode":
        segs = f"batch:{shape['batch']}/context:{shape['context']}/page:0"
    else:
        segs = f"seq:{shape['seq']}/head_dim:{shape['head_dim']}/causal:{int(shape['causal'])}"
    return f"{experiment_name(family)}/{variant}/{DTYPE}/{segs}"


def label(family: str, variant: str) -> str:
    return (f"family={family};experiment={experiment_name(family)};variant={variant};"
            f"baseline={BASELINE};dtype={DTYPE};peer=1")


def device_slug(name: str) -> str:
    """common/harness/bench_main.cpp device_slug(): 'NVIDIA H200' -> 'h200'."""
    for vendor in ("NVIDIA ", "AMD "):
        if name.startswith(vendor):
            name = name[len(vendor):]
    slug = re.sub(r"[^0-9a-z]+", "-", name.lower()).strip("-")
    return slug or "gpu"


def _counters(axes: dict, flops: float, nbytes: float, accuracy: dict, seconds: float | None) -> dict:
    c = {"flops": flops, "bytes": nbytes, "rel_l2_err": accuracy.get("rel_l2_err", float("nan")),
         "max_abs_err": accuracy.get("max_abs_err", float("nan")),
         "mismatch_pct": accuracy.get("mismatch_pct", float("nan")), "input_sets": 1}
    if seconds and seconds > 0:
        c["FLOP_per_s"] = flops / seconds
        c["bytes_per_s"] = nbytes / seconds
    c.update(axes)
    return c


def benchmark_records(name: str, lab: str, kernel_times_us: list[float], axes: dict, flops: float,
                      nbytes: float, accuracy: dict) -> list[dict]:
    """Google Benchmark 1.7 records of one run: an iteration row per repetition (time = the
    kernel time of that call, in us) and median / mean / stddev / cv aggregates."""
    full = name + MANUAL_TIME_SUFFIX
    n = len(kernel_times_us)
    base = {"run_name": full, "repetitions": n, "threads": 1, "time_unit": "us", "label": lab,
            "family_index": 0, "per_family_instance_index": 0}
    out = []
    for i, t in enumerate(kernel_times_us):
        rec = dict(base, name=full, run_type="iteration", repetition_index=i, iterations=1,
                   real_time=float(t), cpu_time=float(t))
        rec.update(_counters(axes, flops, nbytes, accuracy, t * 1e-6))
        out.append(rec)
    mean = statistics.fmean(kernel_times_us)
    median = statistics.median(kernel_times_us)
    sd = statistics.stdev(kernel_times_us) if n > 1 else 0.0
    for agg, value, unit in (("median", median, "time"), ("mean", mean, "time"), ("stddev", sd, "time"),
                             ("cv", sd / mean if mean > 0 else 0.0, "percentage")):
        rec = dict(base, name=f"{full}_{agg}", run_type="aggregate", aggregate_name=agg, aggregate_unit=unit,
                   iterations=n, real_time=float(value), cpu_time=float(value))
        seconds = value * 1e-6 if agg in ("median", "mean") else None
        rec.update(_counters(axes, flops, nbytes, accuracy, seconds))
        out.append(rec)
    return out


def error_record(name: str, lab: str, message: str, axes: dict, flops: float, nbytes: float) -> dict:
    """A failed or skipped run (message 'skipped: ...' for an unsupported combination)."""
    full = name + MANUAL_TIME_SUFFIX
    rec = {"name": full, "run_name": full, "run_type": "iteration", "repetitions": 0, "repetition_index": 0,
           "threads": 1, "iterations": 0, "real_time": 0.0, "cpu_time": 0.0, "time_unit": "us", "label": lab,
           "error_occurred": True, "error_message": message}
    rec.update(axes)
    rec.update(flops=flops, bytes=nbytes)
    return rec


def quartiles(xs: list[float]) -> tuple[float, float, float]:
    if len(xs) < 2:
        x = xs[0] if xs else float("nan")
        return x, x, x
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], statistics.median(xs), q[2]


def results_path(results_root: Path | str, slug: str, family: str, stamp: str, commit: str, dirty: bool) -> Path:
    """<root>/<device_slug>/peers_<family>/<stamp>-<sha10>[-dirty].json, never over an earlier one
    (the naming of common/harness/bench_main.cpp)."""
    d = Path(results_root) / slug / experiment_name(family)
    stem = f"{stamp}-{commit[:10]}" + ("-dirty" if dirty else "")
    p = d / f"{stem}.json"
    i = 1
    while p.exists():
        p = d / f"{stem}-{i}.json"
        i += 1
    return p


def write_atomic(path: Path, data: dict) -> Path:
    """Writes JSON to a hidden temp file beside ``path`` and renames it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.partial"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=1, allow_nan=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def utc_stamp(now: datetime | None = None) -> str:
    return (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")


def _git_dir_head(repo: Path) -> str | None:
    """HEAD's commit read from the .git directory itself (no git binary, no ownership check)."""
    for d in [repo, *repo.parents]:
        git = d / ".git"
        if not git.is_dir():
            continue
        try:
            head = (git / "HEAD").read_text().strip()
            if not head.startswith("ref: "):
                return head or None
            ref = head[len("ref: "):]
            if (git / ref).is_file():
                return (git / ref).read_text().strip() or None
            packed = git / "packed-refs"
            if packed.is_file():
                for line in packed.read_text().splitlines():
                    parts = line.split()
                    if len(parts) == 2 and parts[1] == ref:
                        return parts[0]
        except OSError:
            return None
        return None
    return None


def git_provenance(repo: Path | str = ".") -> tuple[str, str]:
    """(commit, dirty): from $SCHEDLAB_COMMIT / $SCHEDLAB_DIRTY when set (scripts/pack_carry.sh
    writes them from the development checkout, which the device machine's copy of the working
    tree matches, while its .git can lag behind), else from git (any owner: a copied checkout
    is often someone else's), else HEAD read from .git with dirty 'unknown'."""
    if os.environ.get("SCHEDLAB_COMMIT"):
        return os.environ["SCHEDLAB_COMMIT"], os.environ.get("SCHEDLAB_DIRTY", "unknown")
    git = ["git", "-c", "safe.directory=*"]
    try:
        commit = subprocess.run(git + ["rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                                check=True, timeout=10).stdout.strip()
        status = subprocess.run(git + ["status", "--porcelain"], cwd=repo, capture_output=True, text=True,
                                check=True, timeout=60).stdout
        if commit:
            return commit, "true" if status.strip() else "false"
    except (OSError, subprocess.SubprocessError):
        pass
    return _git_dir_head(Path(repo).resolve()) or "unknown", os.environ.get("SCHEDLAB_DIRTY", "unknown")


def results_document(context: dict, records: list[dict]) -> dict:
    return {"context": context, "benchmarks": records}


# ---- on the GPU ---------------------------------------------------------------------------

def _torch():
    import torch  # noqa: PLC0415  (lazy: the pure parts run without torch)
    return torch


def device_context() -> dict:
    """Provenance and ceilings, with the keys our harness writes."""
    torch = _torch()
    props = torch.cuda.get_device_properties(0)
    ctx = {
        "date": datetime.now(timezone.utc).isoformat(), "host_name": socket.gethostname(),
        "executable": " ".join([sys.executable] + sys.argv),
        "device": props.name, "arch": f"sm_{props.major}{props.minor}",
        "sm_count": str(props.multi_processor_count), "l2_bytes": str(props.L2_cache_size),
        "toolkit_version": str(torch.version.cuda), "torch_version": torch.__version__,
        "cudnn_version": str(torch.backends.cudnn.version()), "backend": "cuda (PyTorch SDPA)",
        "timing": TIMING, "call_timing": CALL_TIMING,
        # The device call this run belongs to (scripts/sweep.py and device_full.sh set one per
        # call), so the analysis sets peers only beside our kernels of the same call.
        "run_id": os.environ.get("SCHEDLAB_RUN_ID")
        or f"{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}-{random.getrandbits(32):08x}",
    }
    try:
        drv = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=True).stdout.strip()
        ctx["driver_version"] = drv.splitlines()[0].strip() if drv else "unknown"
    except (OSError, subprocess.SubprocessError):
        ctx["driver_version"] = "unknown (no nvidia-smi)"
    return ctx


def measure_copy_bandwidth(nbytes: int = COPY_BYTES, repeats: int = COPY_REPEATS) -> float:
    """Device-to-device copy, bytes read plus written per second, median of ``repeats`` after one
    warm-up (common/harness/gpu_platform.cu measure_copy_bandwidth)."""
    torch = _torch()
    src = torch.ones(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    rates = []
    for i in range(repeats + 1):
        a.record()
        dst.copy_(src)
        b.record()
        b.synchronize()
        if i > 0:
            rates.append(2.0 * nbytes / (a.elapsed_time(b) * 1e-3))
    del src, dst
    return sorted(rates)[len(rates) // 2]


class Flusher:
    """Evicts the L2 by READING a buffer of twice its size (outside the timed region), as our
    harness does: a written buffer would leave the L2 full of dirty lines whose write-back
    the next, timed kernel pays (about 4% of a 250 us memory-bound decode on the H200)."""

    def __init__(self):
        torch = _torch()
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        self.buf = torch.ones(2 * l2 // 4, dtype=torch.int32, device="cuda")
        self.sink = None

    def __call__(self):
        self.sink = self.buf.sum()


def _seed() -> int:
    return random.SystemRandom().getrandbits(63)


def make_inputs(family: str, shape: dict, seed: int):
    """Standard-normal bf16 Q, K, V. Storage is [batch, seq, heads, D] (FlashAttention's and a
    KV cache's layout), viewed as SDPA's [batch, heads, seq, D]; decode KV is contiguous per
    sequence (not paged)."""
    torch = _torch()
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    dt = torch.bfloat16
    if family == "decode":
        b, c = shape["batch"], shape["context"]
        q = torch.randn(b, 1, DECODE_Q_HEADS, DECODE_HEAD_DIM, device="cuda", dtype=dt, generator=g)
        k = torch.randn(b, c, DECODE_KV_HEADS, DECODE_HEAD_DIM, device="cuda", dtype=dt, generator=g)
        v = torch.randn(b, c, DECODE_KV_HEADS, DECODE_HEAD_DIM, device="cuda", dtype=dt, generator=g)
    else:
        a = prefill_axes(shape["seq"], shape["head_dim"], shape["causal"])
        dims = (a["batch"], a["seq_len"], a["q_heads"], a["head_dim"])
        q, k, v = (torch.randn(*dims, device="cuda", dtype=dt, generator=g) for _ in range(3))
    return q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)


def sdpa_call(family: str, shape: dict, variant: str, q, k, v):
    """A closure running SDPA restricted to the variant's backend."""
    torch = _torch()
    from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: PLC0415
    import torch.nn.functional as F  # noqa: PLC0415

    backend = getattr(SDPBackend, VARIANTS[variant])
    causal = family == "prefill" and bool(shape["causal"])
    gqa = family == "decode"

    def call():
        with sdpa_kernel(backend):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)
    del torch
    return call


def reference_compare(family: str, shape: dict, q, k, v, out) -> dict:
    """float64 reference on the GPU (upcast inputs) for a sample; accuracy numbers as ours."""
    torch = _torch()
    scale = 1.0 / math.sqrt(q.shape[-1])
    rng = random.Random(_seed())
    diffs, refs = [], []
    if family == "decode":
        items = sorted(rng.sample(range(q.shape[0]), min(REF_DECODE_BATCH_ITEMS, q.shape[0])))
        group = DECODE_Q_HEADS // DECODE_KV_HEADS
        for bi in items:
            qq = q[bi].double()                                       # [32, 1, D]
            kk = k[bi].double().repeat_interleave(group, dim=0)       # [32, S, D]
            vv = v[bi].double().repeat_interleave(group, dim=0)
            p = torch.softmax((qq @ kk.transpose(-1, -2)) * scale, dim=-1)
            refs.append((p @ vv).flatten())
            diffs.append(out[bi].double().flatten() - refs[-1])
            del kk, vv, p
    else:
        B, H, S, _ = q.shape
        items = sorted(rng.sample(range(B), min(REF_PREFILL_BATCH_ITEMS, B)))
        heads = sorted(rng.sample(range(H), min(REF_PREFILL_HEADS, H)))
        rows = sorted(set(rng.sample(range(S), min(REF_PREFILL_ROWS, S))) | {0, S - 1})
        ridx = torch.tensor(rows, device=q.device)
        for bi in items:
            qq = q[bi, heads][:, ridx].double()                       # [h, r, D]
            kk, vv = k[bi, heads].double(), v[bi, heads].double()     # [h, S, D]
            s = (qq @ kk.transpose(-1, -2)) * scale
            if shape["causal"]:
                keys = torch.arange(S, device=q.device)
                s = s.masked_fill(keys[None, :] > ridx[:, None], float("-inf"))
            ref = torch.softmax(s, dim=-1) @ vv
            refs.append(ref.flatten())
            diffs.append(out[bi, heads][:, ridx].double().flatten() - refs[-1])
            del kk, vv, s
    return gate(diffs, refs)


def _kernels_under(evt) -> list:
    """Device kernels launched inside a CPU-side profiler event (its own and its children's)."""
    out = list(getattr(evt, "kernels", []) or [])
    for ch in getattr(evt, "cpu_children", []) or []:
        out.extend(_kernels_under(ch))
    return out


def time_kernels(call, flush, reps: int) -> tuple[list[float], list[str], str]:
    """Per-call kernel time (us) over ``reps`` profiled calls, each after an L2 flush: the sum of
    the device durations of the kernels launched under the call's record_function range.
    Returns (times, kernel names of one call, attribution method)."""
    torch = _torch()
    from torch.profiler import ProfilerActivity, profile, record_function  # noqa: PLC0415

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            with record_function("schedlab_flush"):
                flush()
            with record_function("schedlab_call"):
                call()
            torch.cuda.synchronize()
    events = prof.events()
    cpu = torch.autograd.DeviceType.CPU
    calls = [e for e in events if e.name == "schedlab_call" and e.device_type == cpu]
    calls.sort(key=lambda e: e.time_range.start)
    per_call = [_kernels_under(e) for e in calls]
    if len(per_call) == reps and all(per_call):
        times = [sum(kn.duration for kn in ks) for ks in per_call]  # us
        return times, [kn.name for kn in per_call[-1]], "record_function linkage"
    # Fallback: the device timeline, split at the flush kernels.
    flushes = [e for e in events if e.name == "schedlab_flush" and e.device_type == cpu]
    flush_names = {kn.name for e in flushes for kn in _kernels_under(e)}
    dev = [e for e in events if e.device_type != cpu and e.name not in ("schedlab_flush", "schedlab_call")
           and not e.name.startswith("gpu_user_annotation")]
    dev.sort(key=lambda e: e.time_range.start)
    segments, cur = [], None
    for e in dev:
        if e.name in flush_names:
            if cur is not None:
                segments.append(cur)
            cur = []
        elif cur is not None:
            cur.append(e)
    if cur is not None:
        segments.append(cur)
    if flush_names and len(segments) == reps and all(segments):
        times = [sum(e.time_range.elapsed_us() for e in seg) for seg in segments]
        return times, [e.name for e in segments[-1]], "device timeline split at flush kernels"
    raise RuntimeError(f"could not attribute kernels to calls ({len(calls)} call ranges, "
                       f"{sum(1 for k in per_call if k)} with kernels, {reps} expected)")


LEAD_ENV = "SCHEDLAB_LAUNCH_LEAD_US"
OWN_LEAD_US = 500.0  # the spin that hides a Python call's host side (FlashAttention-4 keeps a longer one)


def launch_lead_us(own_us: float = OWN_LEAD_US) -> float:
    """Device idle before each timed call (us): ``SCHEDLAB_LAUNCH_LEAD_US`` where set, the lead the
    whole device call gives every peer and our benchmarks (``--schedlab_launch_lead_us``), else the
    peer's own ``own_us``. A common lead shorter than the peer's own would let its host side into
    the events, so it is refused."""
    text = os.environ.get(LEAD_ENV, "").strip()
    if not text:
        return own_us
    try:
        lead = float(text)
    except ValueError:
        raise ValueError(f"{LEAD_ENV}={text!r} is not a number of microseconds") from None
    if not lead >= own_us:
        raise ValueError(f"{LEAD_ENV}={text} is below the {own_us:g} us this peer's Python host side needs: "
                         f"give every peer and our benchmarks at least {own_us:g}")
    return lead


def _spin_cycles(lead_us: float) -> int:
    """Cycles of ``torch.cuda._sleep`` that spin the device for about ``lead_us``."""
    torch = _torch()
    s0, s1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    s0.record()
    torch.cuda._sleep(1_000_000)
    s1.record()
    s1.synchronize()
    return int(1_000_000 * lead_us / max(s0.elapsed_time(s1) * 1e3, 1.0))


def _queued_once(call, flush, cycles: int, lead_us: float, events) -> float:
    """One kernel time (us): the call enqueued while the device spins after the L2 flush, so the
    events around it see only its kernels back to back. A host-side enqueue longer than the spin
    could leave a launch gap inside, so it raises instead of returning a number with the gap."""
    a, b = events
    flush()
    _torch().cuda._sleep(cycles)
    a.record()
    t = time.perf_counter()
    call()
    host_us = (time.perf_counter() - t) * 1e6
    b.record()
    b.synchronize()
    if host_us >= 0.8 * lead_us:
        raise RuntimeError(f"host-side enqueue took {host_us:.0f} us, not hidden by a {lead_us:.0f} us spin")
    return a.elapsed_time(b) * 1e3


def _call_once(call, flush, events) -> float:
    """One whole-call time (us): CUDA events around the Python call, L2 flushed before it."""
    a, b = events
    flush()
    a.record()
    call()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e3


def _events():
    torch = _torch()
    return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)


def time_queued(call, flush, reps: int, lead_us: float = 500.0) -> list[float]:
    """Kernel time (us) without the profiler, ``reps`` times (``_queued_once``)."""
    cycles, events = _spin_cycles(lead_us), _events()
    return [_queued_once(call, flush, cycles, lead_us, events) for _ in range(reps)]


def time_interleaved(call, flush, reps: int, lead_us: float = 500.0) -> tuple[list[float], list[float]]:
    """(kernel times, whole-call times) in us, one of each per repetition, alternating: the
    kernel time as the harness takes ours (``_queued_once``), then the whole call."""
    cycles, events = _spin_cycles(lead_us), _events()
    kernel, whole = [], []
    for _ in range(reps):
        kernel.append(_queued_once(call, flush, cycles, lead_us, events))
        whole.append(_call_once(call, flush, events))
    return kernel, whole


@dataclass
class PeerTiming:
    kernel_us: list[float]          # as the harness times ours: the numbers the records hold
    call_us: list[float]            # the whole call, alternating with kernel_us
    kernels: list[str]              # names of the kernels one call launched (profiler), or []
    method: str                     # how kernel_us was taken
    profiler_kernel_us: float | None  # the profiler's median sum of kernel durations, a cross-check


def profile_one_call(call, warmup: int) -> None:
    """A peer's ``--profile``: ``warmup`` calls (a JIT compile among them), then one call between
    cudaProfilerStart and Stop, which a profiler started with ``--profile-from-start off`` sees
    alone (scripts/device_ncu_peer.sh)."""
    torch = _torch()
    with torch.no_grad():
        for _ in range(max(1, warmup)):
            call()
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        call()
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


def profile_shape(name: str) -> dict:
    """The prefill shape ({seq, head_dim, causal}) of one of our benchmark names, for
    ``--profile``: bf16 in the FA3 setting, the problems this peer runs. Raises ValueError with the
    reason for any other name (the name grammar is fa4_peers.config_from_name's)."""
    import fa4_peers as fa  # noqa: PLC0415 (it imports this module)
    cfg = fa.config_from_name(name)
    if cfg is None:
        raise ValueError("not a prefill benchmark name")
    cfg.check()
    if cfg.dtype != DTYPE:
        raise ValueError(f"this peer runs {DTYPE}, not {cfg.dtype}")
    if cfg != fa.Config.fa3(cfg.q_len, cfg.head_dim, cfg.causal):
        raise ValueError(f"this peer runs the FA3 setting ({PREFILL_TOTAL_TOKENS} tokens, hidden {PREFILL_HIDDEN}, "
                         "as many keys as queries), not this batch")
    return {"seq": cfg.q_len, "head_dim": cfg.head_dim, "causal": cfg.causal}


def time_peer(call, flush, reps: int, own_lead_us: float = OWN_LEAD_US) -> PeerTiming:
    """A peer's call timed as our kernels are (``time_interleaved``, behind ``launch_lead_us``),
    and profiled in a separate pass for its kernels' names and the profiler's own sum (where it
    can attribute kernels to calls; FlashInfer's tvm-ffi launches it cannot)."""
    kernel, whole = time_interleaved(call, flush, reps, launch_lead_us(own_lead_us))
    try:
        profiled, names, _ = time_kernels(call, flush, min(reps, PROFILED_REPS))
        prof_median = statistics.median(profiled)
    except RuntimeError as e:
        if "could not attribute" not in str(e):
            raise
        names, prof_median = [], None
    return PeerTiming(kernel, whole, names, TIMING, prof_median)


def note_timing(notes: dict, bench: str, timing: PeerTiming) -> None:
    """The context notes of one timed benchmark: call time quartiles, kernels, the profiler's sum."""
    q1, med, q3 = quartiles(timing.call_us)
    notes.setdefault("call_time_us", {})[bench] = {"q1": round(q1, 3), "median": round(med, 3), "q3": round(q3, 3)}
    notes.setdefault("kernels_per_call", {})[bench] = " + ".join(_short(k, 90) for k in timing.kernels)
    notes.setdefault("kernel_attribution", set()).add(timing.method)
    if timing.profiler_kernel_us is not None:
        notes.setdefault("profiler_kernel_us", {})[bench] = round(timing.profiler_kernel_us, 3)


def time_calls(call, flush, reps: int) -> list[float]:
    """Whole-call time (us), ``reps`` times (``_call_once``)."""
    events = _events()
    return [_call_once(call, flush, events) for _ in range(reps)]


def _short(msg: str, limit: int = 300) -> str:
    line = " ".join(str(msg).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def run_one(family: str, shape: dict, variant: str, inputs, flush, reps: int, warmup: int, notes: dict) -> list[dict]:
    """Records of one (shape, backend): timing iterations + aggregates, or an error record."""
    torch = _torch()
    axes, flops, nbytes = work(family, shape)
    name, lab = bench_name(family, variant, shape), label(family, variant)
    q, k, v = inputs
    call = sdpa_call(family, shape, variant, q, k, v)
    with warnings.catch_warnings(record=True) as caught:  # SDPA says why a backend refuses
        warnings.simplefilter("always")
        try:
            out = call()
            torch.cuda.synchronize()
        except RuntimeError as e:  # no kernel of this backend for the shape
            why = "; ".join(_short(w.message, 200) for w in caught[:3])
            return [error_record(name, lab, SKIPPED_PREFIX + _short(e) + (f" ({why})" if why else ""),
                                 axes, flops, nbytes)]
    acc = reference_compare(family, shape, q, k, v, out)
    del out
    if not acc["passed"]:
        return [error_record(name, lab, "accuracy gate failed: " + acc["message"], axes, flops, nbytes)]
    try:
        for _ in range(warmup):
            call()
        torch.cuda.synchronize()
        timing = time_peer(call, flush, reps)
    except RuntimeError as e:
        return [error_record(name, lab, "timing failed: " + _short(e), axes, flops, nbytes)]
    note_timing(notes, name, timing)
    return benchmark_records(name, lab, timing.kernel_us, axes, flops, nbytes, acc)


def run_family(family: str, shapes: list[dict], reps: int, warmup: int, flush, log) -> tuple[list[dict], dict]:
    torch = _torch()
    records, notes = [], {}
    for i, shape in enumerate(shapes):
        need = tensor_bytes(family, shape)
        if need > MEMORY_LIMIT_BYTES:
            for variant in VARIANTS:
                axes, flops, nbytes = work(family, shape)
                records.append(error_record(bench_name(family, variant, shape), label(family, variant),
                                            f"{SKIPPED_PREFIX}Q/K/V/O need {need / 1e9:.1f} GB, over this script's "
                                            f"{MEMORY_LIMIT_BYTES / 1e9:.0f} GB limit", axes, flops, nbytes))
            log(f"[{family} {i + 1}/{len(shapes)}] {shape}: skipped (memory)")
            continue
        inputs = make_inputs(family, shape, _seed())
        for variant in VARIANTS:
            t0 = time.time()
            recs = run_one(family, shape, variant, inputs, flush, reps, warmup, notes)
            records.extend(recs)
            log(f"[{family} {i + 1}/{len(shapes)}] {bench_name(family, variant, shape)}: "
                f"{summary_line(recs, notes)} ({time.time() - t0:.1f} s)")
        del inputs
        torch.cuda.empty_cache()
    notes["kernel_attribution"] = "; ".join(sorted(notes.get("kernel_attribution", set()))) or "none"
    return records, notes


def median_record(recs: list[dict]) -> dict | None:
    for r in recs:
        if r.get("aggregate_name") == "median":
            return r
    return None


def summary_line(recs: list[dict], notes: dict | None = None) -> str:
    if recs and recs[0].get("error_occurred"):
        return recs[0]["error_message"]
    m = median_record(recs)
    if m is None:
        return "no median"
    t = m["real_time"]
    s = f"kernel {t:.1f} us, {m['flops'] / (t * 1e-6) / 1e12:.1f} TFLOP/s, {m['bytes'] / (t * 1e-6) / 1e12:.2f} TB/s"
    bench = m["name"][: -len(MANUAL_TIME_SUFFIX) - len("_median")]
    call = ((notes or {}).get("call_time_us") or {}).get(bench)
    if call:
        s += f"; call {call['median']:.1f} us ({call['median'] / t:.3f}x), rel_l2 {m['rel_l2_err']:.2g}"
    return s


def table(records: list[dict], notes: dict) -> str:
    lines = [f"{'benchmark':<62} {'kernel us':>10} {'call us':>10} {'TFLOP/s':>8} {'TB/s':>6} {'rel_l2':>8}"]
    calls = notes.get("call_time_us", {})
    for r in records:
        if r.get("error_occurred"):
            lines.append(f"{r['name'][: -len(MANUAL_TIME_SUFFIX)]:<62} {r['error_message'][:60]}")
            continue
        if r.get("aggregate_name") != "median":
            continue
        bench = r["name"][: -len(MANUAL_TIME_SUFFIX) - len("_median")]
        t = r["real_time"]
        c = calls.get(bench, {}).get("median", float("nan"))
        lines.append(f"{bench:<62} {t:>10.1f} {c:>10.1f} {r['flops'] / (t * 1e-6) / 1e12:>8.1f} "
                     f"{r['bytes'] / (t * 1e-6) / 1e12:>6.2f} {r['rel_l2_err']:>8.2g}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results-root", default="results")
    ap.add_argument("--family", choices=("decode", "prefill", "all"), default="all")
    ap.add_argument("--reps", type=int, default=20, help="timed repetitions per shape and backend")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="two shapes per family")
    ap.add_argument("--profile", metavar="NAME",
                    help="one warmed-up call of --backend on the prefill problem of our benchmark NAME between "
                         "cudaProfilerStart and Stop, for a profiler started with --profile-from-start off "
                         "(scripts/device_ncu_peer.sh); writes nothing")
    ap.add_argument("--backend", choices=sorted(VARIANTS), default="sdpa_cudnn", help="--profile's SDPA backend")
    args = ap.parse_args(argv)
    if args.reps < 2:
        ap.error("--reps must be >= 2")
    shape = None
    if args.profile:
        try:
            shape = profile_shape(args.profile)
        except ValueError as e:
            print(f"sdpa_peers: --profile {args.profile}: {e}", file=sys.stderr)
            return 2

    torch = _torch()
    if not torch.cuda.is_available():
        print("sdpa_peers: no CUDA device; nothing to run", file=sys.stderr)
        return 3
    if shape is not None:
        profile_one_call(sdpa_call("prefill", shape, args.backend, *make_inputs("prefill", shape, _seed())), args.warmup)
        print(f"sdpa_peers: profiled one {args.backend} call of {bench_name('prefill', args.backend, shape)}", flush=True)
        return 0
    t_start = time.time()

    def log(msg):
        print(f"[{time.time() - t_start:7.1f} s] {msg}", flush=True)

    commit, dirty = git_provenance(Path(__file__).resolve().parent)
    ctx = device_context()
    ctx.update(schedlab_commit=commit, schedlab_dirty=dirty)
    bw = measure_copy_bandwidth()
    ctx["copy_bandwidth_GBps"] = f"{bw / 1e9:.6f}"
    log(f"{ctx['device']} ({ctx['arch']}), torch {ctx['torch_version']}, CUDA {ctx['toolkit_version']}, "
        f"cuDNN {ctx['cudnn_version']}, driver {ctx['driver_version']}; copy {bw / 1e12:.2f} TB/s; "
        f"commit {commit[:10]} dirty={dirty}")
    slug = device_slug(ctx["device"])
    flush = Flusher()
    families = ("decode", "prefill") if args.family == "all" else (args.family,)
    written = []
    for family in families:
        shapes = quick_shapes(family) if args.quick else (decode_shapes() if family == "decode" else prefill_shapes())
        records, notes = run_family(family, shapes, args.reps, args.warmup, flush, log)
        fctx = dict(ctx, experiment=experiment_name(family), reps=str(args.reps), warmup=str(args.warmup),
                    launch_lead_us=f"{launch_lead_us():g}",
                    flush_bytes=str(flush.buf.numel()), kernel_attribution=notes["kernel_attribution"],
                    call_time_us=notes.get("call_time_us", {}), kernels_per_call=notes.get("kernels_per_call", {}),
                    profiler_kernel_us=notes.get("profiler_kernel_us", {}),
                    layout=("Q/K/V stored [batch, seq, heads, D], viewed as [batch, heads, seq, D]; "
                            + ("contiguous bf16 KV per sequence, not paged; GQA via enable_gqa=True"
                               if family == "decode" else "FA3 setting: 16k tokens, hidden 2048")),
                    accuracy=("float64 torch reference on the GPU from the upcast inputs, sampled "
                              + (f"{REF_DECODE_BATCH_ITEMS} batch items, all heads" if family == "decode" else
                                 f"{REF_PREFILL_BATCH_ITEMS} batch items x {REF_PREFILL_HEADS} heads x "
                                 f"{REF_PREFILL_ROWS}+ query rows")
                              + f"; gate rel_l2 <= {REL_L2_MAX:g}, mismatch (atol {ATOL:g} + rtol {RTOL:g}) "
                                f"<= {MAX_MISMATCH_PCT:g}%"))
        if args.quick:
            fctx["quick"] = "true"
        path = results_path(args.results_root, slug, family, utc_stamp(), commit, dirty == "true")
        write_atomic(path, results_document(fctx, records))
        written.append(path)
        log(f"wrote {path}")
        print(table(records, notes), flush=True)
    log("done: " + ", ".join(map(str, written)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
