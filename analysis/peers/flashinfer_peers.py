#!/usr/bin/env python3
"""FlashInfer's paged batch decode as a peer of our decode kernels, measured in the same run and
written as a results file in our schema (Google Benchmark JSON, ``peer=1``, experiment
``peers_decode``).

``BatchDecodeWithPagedKVCacheWrapper`` (NHD layout, the page size of the configuration) runs
each decode configuration twice: ``use_tensor_cores=True`` (variant ``flashinfer_tc``: the
prefill kernel with one query per request) and ``False`` (``flashinfer_cuda_core``: the
dedicated decode kernel). A configuration FlashInfer refuses (the CUDA-core path serves only
some GQA group sizes) is written as a skip carrying FlashInfer's reason.

Configurations, each with a KV dtype (bf16, fp8_e4m3), a page size and query / KV heads:
  * default: the uniform decode grid of sdpa_peers (batch 1, 16, 64 x context 1k..64k), page 16,
    32/8 and 64/1 (MQA) heads, bf16 and fp8 (``--page``, ``--heads``, ``--dtypes`` change it);
  * ``--lengths SPEC`` (repeatable): ragged batches in the harness's grammar
    (``1+65536+300``, ``4x1024+1x65536``, ``uniform:B:MIN-MAX``, ``one_long:B:LONG:MIN-MAX``);
  * ``--from-results DIR``: every decode configuration of our results files (``*.json``,
    ``*.json.gz``) under DIR, read from the benchmark names (batch and context, or lengths; page;
    heads; dtype) so that the peer rows join ours in the analysis.

Timing is KERNEL time as in sdpa_peers (``sdpa_peers.time_peer``), as our harness times ours:
CUDA events around each call, enqueued while the device spins after the L2 flush (read of twice
its size), so no host launch gap is inside; ``plan()`` runs once per configuration outside the
timed region. (On the H200 the profiler did not see the kernels of FlashInfer's tvm-ffi
launches, so its kernel names and ``profiler_kernel_us`` stay empty for FlashInfer.) Accuracy: against a
float64 reference computed by torch from the stored (bf16 or fp8) K/V on a sample of sequences,
gated as ours. The first call of each kernel module includes FlashInfer's JIT compilation
(nothing is prebuilt in the packed FlashInfer); its time is printed and kept in the context.

torch and flashinfer are imported lazily: the pure parts (spec parsing, names, records, config
discovery) are tested without them (analysis/tests/test_flashinfer_peers.py).

Run on the GPU machine with FlashInfer importable (scripts/device_full.sh unpacks
.peers/flashinfer.tar.xz to /tmp/fi_site):

    PYTHONPATH=/tmp/fi_site python3 analysis/peers/flashinfer_peers.py --results-root results \\
        --from-results results/h200
"""
from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import math
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sdpa_peers as sp  # noqa: E402  (pure parts; torch only inside functions)

FAMILY = "decode"
EXPERIMENT = "peers_decode"
VARIANTS = {"flashinfer_tc": True, "flashinfer_cuda_core": False}  # variant -> use_tensor_cores
BASELINE = "flashinfer_tc"
DTYPES = ("bf16", "fp8_e4m3")
ELEM_BYTES = {"bf16": 2, "f16": 2, "fp8_e4m3": 1}
Q_BYTES = 2  # queries and outputs stay bf16
DEFAULT_PAGE, DEFAULT_Q_HEADS, DEFAULT_KV_HEADS, DEFAULT_HEAD_DIM = 16, 32, 8, 128
WORKSPACE_BYTES = 256 << 20
REF_SEQUENCES = 4
MEMORY_LIMIT_BYTES = 60e9

# A refusal by FlashInfer (a configuration it has no kernel for), as opposed to a failure.
REFUSAL_WORDS = ("unsupported", "not supported", "not implemented", "group size", "invalid configuration")


class SpecError(ValueError):
    """A lengths spec or configuration that forms no decode problem."""


# ---- ragged batches: common/harness/axes.cpp parse_lengths --------------------------------

def _load_lengths():
    """analysis/schedlab_analysis/lengths.py (the harness's reading of a `lengths` value, its
    draws included), loaded by its path: it needs the standard library alone, while importing it
    through its package runs the package's __init__ (pandas), which a peer script on the GPU
    machine has no use for. The same file under pytest and as a script."""
    path = Path(__file__).resolve().parents[1] / "schedlab_analysis" / "lengths.py"
    spec = importlib.util.spec_from_file_location("_schedlab_lengths", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_lengths = _load_lengths()
parse_lengths = _lengths.parse_lengths  # raises LengthsError (a ValueError) naming the fault
LengthsError = _lengths.LengthsError


# ---- configurations -------------------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    dtype: str                 # KV dtype as our names spell it
    batch: int
    context: int               # every sequence's keys (uniform); the longest (ragged)
    page: int = DEFAULT_PAGE
    q_heads: int = DEFAULT_Q_HEADS
    kv_heads: int = DEFAULT_KV_HEADS
    head_dim: int = DEFAULT_HEAD_DIM
    lengths: str = ""          # the ragged batch's spec; empty: uniform

    def context_lens(self) -> list[int]:
        return parse_lengths(self.lengths) if self.lengths else [self.context] * self.batch

    @staticmethod
    def ragged(spec: str, dtype: str, page: int = DEFAULT_PAGE, q_heads: int = DEFAULT_Q_HEADS,
               kv_heads: int = DEFAULT_KV_HEADS, head_dim: int = DEFAULT_HEAD_DIM) -> "Config":
        lens = parse_lengths(spec)
        return Config(dtype, len(lens), max(lens), page, q_heads, kv_heads, head_dim, spec)

    def check(self) -> None:
        if self.dtype not in DTYPES:
            raise SpecError(f"kv dtype {self.dtype!r}: this peer runs {', '.join(DTYPES)}")
        for what, v in (("batch", self.batch), ("context", self.context), ("page", self.page),
                        ("q_heads", self.q_heads), ("kv_heads", self.kv_heads), ("head_dim", self.head_dim)):
            if v < 1:
                raise SpecError(f"{what} {v} is below 1")
        if self.q_heads % self.kv_heads:
            raise SpecError(f"q_heads {self.q_heads} is not a multiple of kv_heads {self.kv_heads}")


def default_configs(pages=(DEFAULT_PAGE,), heads=((DEFAULT_Q_HEADS, DEFAULT_KV_HEADS),),
                    dtypes=DTYPES) -> list[Config]:
    """The uniform decode grid of sdpa_peers at each page size, heads and dtype."""
    return [Config(dt, s["batch"], s["context"], p, qh, kvh)
            for dt in dtypes for p in pages for qh, kvh in heads for s in sp.decode_shapes()]


def quick_configs() -> list[Config]:
    return [Config("bf16", 16, 16384), Config("fp8_e4m3", 16, 16384), Config("bf16", 1, 65536),
            Config("bf16", 8, 8191, 16, 64, 1)]


def _name_fields(name: str) -> tuple[str | None, dict[str, str]]:
    """(dtype, {key: value}) of a decode benchmark name '<exp>/<variant>/<dtype>/batch:B/...':
    the dtype is the segment before the first key:value one."""
    segs = [s for s in name.split("/") if s]
    fields, dtype = {}, None
    for i, s in enumerate(segs):
        key, sep, value = s.partition(":")
        if sep and key and value:
            if not fields and i > 0:
                dtype = segs[i - 1]
            fields[key] = value
    return dtype, fields


def config_from_name(name: str) -> Config | None:
    """The decode configuration a benchmark name spells (None: not a decode name, or with a
    sliding window, which this peer does not run)."""
    dtype, f = _name_fields(name)
    if dtype is None or "batch" not in f or "page" not in f or ("context" not in f and "lengths" not in f):
        return None
    if int(f.get("window", "0") or 0):
        return None
    q_heads, kv_heads = int(f.get("q_heads", DEFAULT_Q_HEADS)), int(f.get("kv_heads", DEFAULT_KV_HEADS))
    head_dim, page = int(f.get("head_dim", DEFAULT_HEAD_DIM)), int(f["page"])
    if "lengths" in f:
        return Config.ragged(f["lengths"], dtype, page, q_heads, kv_heads, head_dim)
    return Config(dtype, int(f["batch"]), int(f["context"]), page, q_heads, kv_heads, head_dim)


def _read_json(path: Path) -> dict | None:
    try:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError, EOFError):
        return None


def _label(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in str(text or "").split(";") if "=" in kv)


def discover_results(root: Path | str, family: str, parse, log=print) -> list:
    """Every configuration ``parse(benchmark name)`` forms from our own (peer=0) records of
    ``family`` under ``root``, in first-seen order (files in path order). ``parse`` returns None
    or raises ValueError (SpecError is one) for a name it cannot run: such names are reported
    and left out. The FlashAttention-4 prefill peer discovers its configurations the same way."""
    seen: dict = {}
    left_out: set[str] = set()
    files = sorted(p for p in Path(root).rglob("*") if p.is_file() and (p.name.endswith(".json")
                                                                       or p.name.endswith(".json.gz")))
    for path in files:
        doc = _read_json(path)
        if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
            continue
        for rec in doc["benchmarks"]:
            lab = _label(rec.get("label", ""))
            if lab.get("family") != family or lab.get("peer", "0") not in ("0", ""):
                continue
            name = str(rec.get("run_name") or rec.get("name") or "")
            try:
                seen.setdefault(parse(name), None)
            except ValueError as e:
                left_out.add(f"{name}: {e}")
    for line in sorted(left_out)[:20]:
        log(f"from-results: left out {line}")
    return list(seen)


def discover_configs(root: Path | str, log=print) -> list[Config]:
    """Every decode configuration of our own (peer=0) results under ``root``, in first-seen
    order; names this peer cannot run (another dtype, a window) are reported and left out."""
    def parse(name: str) -> Config:
        cfg = config_from_name(name)
        if cfg is None:
            raise SpecError("no batch/context/page in the name, or a window")
        cfg.check()
        return cfg
    return discover_results(root, FAMILY, parse, log)


# ---- work, names, records -------------------------------------------------------------------

def work(cfg: Config) -> tuple[dict, float, float]:
    """(axis counters, flops, bytes) as common/problem.cpp declares a decode problem's work;
    counters named as kernels/decode/decode_case.hpp names them (context: the longest)."""
    lens = cfg.context_lens()
    keys = float(sum(lens))
    flops = 4.0 * keys * cfg.head_dim * cfg.q_heads
    nbytes = 2.0 * keys * cfg.kv_heads * cfg.head_dim * ELEM_BYTES[cfg.dtype] \
        + 2.0 * cfg.batch * cfg.q_heads * cfg.head_dim * Q_BYTES
    axes = {"batch": cfg.batch, "q_heads": cfg.q_heads, "kv_heads": cfg.kv_heads, "head_dim": cfg.head_dim,
            "page_size": cfg.page, "context": max(lens), "window": 0}
    return axes, flops, nbytes


def shape_name(cfg: Config) -> str:
    """kernels/decode/decode_shapes.hpp decode_shape_name(): dtype/batch:B/context:C|lengths:SPEC/
    page:P, then q_heads / kv_heads / head_dim where off the defaults."""
    name = f"{cfg.dtype}/batch:{cfg.batch}/" + (f"lengths:{cfg.lengths}" if cfg.lengths else f"context:{cfg.context}")
    name += f"/page:{cfg.page}"
    for key, value, default in (("q_heads", cfg.q_heads, DEFAULT_Q_HEADS), ("kv_heads", cfg.kv_heads, DEFAULT_KV_HEADS),
                                ("head_dim", cfg.head_dim, DEFAULT_HEAD_DIM)):
        if value != default:
            name += f"/{key}:{value}"
    return name


def bench_name(variant: str, cfg: Config) -> str:
    return f"{EXPERIMENT}/{variant}/{shape_name(cfg)}"


def label(variant: str, cfg: Config) -> str:
    return (f"family={FAMILY};experiment={EXPERIMENT};variant={variant};baseline={BASELINE};"
            f"dtype={cfg.dtype};peer=1")


def is_refusal(message: str) -> bool:
    low = message.lower()
    return any(w in low for w in REFUSAL_WORDS)


def failure_record(variant: str, cfg: Config, message: str) -> dict:
    """A configuration FlashInfer refused ('skipped: ...') or one that failed."""
    axes, flops, nbytes = work(cfg)
    msg = (sp.SKIPPED_PREFIX + "FlashInfer refused: " + sp._short(message)) if is_refusal(message) \
        else sp._short(message)
    return sp.error_record(bench_name(variant, cfg), label(variant, cfg), msg, axes, flops, nbytes)


def records(variant: str, cfg: Config, kernel_times_us: list[float], accuracy: dict) -> list[dict]:
    axes, flops, nbytes = work(cfg)
    return sp.benchmark_records(bench_name(variant, cfg), label(variant, cfg), kernel_times_us, axes, flops,
                                nbytes, accuracy)


def kv_bytes(cfg: Config) -> float:
    pages = sum(-(-n // cfg.page) for n in cfg.context_lens())
    return 2.0 * pages * cfg.page * cfg.kv_heads * cfg.head_dim * ELEM_BYTES[cfg.dtype]


# ---- on the GPU -----------------------------------------------------------------------------

def _torch():
    import torch  # noqa: PLC0415
    return torch


def _flashinfer():
    # The JIT cache (FlashInfer compiles its modules on first use) goes under /tmp, and the
    # decode backend stays FlashInfer's own (no automatic cuDNN route).
    os.environ.setdefault("FLASHINFER_WORKSPACE_BASE", "/tmp/fi_ws")
    os.environ.setdefault("FLASHINFER_DECODE_AUTO_CUDNN", "0")
    import flashinfer  # noqa: PLC0415
    return flashinfer


def torch_kv_dtype(dtype: str):
    torch = _torch()
    return {"bf16": torch.bfloat16, "f16": torch.float16, "fp8_e4m3": torch.float8_e4m3fn}[dtype]


class Inputs:
    """Q [batch, q_heads, D] bf16; K and V caches [pages, page, kv_heads, D] (NHD) in the KV
    dtype, every sequence's pages a random draw of the pool (a shuffled block table)."""

    def __init__(self, cfg: Config, seed: int):
        torch = _torch()
        self.cfg = cfg
        self.lens = cfg.context_lens()
        g = torch.Generator(device="cuda")
        g.manual_seed(seed)
        pages_per = [-(-n // cfg.page) for n in self.lens]
        total = sum(pages_per)
        perm = torch.randperm(total, generator=g, device="cuda").to(torch.int32)
        self.indices = perm
        self.indptr = torch.tensor([0] + list(_cumsum(pages_per)), dtype=torch.int32, device="cuda")
        self.last_page_len = torch.tensor([n - (p - 1) * cfg.page for n, p in zip(self.lens, pages_per)],
                                          dtype=torch.int32, device="cuda")
        dt = torch_kv_dtype(cfg.dtype)
        shape = (total, cfg.page, cfg.kv_heads, cfg.head_dim)
        self.k = torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=g).to(dt)
        self.v = torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=g).to(dt)
        self.q = torch.randn(cfg.batch, cfg.q_heads, cfg.head_dim, device="cuda", dtype=torch.bfloat16, generator=g)
        self.pages_per = pages_per


def _cumsum(xs):
    s = 0
    for x in xs:
        s += x
        yield s


def reference_compare(inp: Inputs, out, gate=None, q=None) -> dict:
    """float64 reference from the stored K/V (bf16 or fp8 values upcast) on a sample of sequences
    (the longest always among them); gated like ours (common/harness/accuracy.cpp bf16), or by
    `gate` (a peer that computes in fp8). `q`: the query as the peer read it (default inp.q)."""
    torch = _torch()
    gate = gate or sp.gate
    q_all = inp.q if q is None else q
    cfg = inp.cfg
    rng = random.Random(sp._seed())
    longest = max(range(cfg.batch), key=lambda i: inp.lens[i])
    items = sorted(set(rng.sample(range(cfg.batch), min(REF_SEQUENCES, cfg.batch))) | {longest})
    group = cfg.q_heads // cfg.kv_heads
    scale = 1.0 / math.sqrt(cfg.head_dim)
    indptr = inp.indptr.tolist()
    diffs, refs = [], []
    for i in items:
        pages = inp.indices[indptr[i]:indptr[i + 1]].long()
        n = inp.lens[i]
        k = inp.k[pages].reshape(-1, cfg.kv_heads, cfg.head_dim)[:n].double().transpose(0, 1)  # [kvh, n, D]
        v = inp.v[pages].reshape(-1, cfg.kv_heads, cfg.head_dim)[:n].double().transpose(0, 1)
        q = q_all[i].double().reshape(cfg.kv_heads, group, cfg.head_dim)                     # [kvh, g, D]
        p = torch.softmax((q @ k.transpose(-1, -2)) * scale, dim=-1)
        ref = (p @ v).reshape(cfg.q_heads, cfg.head_dim).flatten()
        refs.append(ref)
        diffs.append(out[i].double().flatten() - ref)
        del k, v, p
    return gate(diffs, refs, f"values over sequences {items}")


def module_key(variant: str, cfg: Config) -> str:
    """What FlashInfer compiles one module for (its first call pays the JIT)."""
    return f"{variant}/{cfg.dtype}/D{cfg.head_dim}"


def run_one(variant: str, cfg: Config, inp: Inputs, workspace, flush, reps: int, warmup: int, notes: dict,
            log) -> list[dict]:
    torch = _torch()
    fi = _flashinfer()
    name = bench_name(variant, cfg)
    key = module_key(variant, cfg)
    t0 = time.time()
    try:
        wrapper = fi.BatchDecodeWithPagedKVCacheWrapper(workspace, "NHD", use_tensor_cores=VARIANTS[variant])
        wrapper.plan(inp.indptr, inp.indices, inp.last_page_len, cfg.q_heads, cfg.kv_heads, cfg.head_dim, cfg.page,
                     q_data_type=torch.bfloat16, kv_data_type=torch_kv_dtype(cfg.dtype))
        out = torch.full_like(inp.q, float("nan"))  # poisoned: a row the kernel skips fails the gate

        def call():
            return wrapper.run(inp.q, (inp.k, inp.v), out=out)
        call()
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001  (FlashInfer raises several types for a refusal)
        return [failure_record(variant, cfg, f"{type(e).__name__}: {e}")]
    first = time.time() - t0
    if key not in notes.setdefault("first_call_s", {}):
        notes["first_call_s"][key] = round(first, 2)
        log(f"first call of {key} (plan + run, FlashInfer's JIT included): {first:.1f} s")
    acc = reference_compare(inp, out)
    if not acc["passed"]:
        axes, flops, nbytes = work(cfg)
        return [sp.error_record(name, label(variant, cfg), "accuracy gate failed: " + acc["message"], axes, flops,
                                nbytes)]
    try:
        for _ in range(warmup):
            call()
        torch.cuda.synchronize()
        timing = sp.time_peer(call, flush, reps)
    except RuntimeError as e:
        axes, flops, nbytes = work(cfg)
        return [sp.error_record(name, label(variant, cfg), "timing failed: " + sp._short(e), axes, flops, nbytes)]
    sp.note_timing(notes, name, timing)
    notes.setdefault("backend", {})[name] = str(getattr(wrapper, "_backend", "unknown"))
    return records(variant, cfg, timing.kernel_us, acc)


def run_all(configs: list[Config], variants: list[str], reps: int, warmup: int, log,
            budget_s: float | None = None, checkpoint=None, run=None) -> tuple[list[dict], dict]:
    """Records of every configuration and variant; past ``budget_s`` no further configuration is
    started (those left are recorded as skipped, so the file still says what was not run).
    ``checkpoint(records, notes)`` runs after each configuration (the results file is rewritten
    then, so a run stopped from outside keeps what it finished). ``run``: another peer's
    ``run_one`` on the same configurations and inputs (default FlashInfer's)."""
    torch = _torch()
    run = run or run_one
    t_start = time.monotonic()
    flush = sp.Flusher()
    workspace = torch.zeros(WORKSPACE_BYTES, dtype=torch.uint8, device="cuda")
    out, notes = [], {"flush_bytes": flush.buf.numel() * 4}
    for i, cfg in enumerate(configs):
        need = kv_bytes(cfg)
        if budget_s is not None and time.monotonic() - t_start > budget_s:
            for v in variants:
                axes, flops, nbytes = work(cfg)
                out.append(sp.error_record(bench_name(v, cfg), label(v, cfg), f"{sp.SKIPPED_PREFIX}not started: "
                                           f"the {budget_s:.0f} s budget was spent", axes, flops, nbytes))
            continue
        if need > MEMORY_LIMIT_BYTES:
            for v in variants:
                axes, flops, nbytes = work(cfg)
                out.append(sp.error_record(bench_name(v, cfg), label(v, cfg),
                                           f"{sp.SKIPPED_PREFIX}K/V need {need / 1e9:.1f} GB, over this script's "
                                           f"{MEMORY_LIMIT_BYTES / 1e9:.0f} GB limit", axes, flops, nbytes))
            continue
        inp = Inputs(cfg, sp._seed())
        for v in variants:
            t0 = time.time()
            recs = run(v, cfg, inp, workspace, flush, reps, warmup, notes, log)
            out.extend(recs)
            log(f"[{i + 1}/{len(configs)}] {bench_name(v, cfg)}: {sp.summary_line(recs, notes)} "
                f"({time.time() - t0:.1f} s)")
        del inp
        torch.cuda.empty_cache()
        if checkpoint is not None:
            checkpoint(out, notes)
    return out, notes


def context_notes(notes: dict) -> dict:
    """The run's notes as context entries (per benchmark: call time, kernels, FlashInfer's backend;
    per kernel module: the first call's seconds, JIT included)."""
    return {"kernel_attribution": "; ".join(sorted(notes.get("kernel_attribution", set()))) or "none",
            "flush_bytes": str(notes.get("flush_bytes", "")), "call_time_us": notes.get("call_time_us", {}),
            "kernels_per_call": notes.get("kernels_per_call", {}), "flashinfer_backend": notes.get("backend", {}),
            "first_call_s": notes.get("first_call_s", {}), "profiler_kernel_us": notes.get("profiler_kernel_us", {})}


def select_configs(args, log) -> list[Config]:
    heads = [tuple(int(x) for x in h.split("/")) for h in args.heads]
    configs: list[Config] = []
    if args.from_results:
        for d in args.from_results:
            found = discover_configs(d, log)
            log(f"from-results {d}: {len(found)} decode configurations")
            configs += found
    for spec in args.lengths:
        for dt in args.dtypes:
            for qh, kvh in heads:
                configs.append(Config.ragged(spec, dt, args.page, qh, kvh))
    if args.quick:
        configs += quick_configs()
    if not configs:
        configs = default_configs((args.page,), heads, args.dtypes)
    unique = list(dict.fromkeys(configs))
    for c in unique:
        c.check()
    # bf16 first: each KV dtype compiles its own modules on first use, and a run stopped by
    # its time limit then still holds every bf16 configuration.
    return sorted(unique, key=lambda c: DTYPES.index(c.dtype))


def add_config_arguments(ap: argparse.ArgumentParser) -> None:
    """The options that choose the decode configurations (shared with the other paged-decode peers)."""
    ap.add_argument("--from-results", action="append", default=[], metavar="DIR",
                    help="run every decode configuration of our results files under DIR")
    ap.add_argument("--lengths", action="append", default=[], metavar="SPEC",
                    help="a ragged batch ('1+65536+300', '4x1024+1x65536', 'one_long:32:131072:256-4096')")
    ap.add_argument("--page", type=int, default=DEFAULT_PAGE, help="page size of --lengths and the default grid")
    ap.add_argument("--heads", action="append", default=None, metavar="Q/KV",
                    help="query/KV heads of --lengths and the default grid (repeatable; default 32/8 and 64/1)")
    ap.add_argument("--dtypes", nargs="+", default=list(DTYPES), choices=DTYPES)
    ap.add_argument("--quick", action="store_true", help="four headline configurations")


def finish_config_arguments(ap: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    args.heads = args.heads or [f"{DEFAULT_Q_HEADS}/{DEFAULT_KV_HEADS}", "64/1"]
    if getattr(args, "reps", 2) < 2:
        ap.error("--reps must be >= 2")
    return args


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results-root", default="results")
    add_config_arguments(ap)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    ap.add_argument("--budget-s", type=float, help="start no configuration after this many seconds")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    args = finish_config_arguments(ap, ap.parse_args(argv))
    t_start = time.time()

    def log(msg):
        print(f"[{time.time() - t_start:7.1f} s] {msg}", flush=True)

    try:
        configs = select_configs(args, log)
    except (SpecError, ValueError) as e:
        print(f"flashinfer_peers: {e}", file=sys.stderr)
        return 2
    torch = _torch()
    if not torch.cuda.is_available():
        print("flashinfer_peers: no CUDA device; nothing to run", file=sys.stderr)
        return 3
    try:
        t0 = time.time()
        fi = _flashinfer()
    except ImportError as e:
        print(f"flashinfer_peers: FlashInfer not importable ({e}); nothing to run", file=sys.stderr)
        return 3
    log(f"flashinfer {getattr(fi, '__version__', '?')} imported in {time.time() - t0:.1f} s "
        f"(JIT cache {os.environ['FLASHINFER_WORKSPACE_BASE']}); {len(configs)} configurations x {len(args.variants)} variants")
    commit, dirty = sp.git_provenance(Path(__file__).resolve().parent)
    ctx = sp.device_context()
    ctx.update(schedlab_commit=commit, schedlab_dirty=dirty, backend="cuda (FlashInfer)",
               flashinfer_version=str(getattr(fi, "__version__", "unknown")))
    bw = sp.measure_copy_bandwidth()
    ctx["copy_bandwidth_GBps"] = f"{bw / 1e9:.6f}"
    log(f"{ctx['device']} ({ctx['arch']}), torch {ctx['torch_version']}; copy {bw / 1e12:.2f} TB/s; "
        f"commit {commit[:10]} dirty={dirty}; run {ctx['run_id']}")
    ctx.update(experiment=EXPERIMENT, reps=str(args.reps), warmup=str(args.warmup),
               launch_lead_us=f"{sp.launch_lead_us():g}",
               layout=("BatchDecodeWithPagedKVCacheWrapper, NHD paged K/V caches [pages, page, kv_heads, D], "
                       "block table a random permutation of the pool; Q and O bf16; fp8 K/V stored as "
                       "float8_e4m3fn with scale 1; plan() once per configuration, outside the timed region; "
                       "variants: flashinfer_tc = use_tensor_cores=True, flashinfer_cuda_core = False"),
               accuracy=(f"float64 torch reference from the stored K/V, sampled {REF_SEQUENCES} sequences plus "
                         f"the longest, all heads; gate rel_l2 <= {sp.REL_L2_MAX:g}, mismatch (atol {sp.ATOL:g} + "
                         f"rtol {sp.RTOL:g}) <= {sp.MAX_MISMATCH_PCT:g}%"))
    if args.quick:
        ctx["quick"] = "true"
    path = sp.results_path(args.results_root, sp.device_slug(ctx["device"]), FAMILY, sp.utc_stamp(), commit,
                           dirty == "true")

    def checkpoint(recs, notes, complete=False):
        # complete=false: a file left by a run stopped from outside (what it holds is finished).
        sp.write_atomic(path, sp.results_document(dict(ctx, **context_notes(notes), complete=str(complete).lower()),
                                                  recs))

    recs, notes = run_all(configs, args.variants, args.reps, args.warmup, log, args.budget_s, checkpoint)
    checkpoint(recs, notes, complete=True)
    log(f"wrote {path}")
    print(sp.table(recs, notes), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
