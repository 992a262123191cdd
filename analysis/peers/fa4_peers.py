#!/usr/bin/env python3
"""FlashAttention-4 (PyPI ``flash-attn-4``, written in the CuTe DSL) as a peer of our prefill
kernels, measured in the same device call and written as a results file in our schema (Google
Benchmark JSON, ``peer=1``, experiment ``peers_prefill``, variant ``fa4``).

What FA4 offers on the H200 (read from the flash-attn-4 4.0.0b36 wheel, with nvidia-cutlass-dsl
4.8.1; ``flash_attn/cute/interface.py``):
  * entry point ``flash_attn.cute.flash_attn_func(q, k, v, causal=..., window_size=(left, right))``
    with q ``[batch, q_len, q_heads, D]`` and k, v ``[batch, kv_len, kv_heads, D]`` (our storage
    layout; GQA when q_heads is a multiple of kv_heads); it returns ``(out, lse)``;
  * compute capability 9.x runs ``FlashAttentionForwardSm90`` (warp-specialized, 2 K/V stages,
    intra-warpgroup overlap; tiles 192x128 at D <= 64, 128x128 at D <= 128); head dims 8..256
    in steps of 8 (q and v may differ), fp16 and bf16 only: fp8 is refused off SM100 ("FP8 is
    only supported on SM100"); causal (bottom-right aligned, as ours) and sliding windows; no
    split-KV on SM90;
  * every kernel is compiled on first use (JIT through the CuTe DSL: Python -> MLIR -> PTX ->
    cubin, in process). The key is the kernel's static configuration (dtype, head dims, GQA
    ratio, causal / window, tiles, ...), not the sequence lengths or the batch, so our prefill
    shapes need one compile per (dtype, D, causal, window, GQA ratio). A compile takes tens of
    seconds; each is measured (context ``first_call_s``) and kept out of the timings. FA4 keeps
    compiled kernels in memory only unless ``FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=1`` (then also
    on disk, ``FLASH_ATTENTION_CUTE_DSL_CACHE_DIR``, default ``/tmp/$USER/...``).
  * dependencies: nvidia-cutlass-dsl with one CUDA flavor (this pack carries libs-cu13 alone: the
    DSL loads the newest ``_cutlass_ir.cu{N}`` the driver supports, and the runtime library from
    ``nvidia_cutlass_dsl/cu{N}/lib``; ``CUTE_DSL_LIBS`` overrides that path), quack-kernels,
    apache-tvm-ffi (the kernels are launched through it) and torch-c-dlpack-ext (not used with
    torch >= 2.10). ``nvidia_cutlass_dsl_packages.pth`` puts ``cutlass`` on the path, and a .pth
    is read only in a site directory, so ``--site DIR`` adds DIR with ``site.addsitedir``.

Configurations: ``--from-results DIR`` (every prefill configuration of our own results files under
DIR: what the device hook uses, on the call's results), ``--quick`` (D=128, seq 8192, causal and
not), else the SDPA peers' prefill grid (FA3 setting, D 128/64, seq 512..16384, causal 0/1).
A combination FA4 does not serve is a ``skipped: FA4 ...`` record with the reason (fp8 off SM100,
an unsupported head dim, FA4 refusing the call, or its compile failing).

Timing as sdpa_peers (``sdpa_peers.time_peer``), as our harness times ours: after the compile call
and a warm-up, each repetition flushes the L2 (a read of twice its size) and times the call with
CUDA events, enqueued while the device spins after the flush (a longer spin than the other peers'
hides FA4's Python host side); the whole call, alternating with it, goes to the context
(``call_time_us``), and the profiler's sum of kernel durations, where it can attribute them, to
``profiler_kernel_us``. Accuracy: against a float64
reference computed by torch on a sample of batch items, heads and query rows, gated as ours.
``--budget-s``: no configuration starts after that many seconds (those left are skip records),
and the results file is rewritten after each configuration (``complete=false`` until the end).

torch and FA4 are imported lazily: the pure parts (configurations, names, records, reasons) are
tested without them (analysis/tests/test_fa4_peers.py).

On the GPU machine (scripts/device_fa4_stage.sh unpacks the packed FA4 into /tmp/fa4_site):

    python3 analysis/peers/fa4_peers.py --site /tmp/fa4_site --results-root results \\
        --from-results results/h200
"""
from __future__ import annotations

import argparse
import math
import os
import random
import site
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sdpa_peers as sp  # noqa: E402  (pure parts; torch only inside functions)
from flashinfer_peers import _name_fields, discover_results  # noqa: E402  (results-file reading, pure)

FAMILY = "prefill"
EXPERIMENT = "peers_prefill"
VARIANT = "fa4"
BASELINE = VARIANT  # one variant: its own baseline (the SDPA peers keep sdpa_flash)
FA3_TOTAL_TOKENS, FA3_HIDDEN = sp.PREFILL_TOTAL_TOKENS, sp.PREFILL_HIDDEN  # kernels/prefill/prefill_shapes.hpp
DTYPES = ("bf16", "f16", "fp8_e4m3")  # what our prefill names spell
ELEM_BYTES = {"bf16": 2, "f16": 2, "fp8_e4m3": 1}
# What FlashAttentionForwardSm90 serves (interface.py _validate_head_dims and the fp8 assert).
SM90_DTYPES = ("bf16", "f16")
SM90_HEAD_DIM_MIN, SM90_HEAD_DIM_MAX, HEAD_DIM_STEP = 8, 256, 8
MEMORY_LIMIT_BYTES = 40e9
QUEUE_LEAD_US = 3000.0  # FA4's host side is Python: a longer spin hides it (sdpa_peers.time_queued)
REF_BATCH_ITEMS, REF_HEADS, REF_ROWS = 2, 4, 256


class SpecError(ValueError):
    """A configuration that forms no prefill problem."""


# ---- configurations -------------------------------------------------------------------------

def fa3_batch(q_len: int) -> int:
    return max(1, FA3_TOTAL_TOKENS // q_len)


def fa3_heads(head_dim: int) -> int:
    return FA3_HIDDEN // head_dim


@dataclass(frozen=True)
class Config:
    """One prefill problem as kernels/prefill/prefill_shapes.hpp spells it (PrefillProblem)."""
    dtype: str
    q_len: int
    kv_len: int
    head_dim: int
    causal: int
    batch: int
    q_heads: int
    kv_heads: int
    window: int = 0  # sliding window, 0: none

    @staticmethod
    def fa3(seq: int, head_dim: int, causal: int, dtype: str = "bf16") -> "Config":
        """The FA3 setting: 16k tokens, hidden 2048, MHA."""
        h = fa3_heads(head_dim)
        return Config(dtype, seq, seq, head_dim, int(bool(causal)), fa3_batch(seq), h, h)

    def check(self) -> None:
        if self.dtype not in DTYPES:
            raise SpecError(f"dtype {self.dtype!r}: our prefill names spell {', '.join(DTYPES)}")
        for what, v in (("q_len", self.q_len), ("kv_len", self.kv_len), ("head_dim", self.head_dim),
                        ("batch", self.batch), ("q_heads", self.q_heads), ("kv_heads", self.kv_heads)):
            if v < 1:
                raise SpecError(f"{what} {v} is below 1")
        if self.causal not in (0, 1):
            raise SpecError(f"causal {self.causal} is not 0 or 1")
        if self.window < 0:
            raise SpecError(f"window {self.window} is below 0")
        if self.q_heads % self.kv_heads:
            raise SpecError(f"q_heads {self.q_heads} is not a multiple of kv_heads {self.kv_heads}")


def default_configs() -> list[Config]:
    """The SDPA peers' prefill grid (FA3 setting), so FA4 rows sit beside theirs."""
    return [Config.fa3(s["seq"], s["head_dim"], s["causal"]) for s in sp.prefill_shapes()]


def quick_configs() -> list[Config]:
    return [Config.fa3(8192, 128, 0), Config.fa3(8192, 128, 1)]


def config_from_name(name: str) -> Config | None:
    """The prefill configuration a benchmark name spells (prefill_shape_name: seq or q_len/kv_len,
    head_dim, causal, then window / batch / q_heads / kv_heads where off the FA3 defaults), or
    None for a name that is not a prefill one."""
    dtype, f = _name_fields(name)
    if dtype is None or "head_dim" not in f or "causal" not in f:
        return None
    if "seq" in f:
        q_len = kv_len = int(f["seq"])
    elif "q_len" in f and "kv_len" in f:
        q_len, kv_len = int(f["q_len"]), int(f["kv_len"])
    else:
        return None
    head_dim = int(f["head_dim"])
    q_heads = int(f.get("q_heads", fa3_heads(head_dim)))
    return Config(dtype, q_len, kv_len, head_dim, int(f["causal"]), int(f.get("batch", fa3_batch(q_len))),
                  q_heads, int(f.get("kv_heads", q_heads)), int(f.get("window", 0)))


def discover_configs(root: Path | str, log=print) -> list[Config]:
    """Every prefill configuration of our own (peer=0) results under ``root``, in first-seen
    order (files in path order); a name that forms no configuration is reported and left out."""
    def parse(name: str) -> Config:
        cfg = config_from_name(name)
        if cfg is None:
            raise SpecError("no seq (or q_len/kv_len), head_dim and causal in the name")
        cfg.check()
        return cfg
    return discover_results(root, FAMILY, parse, log)


def order(configs: list[Config]) -> list[Config]:
    """Runnable dtypes first, then by compiled kernel (head dim 128 first, causal, window, GQA
    ratio), the longest sequence first within one: a run stopped by its budget then holds the
    headline shapes, and each kernel is compiled once, at its first configuration."""
    def key(c: Config):
        return (c.dtype not in SM90_DTYPES, DTYPES.index(c.dtype), c.head_dim != 128, c.head_dim, c.causal,
                c.window, c.q_heads // c.kv_heads, -c.q_len, -c.kv_len, c.batch)
    return sorted(dict.fromkeys(configs), key=key)


# ---- work, names, records -------------------------------------------------------------------

def visible_range(cfg: Config, q_pos: int) -> tuple[int, int]:
    """PrefillProblem::visible_keys(): bottom-right alignment, [begin, end) of the keys query
    ``q_pos`` sees."""
    diag = q_pos + (cfg.kv_len - cfg.q_len)
    begin, end = 0, cfg.kv_len
    if cfg.causal:
        end = min(cfg.kv_len, diag + 1)
    if cfg.window > 0:
        begin = max(0, diag - cfg.window + 1)
    return begin, max(begin, end)


def visible_pairs(cfg: Config) -> int:
    if not cfg.causal and cfg.window == 0:
        return cfg.q_len * cfg.kv_len
    if cfg.causal and cfg.window == 0 and cfg.q_len == cfg.kv_len:
        return cfg.q_len * (cfg.q_len + 1) // 2
    return sum(e - b for b, e in (visible_range(cfg, i) for i in range(cfg.q_len)))


def work(cfg: Config) -> tuple[dict, float, float]:
    """(axis counters, flops, bytes) as common/problem.cpp declares a prefill problem's work and
    kernels/prefill/prefill_case.hpp names its counters."""
    flops = 4.0 * float(visible_pairs(cfg)) * cfg.head_dim * cfg.q_heads * cfg.batch
    q_elems = float(cfg.batch) * cfg.q_heads * cfg.q_len * cfg.head_dim
    kv_elems = float(cfg.batch) * cfg.kv_heads * cfg.kv_len * cfg.head_dim
    out_bytes = 2  # fp8 inputs write O in bf16
    nbytes = (q_elems + 2 * kv_elems) * ELEM_BYTES[cfg.dtype] + q_elems * out_bytes
    axes = {"batch": cfg.batch, "q_heads": cfg.q_heads, "kv_heads": cfg.kv_heads, "seq_len": cfg.q_len,
            "kv_len": cfg.kv_len, "head_dim": cfg.head_dim, "causal": cfg.causal, "window": cfg.window}
    return axes, flops, nbytes


def shape_name(cfg: Config) -> str:
    """kernels/prefill/prefill_shapes.hpp prefill_shape_name()."""
    name = cfg.dtype + (f"/seq:{cfg.q_len}" if cfg.q_len == cfg.kv_len else f"/q_len:{cfg.q_len}/kv_len:{cfg.kv_len}")
    name += f"/head_dim:{cfg.head_dim}/causal:{cfg.causal}"
    if cfg.window:
        name += f"/window:{cfg.window}"
    if cfg.batch != fa3_batch(cfg.q_len):
        name += f"/batch:{cfg.batch}"
    if cfg.q_heads != fa3_heads(cfg.head_dim):
        name += f"/q_heads:{cfg.q_heads}"
    if cfg.kv_heads != cfg.q_heads:
        name += f"/kv_heads:{cfg.kv_heads}"
    return name


def bench_name(cfg: Config) -> str:
    return f"{EXPERIMENT}/{VARIANT}/{shape_name(cfg)}"


def label(cfg: Config) -> str:
    return f"family={FAMILY};experiment={EXPERIMENT};variant={VARIANT};baseline={BASELINE};dtype={cfg.dtype};peer=1"


def fa4_window(cfg: Config) -> tuple[int | None, int | None]:
    """FA4's window_size=(left, right) for our window and causal flag: query i sees keys
    [diag - left, diag + right] (None: unbounded on that side), ours [diag - window + 1, diag]
    with causal, [diag - window + 1, kv_len) without."""
    if cfg.window == 0:
        return None, None
    return cfg.window - 1, (0 if cfg.causal else None)


def compile_key(cfg: Config) -> str:
    """What FA4 compiles one kernel for among our shapes (its compile key holds no lengths)."""
    key = f"{cfg.dtype}/D{cfg.head_dim}/causal:{cfg.causal}"
    if cfg.window:
        key += "/window"
    if cfg.q_heads != cfg.kv_heads:
        key += f"/gqa:{cfg.q_heads // cfg.kv_heads}"
    return key


def known_refusal(cfg: Config, arch_major: int = 9) -> str | None:
    """Why FA4 would refuse the configuration on this architecture, without calling it (the checks
    of flash_attn/cute/interface.py), or None."""
    if arch_major != 9:
        return None  # only the SM90 rules are written down here; other chips ask FA4
    if cfg.dtype not in SM90_DTYPES:
        return f"FA4's SM90 forward takes {' and '.join(SM90_DTYPES)} only (fp8 is SM100-only in FA4)"
    if not (SM90_HEAD_DIM_MIN <= cfg.head_dim <= SM90_HEAD_DIM_MAX) or cfg.head_dim % HEAD_DIM_STEP:
        return (f"FA4's SM90 forward takes head dims {SM90_HEAD_DIM_MIN}..{SM90_HEAD_DIM_MAX} in steps of "
                f"{HEAD_DIM_STEP}, not {cfg.head_dim}")
    return None


def failure_record(cfg: Config, message: str, *, skipped: bool) -> dict:
    axes, flops, nbytes = work(cfg)
    msg = (sp.SKIPPED_PREFIX + message) if skipped else message
    return sp.error_record(bench_name(cfg), label(cfg), msg, axes, flops, nbytes)


def first_call_failure(cfg: Config, exc: BaseException) -> dict:
    """The record of a first call that raised: FA4 refusing the arguments (its asserts, a
    NotImplementedError, a ValueError) or its JIT failing to compile the kernel are skips with
    the reason; a CUDA error at run time is a failure."""
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (AssertionError, NotImplementedError, ValueError, TypeError)):
        return failure_record(cfg, "FA4 refused: " + sp._short(text), skipped=True)
    if "cuda error" in text.lower() or "illegal" in text.lower():
        return failure_record(cfg, "FA4 failed: " + sp._short(text), skipped=False)
    return failure_record(cfg, "FA4 compile failed: " + sp._short(text), skipped=True)


def not_started_record(cfg: Config, budget_s: float) -> dict:
    return failure_record(cfg, f"not started: the {budget_s:.0f} s budget was spent", skipped=True)


def records(cfg: Config, kernel_times_us: list[float], accuracy: dict) -> list[dict]:
    axes, flops, nbytes = work(cfg)
    return sp.benchmark_records(bench_name(cfg), label(cfg), kernel_times_us, axes, flops, nbytes, accuracy)


def tensor_bytes(cfg: Config) -> float:
    return work(cfg)[2]


# ---- the package ----------------------------------------------------------------------------

def add_site(path: str | Path) -> list[str]:
    """Puts ``path`` first on sys.path as a site directory (its .pth files run: the one of
    nvidia-cutlass-dsl adds ``nvidia_cutlass_dsl/dsl_packages``, where ``cutlass`` lives).
    Returns the entries added."""
    before = list(sys.path)
    site.addsitedir(str(path))
    added = [p for p in sys.path if p not in before]
    sys.path[:] = added + [p for p in sys.path if p not in added]
    return added


def _fa4():
    import flash_attn.cute as fa4  # noqa: PLC0415  (lazy: the pure parts run without it)
    return fa4


def package_versions() -> dict:
    """Versions of FA4 and what it runs on, for the results' context."""
    from importlib import metadata  # noqa: PLC0415
    out = {}
    for dist in ("flash-attn-4", "nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-cu13", "quack-kernels",
                 "apache-tvm-ffi"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "absent"
    ir = sys.modules.get("cutlass._mlir._mlir_libs._cutlass_ir")
    out["cutlass_ir"] = Path(getattr(ir, "__file__", "") or "unknown").name
    return out


# ---- on the GPU -----------------------------------------------------------------------------

def _torch():
    import torch  # noqa: PLC0415
    return torch


def torch_dtype(dtype: str):
    torch = _torch()
    return {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]


def make_inputs(cfg: Config, seed: int):
    """Standard-normal Q [batch, q_len, q_heads, D] and K, V [batch, kv_len, kv_heads, D]."""
    torch = _torch()
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    dt = torch_dtype(cfg.dtype)
    q = torch.randn(cfg.batch, cfg.q_len, cfg.q_heads, cfg.head_dim, device="cuda", dtype=dt, generator=g)
    k = torch.randn(cfg.batch, cfg.kv_len, cfg.kv_heads, cfg.head_dim, device="cuda", dtype=dt, generator=g)
    v = torch.randn(cfg.batch, cfg.kv_len, cfg.kv_heads, cfg.head_dim, device="cuda", dtype=dt, generator=g)
    return q, k, v


def reference_compare(cfg: Config, q, k, v, out, gate=None) -> dict:
    """float64 reference on the GPU (upcast inputs) for a sample of batch items, heads and query
    rows (the first and last always among them); gated like ours (or by `gate`)."""
    torch = _torch()
    rng = random.Random(sp._seed())
    scale = 1.0 / math.sqrt(cfg.head_dim)
    group = cfg.q_heads // cfg.kv_heads
    items = sorted(rng.sample(range(cfg.batch), min(REF_BATCH_ITEMS, cfg.batch)))
    heads = sorted(rng.sample(range(cfg.q_heads), min(REF_HEADS, cfg.q_heads)))
    rows = sorted(set(rng.sample(range(cfg.q_len), min(REF_ROWS, cfg.q_len))) | {0, cfg.q_len - 1})
    ridx = torch.tensor(rows, device=q.device)
    lo = torch.tensor([visible_range(cfg, r)[0] for r in rows], device=q.device)
    hi = torch.tensor([visible_range(cfg, r)[1] for r in rows], device=q.device)
    keys = torch.arange(cfg.kv_len, device=q.device)
    hidden = (keys[None, :] < lo[:, None]) | (keys[None, :] >= hi[:, None])   # [r, kv_len]
    diffs, refs = [], []
    for bi in items:
        for h in heads:
            qq = q[bi, ridx, h].double()                                      # [r, D]
            kk, vv = k[bi, :, h // group].double(), v[bi, :, h // group].double()  # [kv_len, D]
            s = (qq @ kk.T * scale).masked_fill(hidden, float("-inf"))
            ref = torch.nan_to_num(torch.softmax(s, dim=-1)) @ vv              # a row with no key: 0
            refs.append(ref.flatten())
            diffs.append(out[bi, ridx, h].double().flatten() - refs[-1])
            del kk, vv, s
    return (gate or sp.gate)(diffs, refs)


def run_one(cfg: Config, fa4, flush, reps: int, warmup: int, notes: dict, log, arch_major: int = 9) -> list[dict]:
    """Records of one configuration: timing iterations + aggregates, or a skip / failure record."""
    torch = _torch()
    why = known_refusal(cfg, arch_major)
    if why:
        return [failure_record(cfg, why, skipped=True)]
    need = tensor_bytes(cfg)
    if need > MEMORY_LIMIT_BYTES:
        return [failure_record(cfg, f"Q/K/V/O need {need / 1e9:.1f} GB, over this script's "
                                    f"{MEMORY_LIMIT_BYTES / 1e9:.0f} GB limit", skipped=True)]
    q, k, v = make_inputs(cfg, sp._seed())
    window = fa4_window(cfg)

    def call():
        return fa4.flash_attn_func(q, k, v, causal=bool(cfg.causal), window_size=window)[0]

    key = compile_key(cfg)
    t0 = time.time()
    try:
        with torch.no_grad():
            out = call()
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001  (FA4 and the CuTe DSL raise many types)
        return [first_call_failure(cfg, e)]
    first = time.time() - t0
    if key not in notes.setdefault("first_call_s", {}):
        notes["first_call_s"][key] = round(first, 2)
        log(f"first call of {key} (FA4's JIT compile included): {first:.1f} s")
    acc = reference_compare(cfg, q, k, v, out)
    del out
    if not acc["passed"]:
        return [failure_record(cfg, "accuracy gate failed: " + acc["message"], skipped=False)]
    name = bench_name(cfg)
    try:
        with torch.no_grad():
            for _ in range(warmup):
                call()
            torch.cuda.synchronize()
            timing = sp.time_peer(call, flush, reps, lead_us=QUEUE_LEAD_US)
    except RuntimeError as e:
        return [failure_record(cfg, "timing failed: " + sp._short(e), skipped=False)]
    sp.note_timing(notes, name, timing)
    return records(cfg, timing.kernel_us, acc)


def run_all(configs: list[Config], fa4, reps: int, warmup: int, log, budget_s: float | None = None,
            checkpoint=None, arch_major: int = 9) -> tuple[list[dict], dict]:
    """Records of every configuration; past ``budget_s`` none is started (each left is a skip
    record). ``checkpoint(records, notes)`` runs after each configuration."""
    torch = _torch()
    t_start = time.monotonic()
    flush = sp.Flusher()
    out, notes = [], {"flush_bytes": flush.buf.numel() * 4}
    for i, cfg in enumerate(configs):
        if budget_s is not None and time.monotonic() - t_start > budget_s:
            out.append(not_started_record(cfg, budget_s))
            continue
        t0 = time.time()
        recs = run_one(cfg, fa4, flush, reps, warmup, notes, log, arch_major)
        out.extend(recs)
        log(f"[{i + 1}/{len(configs)}] {bench_name(cfg)}: {sp.summary_line(recs, notes)} ({time.time() - t0:.1f} s)")
        torch.cuda.empty_cache()
        if checkpoint is not None:
            checkpoint(out, notes)
    return out, notes


def context_notes(notes: dict) -> dict:
    return {"kernel_attribution": "; ".join(sorted(notes.get("kernel_attribution", set()))) or "none",
            "flush_bytes": str(notes.get("flush_bytes", "")), "call_time_us": notes.get("call_time_us", {}),
            "kernels_per_call": notes.get("kernels_per_call", {}), "first_call_s": notes.get("first_call_s", {}),
            "profiler_kernel_us": notes.get("profiler_kernel_us", {})}


def select_configs(args, log) -> list[Config]:
    configs: list[Config] = []
    for d in args.from_results:
        found = discover_configs(d, log)
        log(f"from-results {d}: {len(found)} prefill configurations")
        configs += found
    if args.quick:
        configs += quick_configs()
    if not configs and not args.from_results:
        configs = default_configs()
    for c in configs:
        c.check()
    return order(configs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results-root", default="results")
    ap.add_argument("--from-results", action="append", default=[], metavar="DIR",
                    help="run every prefill configuration of our results files under DIR")
    ap.add_argument("--quick", action="store_true", help="D=128, seq 8192, causal and not")
    ap.add_argument("--site", default=os.environ.get("FA4_SITE"), metavar="DIR",
                    help="a folder holding the unpacked FA4 (scripts/pack_fa4.sh), added as a site directory")
    ap.add_argument("--budget-s", type=float, help="start no configuration after this many seconds")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args(argv)
    if args.reps < 2:
        ap.error("--reps must be >= 2")
    t_start = time.time()

    def log(msg):
        print(f"[{time.time() - t_start:7.1f} s] {msg}", flush=True)

    try:
        configs = select_configs(args, log)
    except ValueError as e:
        print(f"fa4_peers: {e}", file=sys.stderr)
        return 2
    if not configs:
        print("fa4_peers: no prefill configuration found; nothing to run", file=sys.stderr)
        return 2
    if args.site:
        add_site(args.site)
    try:
        t0 = time.time()
        fa4 = _fa4()
    except Exception as e:  # noqa: BLE001  (ImportError, or the DSL failing to load its library)
        print(f"fa4_peers: skipped: FlashAttention-4 is not importable ({type(e).__name__}: {sp._short(e)}); "
              "nothing to run", file=sys.stderr)
        return 3
    torch = _torch()
    if not torch.cuda.is_available():
        print("fa4_peers: no CUDA device; nothing to run", file=sys.stderr)
        return 3
    versions = package_versions()
    log(f"flash_attn.cute imported in {time.time() - t0:.1f} s ({', '.join(f'{k} {v}' for k, v in versions.items())}); "
        f"{len(configs)} configurations")
    commit, dirty = sp.git_provenance(Path(__file__).resolve().parent)
    ctx = sp.device_context()
    arch_major = torch.cuda.get_device_capability()[0]
    ctx.update(schedlab_commit=commit, schedlab_dirty=dirty, backend="cuda (FlashAttention-4, CuTe DSL)",
               fa4_versions=versions,
               fa4_cache=("on disk and in memory" if os.environ.get("FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED") == "1"
                          else "in memory (first call of each kernel compiles)"))
    bw = sp.measure_copy_bandwidth()
    ctx["copy_bandwidth_GBps"] = f"{bw / 1e9:.6f}"
    log(f"{ctx['device']} ({ctx['arch']}), torch {ctx['torch_version']}; copy {bw / 1e12:.2f} TB/s; "
        f"commit {commit[:10]} dirty={dirty}; run {ctx['run_id']}")
    ctx.update(experiment=EXPERIMENT, reps=str(args.reps), warmup=str(args.warmup),
               layout=("flash_attn.cute.flash_attn_func(q, k, v, causal, window_size), Q [batch, q_len, q_heads, D], "
                       "K/V [batch, kv_len, kv_heads, D], contiguous; the first call of each kernel (its JIT "
                       "compile) is timed apart (first_call_s) and followed by the warm-up"),
               accuracy=(f"float64 torch reference on the GPU from the upcast inputs, sampled {REF_BATCH_ITEMS} batch "
                         f"items x {REF_HEADS} heads x {REF_ROWS}+ query rows; gate rel_l2 <= {sp.REL_L2_MAX:g}, "
                         f"mismatch (atol {sp.ATOL:g} + rtol {sp.RTOL:g}) <= {sp.MAX_MISMATCH_PCT:g}%"))
    if args.quick:
        ctx["quick"] = "true"
    path = sp.results_path(args.results_root, sp.device_slug(ctx["device"]), FAMILY, sp.utc_stamp(), commit,
                           dirty == "true")

    def checkpoint(recs, notes, complete=False):
        # complete=false: a file left by a run stopped from outside (what it holds is finished).
        sp.write_atomic(path, sp.results_document(dict(ctx, **context_notes(notes), complete=str(complete).lower()),
                                                  recs))

    recs, notes = run_all(configs, fa4, args.reps, args.warmup, log, args.budget_s, checkpoint, arch_major)
    checkpoint(recs, notes, complete=True)
    log(f"wrote {path}")
    print(sp.table(recs, notes), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
