#!/usr/bin/env python3
"""cuDNN's paged decode as a peer of our decode kernels, measured in the same run and written as
a results file in our schema (Google Benchmark JSON, ``peer=1``, experiment ``peers_decode``,
variant ``cudnn_paged``), beside FlashInfer's rows of the same configurations.

cuDNN's graph API through NVIDIA's Python frontend (``nvidia-cudnn-frontend``, ``import cudnn``;
the cuDNN library is PyTorch's): one ``sdpa`` node per configuration, built once, with the K and
V caches paged (containers ``[pages, kv_heads, page, D]``, one page table per sequence, the
sequence lengths as a padding mask). bf16 K/V: bf16 Q and O, float compute. fp8 e4m3 K/V:
``sdpa_fp8``, which on sm_90 takes fp8 Q and writes fp8 O (cuDNN has no 16-bit Q or O with fp8
K/V there), unit scales; it is checked against the fp8 compute gate of our harness
(common/harness/accuracy.cpp: its P and O are rounded to e4m3 as our fp8 prefill's P is). A
configuration cuDNN refuses is a ``skipped: cuDNN refused: ...`` record.

Configurations, names, inputs (the same shuffled block table), the float64 reference and the
timing are FlashInfer's peer script's (``flashinfer_peers``): kernel time as our harness times
ours, the graph built outside the timed region.

Run on the GPU machine with the frontend importable (scripts/device_full.sh installs the wheel
carried in .peers/cudnn_whl):

    PYTHONPATH=/tmp/cudnn_site python3 analysis/peers/cudnn_peers.py --results-root results \\
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
import flashinfer_peers as fp  # noqa: E402  (configurations, inputs, reference; torch only inside functions)
import sdpa_peers as sp  # noqa: E402

VARIANT = "cudnn_paged"
REFUSAL_WORDS = ("not supported", "notsupported", "no valid", "unsupported", "no execution plan")


def is_refusal(message: str) -> bool:
    low = message.lower()
    return any(w in low for w in REFUSAL_WORDS)


def failure_record(cfg: fp.Config, message: str) -> dict:
    axes, flops, nbytes = fp.work(cfg)
    msg = (sp.SKIPPED_PREFIX + "cuDNN refused: " + sp._short(message)) if is_refusal(message) else sp._short(message)
    return sp.error_record(fp.bench_name(VARIANT, cfg), fp.label(VARIANT, cfg), msg, axes, flops, nbytes)


# ---- on the GPU -----------------------------------------------------------------------------

def _cudnn():
    import torch  # noqa: F401, PLC0415  (first: cudnn then finds the libcudnn torch loaded)
    import cudnn  # noqa: PLC0415
    return cudnn


class PagedGraph:
    """One cuDNN graph of a decode configuration, its page table and its buffers."""

    def __init__(self, cfg: fp.Config, inp: fp.Inputs, handle):
        torch, cudnn = fp._torch(), _cudnn()
        self.fp8 = cfg.dtype == "fp8_e4m3"
        b, hq, hkv, d, page = cfg.batch, cfg.q_heads, cfg.kv_heads, cfg.head_dim, cfg.page
        io = cudnn.data_type.FP8_E4M3 if self.fp8 else cudnn.data_type.BFLOAT16
        f32, i32 = cudnn.data_type.FLOAT, cudnn.data_type.INT32
        max_pages = max(inp.pages_per)
        # cuDNN's containers are [pages, kv_heads, page, D]: the NHD caches, transposed once.
        self.k = inp.k.permute(0, 2, 1, 3).contiguous()
        self.v = inp.v.permute(0, 2, 1, 3).contiguous()
        table = torch.zeros(b, max_pages, dtype=torch.int32, device="cuda")
        starts = inp.indptr.tolist()
        for i, n in enumerate(inp.pages_per):
            table[i, :n] = inp.indices[starts[i]:starts[i] + n]
        self.table = table.reshape(b, 1, max_pages, 1)
        self.seq_q = torch.ones(b, 1, 1, 1, dtype=torch.int32, device="cuda")
        self.seq_kv = torch.tensor(inp.lens, dtype=torch.int32, device="cuda").reshape(b, 1, 1, 1)
        self.q = (inp.q.to(torch.float8_e4m3fn) if self.fp8 else inp.q).reshape(b, hq, 1, d)
        self.out = torch.full((b, hq, 1, d), float("nan"), dtype=torch.bfloat16, device="cuda")  # poisoned
        if self.fp8:
            self.out = self.out.to(torch.float8_e4m3fn)
        g = cudnn.pygraph(io_data_type=io, intermediate_data_type=f32, compute_data_type=f32, handle=handle)
        q_stride = (hq * d, d, hq * d, 1)
        t = {"q": g.tensor(name="q", dim=(b, hq, 1, d), stride=q_stride, data_type=io)}
        for n, pool in (("k", self.k), ("v", self.v)):
            t[n] = g.tensor(name=n, dim=tuple(pool.shape), stride=tuple(pool.stride()), data_type=io)
        for n in ("k_table", "v_table"):
            t[n] = g.tensor(name=n, dim=(b, 1, max_pages, 1), stride=(max_pages, max_pages, 1, 1), data_type=i32)
        for n in ("seq_q", "seq_kv"):
            t[n] = g.tensor(name=n, dim=(b, 1, 1, 1), stride=(1, 1, 1, 1), data_type=i32)
        paged = dict(is_inference=True, attn_scale=1.0 / math.sqrt(d), use_padding_mask=True, seq_len_q=t["seq_q"],
                     seq_len_kv=t["seq_kv"], paged_attention_k_table=t["k_table"], paged_attention_v_table=t["v_table"],
                     paged_attention_max_seq_len_kv=max_pages * page)
        self.scalars = {}
        if self.fp8:
            # Unit descales and scales: the e4m3 values are the K/V themselves, and |O| <= max |V|.
            for n in ("descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o"):
                t[n] = g.tensor(name=n, dim=(1, 1, 1, 1), stride=(1, 1, 1, 1), data_type=f32)
                self.scalars[n] = torch.ones(1, 1, 1, 1, dtype=torch.float32, device="cuda")
            o, _, amax_s, amax_o = g.sdpa_fp8(q=t["q"], k=t["k"], v=t["v"], **{n: t[n] for n in self.scalars},
                                               name="paged_decode_fp8", **paged)
            for n, a in (("amax_s", amax_s), ("amax_o", amax_o)):
                a.set_output(True).set_dim((1, 1, 1, 1)).set_stride((1, 1, 1, 1)).set_data_type(f32)
                t[n] = a
                self.scalars[n] = torch.zeros(1, 1, 1, 1, dtype=torch.float32, device="cuda")
        else:
            o, _ = g.sdpa(q=t["q"], k=t["k"], v=t["v"], name="paged_decode", **paged)
        o.set_output(True).set_dim((b, hq, 1, d)).set_stride(q_stride).set_data_type(io)
        t["o"] = o
        g.build([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
        self.graph, self.handle = g, handle
        self.workspace = torch.empty(max(1, g.get_workspace_size()), dtype=torch.uint8, device="cuda")
        self.pack = {t["q"]: self.q, t["k"]: self.k, t["v"]: self.v, t["k_table"]: self.table,
                     t["v_table"]: self.table, t["seq_q"]: self.seq_q, t["seq_kv"]: self.seq_kv, t["o"]: self.out,
                     **{t[n]: x for n, x in self.scalars.items()}}

    def __call__(self):
        self.graph.execute(self.pack, self.workspace, handle=self.handle)

    def output(self):
        """O as [batch, q_heads, D] in float (fp8: the e4m3 values, scale_o being 1)."""
        return self.out.reshape(self.out.shape[0], self.out.shape[1], -1).float()


def reference_compare(cfg: fp.Config, inp: fp.Inputs, out) -> dict:
    """FlashInfer's script's reference and sample: the bf16 gate, or for fp8 the fp8 compute gate
    with the query as cuDNN read it (rounded to e4m3)."""
    if cfg.dtype != "fp8_e4m3":
        return fp.reference_compare(inp, out)
    q = inp.q.to(fp._torch().float8_e4m3fn).to(inp.q.dtype)
    return fp.reference_compare(inp, out, gate=functools.partial(sp.fp8_compute_gate, row_len=cfg.head_dim), q=q)


def run_one(variant: str, cfg: fp.Config, inp: fp.Inputs, workspace, flush, reps: int, warmup: int, notes: dict,
            log) -> list[dict]:
    """flashinfer_peers.run_one's contract for cuDNN's paged graph (``workspace`` unused: each
    graph holds the workspace cuDNN asks for)."""
    torch, cudnn = fp._torch(), _cudnn()
    name = fp.bench_name(VARIANT, cfg)
    t0 = time.time()
    try:
        call = PagedGraph(cfg, inp, notes.setdefault("_handle", cudnn.create_handle()))
        call()
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001  (the frontend raises several types for a refusal)
        return [failure_record(cfg, f"{type(e).__name__}: {e}")]
    notes.setdefault("build_s", {})[name] = round(time.time() - t0, 2)
    acc = reference_compare(cfg, inp, call.output())
    axes, flops, nbytes = fp.work(cfg)
    if not acc["passed"]:
        return [sp.error_record(name, fp.label(VARIANT, cfg), "accuracy gate failed: " + acc["message"], axes, flops,
                                nbytes)]
    try:
        for _ in range(warmup):
            call()
        torch.cuda.synchronize()
        timing = sp.time_peer(call, flush, reps)
    except RuntimeError as e:
        return [sp.error_record(name, fp.label(VARIANT, cfg), "timing failed: " + sp._short(e), axes, flops, nbytes)]
    sp.note_timing(notes, name, timing)
    del call
    return fp.records(VARIANT, cfg, timing.kernel_us, acc)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    fp.add_config_arguments(ap)
    ap.add_argument("--results-root", default="results")
    ap.add_argument("--budget-s", type=float, help="start no configuration after this many seconds")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    args = fp.finish_config_arguments(ap, ap.parse_args(argv))
    t_start = time.time()

    def log(msg):
        print(f"[{time.time() - t_start:7.1f} s] {msg}", flush=True)

    try:
        configs = fp.select_configs(args, log)
    except (fp.SpecError, ValueError) as e:
        print(f"cudnn_peers: {e}", file=sys.stderr)
        return 2
    try:
        torch = fp._torch()
    except ImportError as e:
        print(f"cudnn_peers: torch is not importable ({e}); nothing to run", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("cudnn_peers: no CUDA device; nothing to run", file=sys.stderr)
        return 3
    try:
        cudnn = _cudnn()
    except ImportError as e:
        print(f"cudnn_peers: the cuDNN frontend is not importable ({e}); nothing to run", file=sys.stderr)
        return 3
    versions = f"frontend {getattr(cudnn, '__version__', '?')}, cuDNN {cudnn.backend_version()}"
    log(f"{versions} (torch's cuDNN {torch.backends.cudnn.version()}); {len(configs)} configurations")
    commit, dirty = sp.git_provenance(Path(__file__).resolve().parent)
    ctx = sp.device_context()
    ctx.update(schedlab_commit=commit, schedlab_dirty=dirty, backend="cuda (cuDNN graph API)", cudnn_version=versions)
    bw = sp.measure_copy_bandwidth()
    ctx["copy_bandwidth_GBps"] = f"{bw / 1e9:.6f}"
    log(f"{ctx['device']} ({ctx['arch']}); copy {bw / 1e12:.2f} TB/s; commit {commit[:10]} dirty={dirty}; "
        f"run {ctx['run_id']}")
    ctx.update(experiment=fp.EXPERIMENT, reps=str(args.reps), warmup=str(args.warmup),
               launch_lead_us=f"{sp.launch_lead_us():g}",
               layout=("cuDNN sdpa (bf16 K/V: bf16 Q and O) or sdpa_fp8 (fp8 e4m3 K/V: e4m3 Q and O, unit scales) "
                       "with paged K/V containers [pages, kv_heads, page, D], a page table per sequence (the block "
                       "table of FlashInfer's rows: a random permutation of the pool) and the lengths as a padding "
                       "mask; the graph built once per configuration, outside the timed region"),
               accuracy=(f"float64 torch reference from the stored K/V (fp8: and the e4m3 query), sampled "
                         f"{fp.REF_SEQUENCES} sequences plus the longest; bf16 gate rel_l2 <= {sp.REL_L2_MAX:g}; "
                         f"fp8 compute gate rel_l2 <= {sp.FP8_COMPUTE_REL_L2_MAX:g}, each row <= "
                         f"{sp.FP8_COMPUTE_ROW_REL_L2_MAX:g}, every element within {sp.FP8_COMPUTE_ELEM_REL:g} x its row's RMS"))
    path = sp.results_path(args.results_root, sp.device_slug(ctx["device"]), fp.FAMILY, sp.utc_stamp(), commit,
                           dirty == "true")

    def checkpoint(recs, notes, complete=False):
        notes = {k: v for k, v in notes.items() if k != "_handle"}
        context = dict(ctx, **fp.context_notes(notes), build_s=notes.get("build_s", {}), complete=str(complete).lower())
        context.pop("flashinfer_backend", None)
        context.pop("first_call_s", None)
        sp.write_atomic(path, sp.results_document(context, recs))

    recs, notes = fp.run_all(configs, [VARIANT], args.reps, args.warmup, log, args.budget_s, checkpoint, run=run_one)
    checkpoint(recs, notes, complete=True)
    log(f"wrote {path}")
    print(sp.table(recs, notes), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
