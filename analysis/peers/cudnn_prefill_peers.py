#!/usr/bin/env python3
"""cuDNN's fp8 e4m3 attention forward as a peer of our fp8 prefill kernels, measured in the same
run and written as a results file in our schema (Google Benchmark JSON, ``peer=1``, experiment
``peers_prefill``, variant ``cudnn_fp8``).

cuDNN's graph API through NVIDIA's Python frontend (``import cudnn``; the library is PyTorch's):
one ``sdpa_fp8`` node per configuration, built once outside the timed region. Q, K and V are e4m3
in our storage layout ([batch, len, heads, D]); cuDNN on sm_90 writes O in e4m3 as well (16-bit O
from fp8 inputs is Blackwell-only there). Its best path as NVIDIA tunes it: unit Q/K/V descales,
S scaled by 256 into e4m3 (``scale_s``; a power of two under 448, e4m3's largest) and back
(``descale_s``), unit O scale (|O| <= max |V|). Causal is top-left aligned in cuDNN's fp8 path on
sm_90 (bottom-right is Blackwell-only), which is ours only where q_len == kv_len: other causal
configurations, sliding windows and head dims past 128 are ``skipped: cuDNN ...`` records, as is
anything cuDNN refuses. Accuracy: the float64 reference of FlashAttention-4's peer script from the
e4m3 values, under the fp8 compute gate of our harness (its P and O are e4m3).

Configurations and names are FlashAttention-4's peer script's (``fa4_peers``): ``--from-results``
takes the fp8 prefill configurations of our results files; the FA3 setting at seq 8192, D=128 and
64, causal and not, always runs. Timing as every peer's: kernel time as our harness times ours.

    PYTHONPATH=/tmp/cudnn_site python3 analysis/peers/cudnn_prefill_peers.py --results-root results \\
        --from-results results/h200
"""
from __future__ import annotations

import argparse
import functools
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fa4_peers as fa  # noqa: E402  (prefill configurations, names, work, reference; torch only inside)
import sdpa_peers as sp  # noqa: E402

VARIANT = "cudnn_fp8"
DTYPE = "fp8_e4m3"
S_SCALE = 256.0  # P in e4m3 at this scale (cuDNN's samples take a power of two under 448 / amax(P))
MAX_HEAD_DIM = 128


def bench_name(cfg: fa.Config) -> str:
    return f"{fa.EXPERIMENT}/{VARIANT}/{fa.shape_name(cfg)}"


def label(cfg: fa.Config) -> str:
    return f"family={fa.FAMILY};experiment={fa.EXPERIMENT};variant={VARIANT};baseline={VARIANT};dtype={cfg.dtype};peer=1"


def known_refusal(cfg: fa.Config) -> str | None:
    """Why this script does not ask cuDNN (a problem other than ours under its sm_90 rules), or None."""
    if cfg.dtype != DTYPE:
        return f"this peer runs fp8 e4m3 only (16-bit cuDNN is the SDPA peers' sdpa_cudnn), not {cfg.dtype}"
    if cfg.causal and cfg.q_len != cfg.kv_len:
        return "cuDNN's fp8 causal mask on sm_90 is top-left aligned; ours is bottom-right (q_len != kv_len)"
    if cfg.window:
        return "no sliding window in this peer"
    if cfg.head_dim > MAX_HEAD_DIM or cfg.head_dim % 16:
        return f"cuDNN's fp8 forward takes head dims that are multiples of 16 up to {MAX_HEAD_DIM} here"
    return None


def failure_record(cfg: fa.Config, message: str, *, skipped: bool) -> dict:
    axes, flops, nbytes = fa.work(cfg)
    msg = (sp.SKIPPED_PREFIX + message) if skipped else message
    return sp.error_record(bench_name(cfg), label(cfg), msg, axes, flops, nbytes)


def records(cfg: fa.Config, kernel_times_us: list[float], accuracy: dict) -> list[dict]:
    axes, flops, nbytes = fa.work(cfg)
    return sp.benchmark_records(bench_name(cfg), label(cfg), kernel_times_us, axes, flops, nbytes, accuracy)


# ---- on the GPU -----------------------------------------------------------------------------

class Fp8Graph:
    """One cuDNN fp8 forward graph of a configuration, with its inputs and buffers."""

    def __init__(self, cfg: fa.Config, seed: int, handle):
        torch = fa._torch()
        import cudnn  # noqa: PLC0415
        b, hq, hkv, d = cfg.batch, cfg.q_heads, cfg.kv_heads, cfg.head_dim
        g8, f32 = cudnn.data_type.FP8_E4M3, cudnn.data_type.FLOAT
        gen = torch.Generator(device="cuda")
        gen.manual_seed(seed)

        def rand(n, h):
            return torch.randn(b, n, h, d, device="cuda", dtype=torch.bfloat16, generator=gen).to(torch.float8_e4m3fn)
        self.q, self.k, self.v = rand(cfg.q_len, hq), rand(cfg.kv_len, hkv), rand(cfg.kv_len, hkv)
        self.out = torch.full(self.q.shape, float("nan"), dtype=torch.bfloat16, device="cuda").to(self.q.dtype)  # poisoned
        g = cudnn.pygraph(io_data_type=g8, intermediate_data_type=f32, compute_data_type=f32, handle=handle)

        def bhsd(x):  # cuDNN's logical (B, H, S, D) dims and strides over our [B, S, H, D] storage
            return (x.shape[0], x.shape[2], x.shape[1], x.shape[3]), (x.stride(0), x.stride(2), x.stride(1), x.stride(3))

        def tensor(name, x):
            dim, stride = bhsd(x)
            return g.tensor(name=name, dim=dim, stride=stride, data_type=g8)
        t = {"q": tensor("q", self.q), "k": tensor("k", self.k), "v": tensor("v", self.v)}
        values = {"descale_q": 1.0, "descale_k": 1.0, "descale_v": 1.0, "descale_s": 1.0 / S_SCALE,
                  "scale_s": S_SCALE, "scale_o": 1.0}
        self.scalars = {}
        for n, x in values.items():
            t[n] = g.tensor(name=n, dim=(1, 1, 1, 1), stride=(1, 1, 1, 1), data_type=f32)
            self.scalars[n] = torch.full((1, 1, 1, 1), x, dtype=torch.float32, device="cuda")
        o, _, amax_s, amax_o = g.sdpa_fp8(q=t["q"], k=t["k"], v=t["v"], **{n: t[n] for n in values},
                                           is_inference=True, attn_scale=1.0 / math.sqrt(d),
                                           use_causal_mask=bool(cfg.causal), name="fp8_forward")
        o.set_output(True).set_dim(bhsd(self.out)[0]).set_stride(bhsd(self.out)[1]).set_data_type(g8)
        for n, a in (("amax_s", amax_s), ("amax_o", amax_o)):
            a.set_output(True).set_dim((1, 1, 1, 1)).set_stride((1, 1, 1, 1)).set_data_type(f32)
            t[n] = a
            self.scalars[n] = torch.zeros(1, 1, 1, 1, dtype=torch.float32, device="cuda")
        t["o"] = o
        g.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        self.graph, self.handle = g, handle
        self.workspace = torch.empty(max(1, g.get_workspace_size()), dtype=torch.uint8, device="cuda")
        self.pack = {t["q"]: self.q, t["k"]: self.k, t["v"]: self.v, t["o"]: self.out,
                     **{t[n]: x for n, x in self.scalars.items()}}

    def __call__(self):
        self.graph.execute(self.pack, self.workspace, handle=self.handle)


def run_one(cfg: fa.Config, flush, reps: int, warmup: int, notes: dict, log) -> list[dict]:
    torch = fa._torch()
    import cudnn  # noqa: PLC0415
    why = known_refusal(cfg)
    if why:
        return [failure_record(cfg, why, skipped=True)]
    t0 = time.time()
    try:
        call = Fp8Graph(cfg, sp._seed(), notes.setdefault("_handle", cudnn.create_handle()))
        call()
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001  (the frontend raises several types for a refusal)
        text = f"{type(e).__name__}: {e}"
        refused = "notsupported" in text.lower().replace("_", "").replace(" ", "") or "no valid" in text.lower()
        return [failure_record(cfg, ("cuDNN refused: " if refused else "") + sp._short(text), skipped=refused)]
    name = bench_name(cfg)
    notes.setdefault("build_s", {})[name] = round(time.time() - t0, 2)
    acc = fa.reference_compare(cfg, call.q.to(torch.bfloat16), call.k.to(torch.bfloat16), call.v.to(torch.bfloat16),
                               call.out.to(torch.float32),
                               gate=functools.partial(sp.fp8_compute_gate, row_len=cfg.head_dim))
    if not acc["passed"]:
        return [failure_record(cfg, "accuracy gate failed: " + acc["message"], skipped=False)]
    try:
        for _ in range(warmup):
            call()
        torch.cuda.synchronize()
        timing = sp.time_peer(call, flush, reps)
    except RuntimeError as e:
        return [failure_record(cfg, "timing failed: " + sp._short(e), skipped=False)]
    sp.note_timing(notes, name, timing)
    return records(cfg, timing.kernel_us, acc)


def select_configs(args, log) -> list[fa.Config]:
    configs: list[fa.Config] = []
    for d in args.from_results:
        found = [c for c in fa.discover_configs(d, log) if c.dtype == DTYPE]
        log(f"from-results {d}: {len(found)} fp8 prefill configurations")
        configs += found
    # cuDNN's fp8 headline set always: the FA3 setting at seq 8192, head dim 128 and 64, causal and
    # not (our Hopper family runs fp8 at head dim 128 only, so the 64 rows stand without ours).
    configs += [fa.Config.fa3(8192, d, causal, DTYPE) for d in (128, 64) for causal in (0, 1)]
    for c in configs:
        c.check()
    return list(dict.fromkeys(configs))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results-root", default="results")
    ap.add_argument("--from-results", action="append", default=[], metavar="DIR",
                    help="run every fp8 prefill configuration of our results files under DIR")
    ap.add_argument("--quick", action="store_true", help="the FA3 fp8 set alone (seq 8192, D 128 and 64), which always runs")
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
        print(f"cudnn_prefill_peers: {e}", file=sys.stderr)
        return 2
    try:
        torch = fa._torch()
        import cudnn  # noqa: PLC0415
    except ImportError as e:
        print(f"cudnn_prefill_peers: torch or the cuDNN frontend is not importable ({e}); nothing to run",
              file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("cudnn_prefill_peers: no CUDA device; nothing to run", file=sys.stderr)
        return 3
    versions = f"frontend {getattr(cudnn, '__version__', '?')}, cuDNN {cudnn.backend_version()}"
    log(f"{versions}; {len(configs)} configurations")
    commit, dirty = sp.git_provenance(Path(__file__).resolve().parent)
    ctx = sp.device_context()
    ctx.update(schedlab_commit=commit, schedlab_dirty=dirty, backend="cuda (cuDNN graph API)", cudnn_version=versions)
    bw = sp.measure_copy_bandwidth()
    ctx["copy_bandwidth_GBps"] = f"{bw / 1e9:.6f}"
    log(f"{ctx['device']} ({ctx['arch']}); copy {bw / 1e12:.2f} TB/s; commit {commit[:10]} dirty={dirty}; "
        f"run {ctx['run_id']}")
    ctx.update(experiment=fa.EXPERIMENT, reps=str(args.reps), warmup=str(args.warmup),
               layout=(f"cuDNN sdpa_fp8: Q, K, V and O e4m3 in [batch, len, heads, D], unit Q/K/V/O scales, S "
                       f"scaled by {S_SCALE:g} into e4m3; causal top-left (q_len == kv_len only); the graph built "
                       "once per configuration, outside the timed region"),
               accuracy=(f"float64 torch reference from the e4m3 values (FlashAttention-4's peer sample); fp8 "
                         f"compute gate rel_l2 <= {sp.FP8_COMPUTE_REL_L2_MAX:g}, each row <= {sp.FP8_COMPUTE_ROW_REL_L2_MAX:g}, "
                         f"every element within {sp.FP8_COMPUTE_ELEM_REL:g} x its row's RMS"))
    path = sp.results_path(args.results_root, sp.device_slug(ctx["device"]), fa.FAMILY, sp.utc_stamp(), commit,
                           dirty == "true")
    flush = sp.Flusher()
    recs, notes = [], {"flush_bytes": flush.buf.numel() * 4}
    t_run = time.monotonic()
    for i, cfg in enumerate(configs):
        if args.budget_s is not None and time.monotonic() - t_run > args.budget_s:
            recs.append(failure_record(cfg, f"not started: the {args.budget_s:.0f} s budget was spent", skipped=True))
            continue
        t0 = time.time()
        got = run_one(cfg, flush, args.reps, args.warmup, notes, log)
        recs.extend(got)
        log(f"[{i + 1}/{len(configs)}] {bench_name(cfg)}: {sp.summary_line(got, notes)} ({time.time() - t0:.1f} s)")
        torch.cuda.empty_cache()
        kept = {k: v for k, v in notes.items() if k != "_handle"}
        sp.write_atomic(path, sp.results_document(dict(ctx, **fa.context_notes(kept), build_s=kept.get("build_s", {}),
                                                       complete="false"), recs))
    kept = {k: v for k, v in notes.items() if k != "_handle"}
    sp.write_atomic(path, sp.results_document(dict(ctx, **fa.context_notes(kept), build_s=kept.get("build_s", {}),
                                                   complete="true"), recs))
    log(f"wrote {path}")
    print(sp.table(recs, kept), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
