#!/usr/bin/env python3
"""cuDNN's attention forward through NVIDIA's Python frontend as a peer of our prefill kernels:
fp8 e4m3 (variant ``cudnn_fp8``) and 16-bit ragged batches (variant ``cudnn``), measured in the
same run and written as a results file in our schema (Google Benchmark JSON, ``peer=1``,
experiment ``peers_prefill``).

cuDNN's graph API through NVIDIA's Python frontend (``import cudnn``; the library is PyTorch's):
one ``sdpa_fp8`` node (e4m3 inputs) or ``sdpa`` node (16-bit inputs) per configuration, built
once outside the timed region. Q, K and V are in our storage layout ([batch, len, heads, D]);
cuDNN on sm_90 writes O in e4m3 from e4m3 inputs (16-bit O from fp8 inputs is Blackwell-only
there). Its best fp8 path as NVIDIA tunes it: unit Q/K/V descales, S scaled by 256 into e4m3
(``scale_s``; a power of two under 448, e4m3's largest) and back (``descale_s``), unit O scale
(|O| <= max |V|). Causal is top-left aligned in cuDNN's fp8 path on sm_90 (bottom-right is
Blackwell-only), which is ours only where q_len == kv_len: other causal configurations, sliding
windows and fp8 head dims past 128 are ``skipped: cuDNN ...`` records, as is anything cuDNN
refuses. Accuracy: the float64 reference of FlashAttention-4's peer script from the e4m3 values,
under the fp8 compute gate of our harness (its P and O are e4m3); 16-bit: that reference under
the bf16 gate, as FlashAttention-4's rows.

A ragged batch (``lengths`` in our names) is cuDNN's THD layout, as the frontend 1.23.0 builds
and tests it (``test/python/test_mhas.py``, ``test_sdpa_thd.py``, ``sdpa/fp8.py``; its rules in
``include/cudnn_frontend/node/sdpa_support_surface.h``): Q, K, V and O packed [total, heads, D],
each given a ragged offset tensor (``Tensor.set_ragged_offset``: [batch + 1, 1, 1, 1], each
sequence's first element, the prefix sums of the lengths times heads x D; int64 from cuDNN 9.6,
int32 before), logical dims (batch, heads, longest, D) with strides (longest x heads x D, D,
heads x D, 1), and the padding mask (``use_padding_mask=True`` with ``seq_len_q`` and
``seq_len_kv``, int32 [batch, 1, 1, 1]; the frontend refuses ragged offsets without it: "Ragged
offsets are only supported with padding mask."). Each sequence has as many keys as queries, so
the top-left causal mask applied per sequence is ours. 16-bit THD runs on Hopper and newer (below
sm_90 only from cuDNN 9.18.1), through whichever implementation the frontend picks (``AUTO``: the
unified engine where its version takes every attribute asked for, else the composite graph);
the frontend's tests run it with causal and windows (``test_mhas_v2.py``
test_sdpa_random_fwd_ragged_L0). fp8 THD is refused by the frontend on sm_120 alone ("sdpa fp8
with THD not supported for sm120 yet"); its tests run fp8 THD forwards from cuDNN 9.14 on Hopper
and newer, unmasked (test_sdpa_fp8_fwd_ragged_L0), so a causal fp8 ragged batch is cuDNN's to
accept or refuse (a refusal is a skip record). Those tests allocate each packed buffer rounded
up to 64 tokens (``sdpa/fp16.py``, ``sdpa/fp8.py``): this script keeps RAGGED_SLACK_TOKENS zeroed
rows past the last token of every packed buffer.

Configurations and names are FlashAttention-4's peer script's (``fa4_peers``): ``--from-results``
takes the fp8 prefill configurations and the 16-bit ragged batches of our results files (16-bit
uniform batches are the SDPA peers' ``sdpa_cudnn``); ``--lengths SPEC`` adds a ragged batch
(bf16 and fp8, D=128, causal and not); the FA3 setting at seq 8192, D=128 and 64, causal and
not, in fp8 always runs. Timing as every peer's: kernel time as our harness times ours.

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

VARIANT = "cudnn_fp8"  # fp8 e4m3 inputs: sdpa_fp8
VARIANT_16BIT = "cudnn"  # 16-bit inputs: sdpa (ragged batches; uniform ones are the SDPA peers')
DTYPE = "fp8_e4m3"
DTYPES_16BIT = ("bf16", "f16")
S_SCALE = 256.0  # P in e4m3 at this scale (cuDNN's samples take a power of two under 448 / amax(P))
MAX_HEAD_DIM = 128
HEAD_DIM_STEP_16BIT = 8  # sdpa_support_surface.h: "hidden_dim should be multiple of 8"
# Zeroed rows past the last token of each packed buffer: the frontend's THD tests round their
# buffers up to 64 tokens; this keeps a last tile's full-width access inside the allocation.
RAGGED_SLACK_TOKENS = 128
RAGGED_OFFSET_INT64_FROM = 90600  # cuDNN 9.6.0: int64 ragged offsets (test_mhas.py), int32 before


def variant(cfg: fa.Config) -> str:
    return VARIANT if cfg.dtype == DTYPE else VARIANT_16BIT


def bench_name(cfg: fa.Config) -> str:
    return f"{fa.EXPERIMENT}/{variant(cfg)}/{fa.shape_name(cfg)}"


def label(cfg: fa.Config) -> str:
    v = variant(cfg)
    return f"family={fa.FAMILY};experiment={fa.EXPERIMENT};variant={v};baseline={v};dtype={cfg.dtype};peer=1"


def wanted(cfg: fa.Config) -> bool:
    """The configurations of our results this peer runs: fp8 ones, and 16-bit ragged batches."""
    return cfg.dtype == DTYPE or (cfg.is_ragged and cfg.dtype in DTYPES_16BIT)


def known_refusal(cfg: fa.Config) -> str | None:
    """Why this script does not ask cuDNN (a problem other than ours under its sm_90 rules), or None."""
    if not wanted(cfg):
        return (f"this peer runs fp8 e4m3, and 16-bit ragged batches (16-bit cuDNN on uniform batches is the SDPA "
                f"peers' sdpa_cudnn), not uniform {cfg.dtype}")
    if cfg.causal and cfg.q_len != cfg.kv_len:
        return "cuDNN's fp8 causal mask on sm_90 is top-left aligned; ours is bottom-right (q_len != kv_len)"
    if cfg.window:
        return "no sliding window in this peer"
    if cfg.dtype == DTYPE and (cfg.head_dim > MAX_HEAD_DIM or cfg.head_dim % 16):
        return f"cuDNN's fp8 forward takes head dims that are multiples of 16 up to {MAX_HEAD_DIM} here"
    if cfg.dtype != DTYPE and cfg.head_dim % HEAD_DIM_STEP_16BIT:
        return f"cuDNN's 16-bit forward takes head dims that are multiples of {HEAD_DIM_STEP_16BIT}"
    return None


def thd_layout(cfg: fa.Config, heads: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """cuDNN's logical (B, H, S, D) dims and strides of a packed [total, heads, D] tensor (S the
    longest sequence; the ragged offsets place each sequence), as the frontend's THD tests give them."""
    s, d = cfg.q_len, cfg.head_dim
    return (cfg.batch, heads, s, d), (s * heads * d, d, heads * d, 1)


def ragged_offsets(cfg: fa.Config, heads: int) -> list[int]:
    """Each sequence's first element in a packed [total, heads, D] tensor, the total last: the
    ragged offset tensor's [batch + 1] values (elements, not bytes)."""
    return [t * heads * cfg.head_dim for t in fa.cu_seqlens(cfg)]


def ragged_offset_type(backend_version: int) -> str:
    """The cudnn.data_type name of the ragged offsets for a cuDNN version (cudnn.backend_version())."""
    return "INT64" if backend_version >= RAGGED_OFFSET_INT64_FROM else "INT32"


def failure_record(cfg: fa.Config, message: str, *, skipped: bool) -> dict:
    axes, flops, nbytes = fa.work(cfg)
    msg = (sp.SKIPPED_PREFIX + message) if skipped else message
    return sp.error_record(bench_name(cfg), label(cfg), msg, axes, flops, nbytes)


def records(cfg: fa.Config, kernel_times_us: list[float], accuracy: dict) -> list[dict]:
    axes, flops, nbytes = fa.work(cfg)
    return sp.benchmark_records(bench_name(cfg), label(cfg), kernel_times_us, axes, flops, nbytes, accuracy)


def layout_context(configs: list[fa.Config]) -> str:
    """The results' ``layout`` context (the THD part only where a ragged batch ran)."""
    text = (f"cuDNN sdpa_fp8: Q, K, V and O e4m3 in [batch, len, heads, D], unit Q/K/V/O scales, S "
            f"scaled by {S_SCALE:g} into e4m3; causal top-left (q_len == kv_len only); the graph built "
            "once per configuration, outside the timed region")
    if any(c.is_ragged for c in configs):
        text += ("; a ragged batch (THD): Q, K, V and O packed [total, heads, D] with ragged offsets (each "
                 "sequence's first element) and the padding mask (seq_len_q = seq_len_kv = the lengths), causal "
                 f"top-left per sequence; {RAGGED_SLACK_TOKENS} zeroed rows past each packed buffer's last token; "
                 f"16-bit inputs through sdpa (variant {VARIANT_16BIT}), O in the input dtype")
    return text


def accuracy_context(configs: list[fa.Config]) -> str:
    """The results' ``accuracy`` context (the 16-bit gate only where a 16-bit batch ran)."""
    text = (f"float64 torch reference from the e4m3 values (FlashAttention-4's peer sample); fp8 "
            f"compute gate rel_l2 <= {sp.FP8_COMPUTE_REL_L2_MAX:g}, each row <= {sp.FP8_COMPUTE_ROW_REL_L2_MAX:g}, "
            f"every element within {sp.FP8_COMPUTE_ELEM_REL:g} x its row's RMS")
    if any(c.dtype != DTYPE for c in configs):
        text += (f"; 16-bit ({VARIANT_16BIT}): the same reference from the inputs, gate rel_l2 <= "
                 f"{sp.REL_L2_MAX:g}, mismatch (atol {sp.ATOL:g} + rtol {sp.RTOL:g}) <= {sp.MAX_MISMATCH_PCT:g}%")
    if any(c.is_ragged for c in configs):
        text += (f"; a ragged batch: {fa.REF_SEQUENCES} sequences (the first and last among them), each row "
                 "against its own sequence's keys")
    return text


# ---- on the GPU -----------------------------------------------------------------------------

class PrefillGraph:
    """One cuDNN forward graph of a configuration, with its inputs and buffers: ``sdpa_fp8`` for
    e4m3 inputs, ``sdpa`` for 16-bit ones; a ragged batch packed (THD), with ragged offsets and
    the padding mask. ``q``, ``k``, ``v`` and ``out`` are the tensors the reference reads: [batch,
    len, heads, D], or a ragged batch's [total, heads, D] (views of the padded buffers)."""

    def __init__(self, cfg: fa.Config, seed: int, handle):
        torch = fa._torch()
        import cudnn  # noqa: PLC0415
        d = cfg.head_dim
        fp8 = cfg.dtype == DTYPE
        io = cudnn.data_type.FP8_E4M3 if fp8 else {"bf16": cudnn.data_type.BFLOAT16,
                                                    "f16": cudnn.data_type.HALF}[cfg.dtype]
        f32 = cudnn.data_type.FLOAT
        self.q, self.k, self.v, self.out = self._buffers(cfg, seed)
        g = cudnn.pygraph(io_data_type=io, intermediate_data_type=f32, compute_data_type=f32, handle=handle)

        def bhsd(x):  # cuDNN's logical (B, H, S, D) dims and strides over our [B, S, H, D] storage
            return (x.shape[0], x.shape[2], x.shape[1], x.shape[3]), (x.stride(0), x.stride(2), x.stride(1), x.stride(3))

        def layout(x):
            return thd_layout(cfg, x.shape[1]) if cfg.is_ragged else bhsd(x)

        def tensor(name, x):
            dim, stride = layout(x)
            return g.tensor(name=name, dim=dim, stride=stride, data_type=io)
        t = {"q": tensor("q", self.q), "k": tensor("k", self.k), "v": tensor("v", self.v)}
        self.pack_extra, mask = {}, {}
        if cfg.is_ragged:
            mask = self._ragged(cfg, g, t, torch, cudnn)
        self.scalars = {}
        if fp8:
            values = {"descale_q": 1.0, "descale_k": 1.0, "descale_v": 1.0, "descale_s": 1.0 / S_SCALE,
                      "scale_s": S_SCALE, "scale_o": 1.0}
            for n, x in values.items():
                t[n] = g.tensor(name=n, dim=(1, 1, 1, 1), stride=(1, 1, 1, 1), data_type=f32)
                self.scalars[n] = torch.full((1, 1, 1, 1), x, dtype=torch.float32, device="cuda")
            o, _, amax_s, amax_o = g.sdpa_fp8(q=t["q"], k=t["k"], v=t["v"], **{n: t[n] for n in values},
                                               is_inference=True, attn_scale=1.0 / math.sqrt(d),
                                               use_causal_mask=bool(cfg.causal), name="fp8_forward", **mask)
        else:
            o, _ = g.sdpa(q=t["q"], k=t["k"], v=t["v"], is_inference=True, attn_scale=1.0 / math.sqrt(d),
                          use_causal_mask=bool(cfg.causal), name="forward", **mask)
        o.set_output(True).set_dim(layout(self.out)[0]).set_stride(layout(self.out)[1]).set_data_type(io)
        if cfg.is_ragged:
            o.set_ragged_offset(t["o_offset"])
        if fp8:
            for n, a in (("amax_s", amax_s), ("amax_o", amax_o)):
                a.set_output(True).set_dim((1, 1, 1, 1)).set_stride((1, 1, 1, 1)).set_data_type(f32)
                t[n] = a
                self.scalars[n] = torch.zeros(1, 1, 1, 1, dtype=torch.float32, device="cuda")
        t["o"] = o
        g.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        self.graph, self.handle = g, handle
        self.workspace = torch.empty(max(1, g.get_workspace_size()), dtype=torch.uint8, device="cuda")
        self.pack = {t["q"]: self.q, t["k"]: self.k, t["v"]: self.v, t["o"]: self.out,
                     **{t[n]: x for n, x in self.scalars.items()}, **{t[n]: x for n, x in self.pack_extra.items()}}

    @staticmethod
    def _buffers(cfg: fa.Config, seed: int):
        """Standard-normal Q, K, V and a NaN-poisoned O. fp8: bf16 draws rounded to e4m3 (uniform
        batches as this script always drew them); 16-bit: FlashAttention-4's peer's inputs. A
        ragged batch's are views of buffers RAGGED_SLACK_TOKENS rows longer (zeroed inputs)."""
        torch = fa._torch()
        dt = torch.float8_e4m3fn if cfg.dtype == DTYPE else fa.torch_dtype(cfg.dtype)
        if cfg.dtype == DTYPE:
            gen = torch.Generator(device="cuda")
            gen.manual_seed(seed)
            rows_heads = ((cfg.q_len, cfg.q_heads), (cfg.kv_len, cfg.kv_heads), (cfg.kv_len, cfg.kv_heads))
            shapes = ([(fa.total_tokens(cfg), h, cfg.head_dim) for _, h in rows_heads] if cfg.is_ragged
                      else [(cfg.batch, n, h, cfg.head_dim) for n, h in rows_heads])
            q, k, v = (torch.randn(*sh, device="cuda", dtype=torch.bfloat16, generator=gen).to(dt) for sh in shapes)
        else:
            q, k, v = fa.make_inputs(cfg, seed)
        out = torch.full(q.shape, float("nan"), dtype=torch.bfloat16, device="cuda").to(dt)  # poisoned
        if not cfg.is_ragged:
            return q, k, v, out

        def padded(x, fill):
            buf = torch.full((x.shape[0] + RAGGED_SLACK_TOKENS, *x.shape[1:]), fill, dtype=torch.bfloat16,
                             device="cuda").to(dt)
            buf[:x.shape[0]] = x
            return buf[:x.shape[0]]
        return padded(q, 0.0), padded(k, 0.0), padded(v, 0.0), padded(out, float("nan"))

    def _ragged(self, cfg: fa.Config, g, t: dict, torch, cudnn) -> dict:
        """The THD parts of the graph: ragged offsets on Q, K, V (and O, set once it exists) and the
        padding mask's sequence lengths. Returns the mask's sdpa arguments."""
        b = cfg.batch
        off_type = ragged_offset_type(cudnn.backend_version())
        off_dtype = torch.int64 if off_type == "INT64" else torch.int32
        q_off = torch.tensor(ragged_offsets(cfg, cfg.q_heads), dtype=off_dtype, device="cuda").view(-1, 1, 1, 1)
        kv_off = torch.tensor(ragged_offsets(cfg, cfg.kv_heads), dtype=off_dtype, device="cuda").view(-1, 1, 1, 1)
        lens = torch.tensor(cfg.lengths, dtype=torch.int32, device="cuda").view(-1, 1, 1, 1)
        for n, x in (("q", q_off), ("k", kv_off), ("v", kv_off), ("o", q_off)):
            t[n + "_offset"] = g.tensor(name=n + "_ragged_offset", dim=(b + 1, 1, 1, 1), stride=(1, 1, 1, 1),
                                        data_type=getattr(cudnn.data_type, off_type))
            self.pack_extra[n + "_offset"] = x
            if n != "o":
                t[n].set_ragged_offset(t[n + "_offset"])
        for n in ("seq_len_q", "seq_len_kv"):
            t[n] = g.tensor(name=n, dim=(b, 1, 1, 1), stride=(1, 1, 1, 1), data_type=cudnn.data_type.INT32)
            self.pack_extra[n] = lens
        return {"use_padding_mask": True, "seq_len_q": t["seq_len_q"], "seq_len_kv": t["seq_len_kv"]}

    def __call__(self):
        self.graph.execute(self.pack, self.workspace, handle=self.handle)


def accuracy(cfg: fa.Config, call: PrefillGraph) -> dict:
    """FlashAttention-4's peer's float64 reference: from the e4m3 values under the fp8 compute
    gate, or from the 16-bit inputs under the bf16 gate."""
    torch = fa._torch()
    if cfg.dtype != DTYPE:
        return fa.reference_compare(cfg, call.q, call.k, call.v, call.out)
    return fa.reference_compare(cfg, call.q.to(torch.bfloat16), call.k.to(torch.bfloat16), call.v.to(torch.bfloat16),
                                call.out.to(torch.float32),
                                gate=functools.partial(sp.fp8_compute_gate, row_len=cfg.head_dim))


def run_one(cfg: fa.Config, flush, reps: int, warmup: int, notes: dict, log) -> list[dict]:
    torch = fa._torch()
    import cudnn  # noqa: PLC0415
    why = known_refusal(cfg) or (fa.memory_refusal(cfg) if cfg.is_ragged else None)
    if why:
        return [failure_record(cfg, why, skipped=True)]
    t0 = time.time()
    try:
        call = PrefillGraph(cfg, sp._seed(), notes.setdefault("_handle", cudnn.create_handle()))
        call()
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001  (the frontend raises several types for a refusal)
        text = f"{type(e).__name__}: {e}"
        refused = "notsupported" in text.lower().replace("_", "").replace(" ", "") or "no valid" in text.lower()
        return [failure_record(cfg, ("cuDNN refused: " if refused else "") + sp._short(text), skipped=refused)]
    name = bench_name(cfg)
    notes.setdefault("build_s", {})[name] = round(time.time() - t0, 2)
    acc = accuracy(cfg, call)
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


def profile_once(cfg: fa.Config, warmup: int) -> int:
    """``--profile NAME``: cuDNN's graph on the configuration a benchmark name spells, built and
    warmed up, then one call between cudaProfilerStart and Stop, which a profiler started with
    ``--profile-from-start off`` sees alone (scripts/device_ncu_peer.sh). Writes nothing."""
    import cudnn  # noqa: PLC0415
    why = known_refusal(cfg) or fa.memory_refusal(cfg)
    if why:
        print(f"cudnn_prefill_peers: --profile {bench_name(cfg)}: {why}", file=sys.stderr)
        return 2
    sp.profile_one_call(PrefillGraph(cfg, sp._seed(), cudnn.create_handle()), warmup)
    print(f"cudnn_prefill_peers: profiled one call of {bench_name(cfg)}", flush=True)
    return 0


def select_configs(args, log) -> list[fa.Config]:
    configs: list[fa.Config] = []
    for d in args.from_results:
        found = [c for c in fa.discover_configs(d, log) if wanted(c)]
        n16 = sum(c.dtype != DTYPE for c in found)
        log(f"from-results {d}: {len(found) - n16} fp8 prefill configurations"
            + (f", {n16} 16-bit ragged batches" if n16 else ""))
        configs += found
    for spec in getattr(args, "lengths", None) or []:
        configs += fa.ragged_configs(spec, ("bf16", DTYPE))
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
                    help="run every fp8 prefill configuration and 16-bit ragged batch of our results files under DIR")
    ap.add_argument("--quick", action="store_true", help="the FA3 fp8 set alone (seq 8192, D 128 and 64), which always runs")
    ap.add_argument("--lengths", action="append", default=[], metavar="SPEC",
                    help="a ragged batch in our names' grammar ('1000+8192'), bf16 and fp8, D=128, causal and not")
    ap.add_argument("--budget-s", type=float, help="start no configuration after this many seconds")
    ap.add_argument("--profile", metavar="NAME",
                    help="build and warm up, then one call of the configuration a benchmark name spells between "
                         "cudaProfilerStart and Stop (for ncu --profile-from-start off); writes nothing")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    args = ap.parse_args(argv)
    if args.reps < 2:
        ap.error("--reps must be >= 2")
    t_start = time.time()

    def log(msg):
        print(f"[{time.time() - t_start:7.1f} s] {msg}", flush=True)

    profiled = None
    try:
        if args.profile:
            profiled = fa.config_from_name(args.profile)
            if profiled is None:
                raise ValueError(f"--profile {args.profile!r} is not a prefill benchmark name")
            profiled.check()
        configs = [profiled] if profiled else select_configs(args, log)
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
    if profiled is not None:
        return profile_once(profiled, args.warmup)
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
               launch_lead_us=f"{sp.launch_lead_us():g}",
               layout=layout_context(configs), accuracy=accuracy_context(configs))
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
