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
  * a ragged batch: ``flash_attn.cute.flash_attn_varlen_func(q, k, v, cu_seqlens_q=...,
    cu_seqlens_k=..., max_seqlen_q=..., max_seqlen_k=..., causal=..., window_size=...)`` with q
    ``[total_q, q_heads, D]`` and k, v ``[total_k, kv_heads, D]`` (our packed layout) and the
    cumulative lengths ``[batch + 1]`` (asserted int32 and contiguous). On 9.x it runs the same
    ``FlashAttentionForwardSm90`` with the cumulative lengths (``SingleTileVarlenScheduler``
    over each sequence's query tiles; per-sequence bottom-right causal and windows,
    ``block_info.py``), so the same dtypes, head dims and GQA (packed when q_heads > kv_heads)
    as the uniform call; ``max_seqlen_q``/``max_seqlen_k`` are optional host bounds (without them
    it takes the total token counts), here the longest sequence. Varlen is its own compiled kernel
    (whether cu_seqlens are given is in the compile key), and above 256 sequences
    (``BIN_BATCH_SEARCH_THRESH``) each call first launches two small kernels that map tiles to
    sequences, inside the timed call;
  * every kernel is compiled on first use (JIT through the CuTe DSL: Python -> MLIR -> PTX ->
    cubin, in process). The key is the kernel's static configuration (dtype, head dims, GQA
    ratio, causal / window, tiles, ...), not the sequence lengths or the batch, so our prefill
    shapes need one compile per (dtype, D, causal, window, GQA ratio, varlen). A compile takes tens
    of seconds; each is measured (context ``first_call_s``) and kept out of the timings. FA4 keeps
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
not), ``--lengths SPEC`` (a ragged batch, bf16, D=128, causal and not), else the SDPA peers'
prefill grid (FA3 setting, D 128/64, seq 512..16384, causal 0/1). A ragged batch's name
(``.../lengths:SPEC/head_dim:D/causal:C[/window:W][/q_heads:H][/kv_heads:KV]``, no seq or batch) is
read with schedlab_analysis/lengths.py, which draws the lengths exactly as the harness does; its
work is the sum over its sequences (each has as many keys as queries) and its records carry
``tokens``, as ours. A combination FA4 does not serve is a ``skipped: FA4 ...`` record with the
reason (fp8 off SM100, an unsupported head dim, FA4 refusing the call, or its compile failing).

Timing as sdpa_peers (``sdpa_peers.time_peer``), as our harness times ours: after the compile call
and a warm-up, each repetition flushes the L2 (a read of twice its size) and times the call with
CUDA events, enqueued while the device spins after the flush (a longer spin than the other peers'
hides FA4's Python host side); the whole call, alternating with it, goes to the context
(``call_time_us``), and the profiler's sum of kernel durations, where it can attribute them, to
``profiler_kernel_us``. Accuracy: against a float64
reference computed by torch on a sample of batch items, heads and query rows, gated as ours; a
ragged batch: a sample of sequences (the first and last always), heads and rows of each (its
first and last always), each row against its own sequence's keys.
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
import functools
import math
import os
import random
import site
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sdpa_peers as sp  # noqa: E402  (pure parts; torch only inside functions)
from flashinfer_peers import _name_fields, discover_results, parse_lengths  # noqa: E402  (pure: names, results, lengths)


@functools.lru_cache(maxsize=256)
def lengths_of(spec: str) -> tuple[int, ...]:
    """parse_lengths, once per spec: discovery reads a name per record (a lognormal batch of 64k
    sequences takes a tenth of a second to draw)."""
    return tuple(parse_lengths(spec))

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
REF_SEQUENCES = 4  # a ragged batch's reference: the first, the last and two more sequences
# Above this many sequences FA4's varlen call also launches two small kernels per call that map
# tiles to sequences (interface.py BIN_BATCH_SEARCH_THRESH, _compute_tile_cumsum), each compiled once.
FA4_VARLEN_LOOKUP_BATCH = 256


class SpecError(ValueError):
    """A configuration that forms no prefill problem."""


# ---- configurations -------------------------------------------------------------------------

def fa3_batch(q_len: int) -> int:
    return max(1, FA3_TOTAL_TOKENS // q_len)


def fa3_heads(head_dim: int) -> int:
    return FA3_HIDDEN // head_dim


@dataclass(frozen=True)
class Config:
    """One prefill problem as kernels/prefill/prefill_shapes.hpp spells it (PrefillShape). A
    ragged batch (``lengths``) packs its sequences one after another, each with as many keys as
    queries (make_ragged_prefill): batch is their count and q_len = kv_len the longest."""
    dtype: str
    q_len: int
    kv_len: int
    head_dim: int
    causal: int
    batch: int
    q_heads: int
    kv_heads: int
    window: int = 0  # sliding window, 0: none
    lengths: tuple[int, ...] | None = None  # ragged: every sequence's length; None: uniform
    lengths_spec: str = ""  # the `lengths` value that drew them, as the name spells it

    @staticmethod
    def fa3(seq: int, head_dim: int, causal: int, dtype: str = "bf16") -> "Config":
        """The FA3 setting: 16k tokens, hidden 2048, MHA."""
        h = fa3_heads(head_dim)
        return Config(dtype, seq, seq, head_dim, int(bool(causal)), fa3_batch(seq), h, h)

    @staticmethod
    def ragged(spec: str, head_dim: int, causal: int, dtype: str = "bf16", q_heads: int | None = None,
               kv_heads: int | None = None, window: int = 0) -> "Config":
        """The ragged batch a `lengths` value draws (schedlab_analysis.lengths, the harness's
        draws); q_heads 2048 / head_dim and kv_heads q_heads unless given, as the names default."""
        lens = lengths_of(spec)
        q_heads = fa3_heads(head_dim) if q_heads is None else q_heads
        longest = max(lens)
        return Config(dtype, longest, longest, head_dim, int(bool(causal)), len(lens), q_heads,
                      q_heads if kv_heads is None else kv_heads, window, lens, spec)

    @property
    def is_ragged(self) -> bool:
        return self.lengths is not None

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
        if self.is_ragged:
            self._check_ragged()
        elif self.lengths_spec:
            raise SpecError(f"lengths {self.lengths_spec!r} is named but the batch holds no lengths")

    def _check_ragged(self) -> None:
        """As common/problem.cpp check_ragged: one length per sequence, each >= 1, the longest
        being q_len and kv_len; and the lengths are the ones the name's spec draws."""
        lens = self.lengths
        if not lens or len(lens) != self.batch:
            raise SpecError(f"lengths has {len(lens or ())} entries for batch {self.batch}")
        if min(lens) < 1:
            raise SpecError(f"lengths: sequence {lens.index(min(lens))} has length {min(lens)} (must be >= 1)")
        if self.q_len != max(lens) or self.kv_len != max(lens):
            raise SpecError(f"lengths: the longest is {max(lens)} but q_len, kv_len are {self.q_len}, {self.kv_len}")
        if not self.lengths_spec or lengths_of(self.lengths_spec) != lens:
            raise SpecError(f"lengths {self.lengths_spec!r} does not draw this batch's lengths")


def default_configs() -> list[Config]:
    """The SDPA peers' prefill grid (FA3 setting), so FA4 rows sit beside theirs."""
    return [Config.fa3(s["seq"], s["head_dim"], s["causal"]) for s in sp.prefill_shapes()]


def quick_configs() -> list[Config]:
    return [Config.fa3(8192, 128, 0), Config.fa3(8192, 128, 1)]


def ragged_configs(spec: str, dtypes=("bf16",)) -> list[Config]:
    """``--lengths SPEC``: the ragged batch at head dim 128 (FA3 heads), causal and not."""
    return [Config.ragged(spec, 128, causal, dt) for dt in dtypes for causal in (1, 0)]


def config_from_name(name: str) -> Config | None:
    """The prefill configuration a benchmark name spells (prefill_shape_name: seq or q_len/kv_len,
    or a ragged batch's lengths; head_dim, causal, then window / batch / q_heads / kv_heads where
    off the FA3 defaults), or None for a name that is not a prefill one. A lengths value that
    draws nothing raises ValueError (schedlab_analysis.lengths.LengthsError), as does a name
    with lengths and seq, q_len, kv_len or batch (the harness refuses those)."""
    dtype, f = _name_fields(name)
    if dtype is None or "head_dim" not in f or "causal" not in f:
        return None
    head_dim = int(f["head_dim"])
    if "lengths" in f:
        also = [a for a in ("seq", "q_len", "kv_len", "batch") if a in f]
        if also:
            raise SpecError(f"lengths sets the batch and every sequence's length; the name also has {also[0]}")
        q_heads = int(f["q_heads"]) if "q_heads" in f else None
        return Config.ragged(f["lengths"], head_dim, int(f["causal"]), dtype, q_heads,
                             int(f["kv_heads"]) if "kv_heads" in f else None, int(f.get("window", 0)))
    if "seq" in f:
        q_len = kv_len = int(f["seq"])
    elif "q_len" in f and "kv_len" in f:
        q_len, kv_len = int(f["q_len"]), int(f["kv_len"])
    else:
        return None
    q_heads = int(f.get("q_heads", fa3_heads(head_dim)))
    return Config(dtype, q_len, kv_len, head_dim, int(f["causal"]), int(f.get("batch", fa3_batch(q_len))),
                  q_heads, int(f.get("kv_heads", q_heads)), int(f.get("window", 0)))


def discover_configs(root: Path | str, log=print) -> list[Config]:
    """Every prefill configuration of our own (peer=0) results under ``root``, ragged batches
    among them, in first-seen order (files in path order); a name that forms no configuration
    is reported and left out."""
    def parse(name: str) -> Config:
        cfg = config_from_name(name)
        if cfg is None:
            raise SpecError("no seq (or q_len/kv_len, or lengths), head_dim and causal in the name")
        cfg.check()
        return cfg
    return discover_results(root, FAMILY, parse, log)


def order(configs: list[Config]) -> list[Config]:
    """Runnable dtypes first, then by compiled kernel (head dim 128 first, causal, window, GQA
    ratio), the longest sequence first within one: a run stopped by its budget then holds the
    headline shapes, and each kernel is compiled once, at its first configuration."""
    def key(c: Config):
        return (c.dtype not in SM90_DTYPES, DTYPES.index(c.dtype), c.head_dim != 128, c.head_dim, c.causal,
                c.window, c.q_heads // c.kv_heads, c.is_ragged, -c.q_len, -c.kv_len, c.batch,
                -total_tokens(c) if c.is_ragged else 0)
    return sorted(dict.fromkeys(configs), key=key)


# ---- work, names, records -------------------------------------------------------------------

def seq_lengths(cfg: Config, seq: int = 0) -> tuple[int, int]:
    """(queries, keys) of sequence ``seq`` (PrefillProblem::seq_q_len, seq_kv_len)."""
    if cfg.is_ragged:
        return cfg.lengths[seq], cfg.lengths[seq]
    return cfg.q_len, cfg.kv_len


def cu_seqlens(cfg: Config) -> list[int]:
    """Each sequence's first row in the packed Q/O and K/V, and the total last (the prefix sums
    of the lengths, PrefillProblem::q_start): FA4's cu_seqlens_q = cu_seqlens_k, int32."""
    out = [0]
    for n in (cfg.lengths if cfg.is_ragged else [cfg.q_len] * cfg.batch):
        out.append(out[-1] + n)
    return out


def total_tokens(cfg: Config) -> int:
    """Queries of the whole batch (a ragged batch's `tokens` counter)."""
    return sum(cfg.lengths) if cfg.is_ragged else cfg.batch * cfg.q_len


def visible_range(cfg: Config, q_pos: int, seq: int = 0) -> tuple[int, int]:
    """PrefillProblem::visible_keys(): bottom-right alignment, [begin, end) of the keys query
    ``q_pos`` of sequence ``seq`` sees (a ragged sequence has as many keys as queries)."""
    return _visible(cfg, *seq_lengths(cfg, seq), q_pos)


def _visible(cfg: Config, q_len: int, kv_len: int, q_pos: int) -> tuple[int, int]:
    diag = q_pos + (kv_len - q_len)
    begin, end = 0, kv_len
    if cfg.causal:
        end = min(kv_len, diag + 1)
    if cfg.window > 0:
        begin = max(0, diag - cfg.window + 1)
    return begin, max(begin, end)


def visible_pairs(cfg: Config, seq: int = 0) -> int:
    """Visible (query, key) pairs of sequence ``seq`` (uniform: of each sequence)."""
    return _pairs(cfg, *seq_lengths(cfg, seq))


def _pairs(cfg: Config, q_len: int, kv_len: int) -> int:
    if not cfg.causal and cfg.window == 0:
        return q_len * kv_len
    if cfg.causal and cfg.window == 0 and q_len == kv_len:
        return q_len * (q_len + 1) // 2
    return sum(e - b for b, e in (_visible(cfg, q_len, kv_len, i) for i in range(q_len)))


def total_pairs(cfg: Config) -> int:
    """Visible (query, key) pairs of the whole batch: a ragged batch sums its sequences' (each
    distinct length counted once), as PrefillProblem::flops() counts them."""
    if not cfg.is_ragged:
        return visible_pairs(cfg) * cfg.batch
    return sum(_pairs(cfg, n, n) * count for n, count in Counter(cfg.lengths).items())


def work(cfg: Config) -> tuple[dict, float, float]:
    """(axis counters, flops, bytes) as common/problem.cpp declares a prefill problem's work and
    kernels/prefill/prefill_case.hpp names its counters (a ragged batch: seq_len and kv_len its
    longest sequence's, ``tokens`` all of them; Q, K, V and O over the total tokens)."""
    if cfg.is_ragged:
        flops = 4.0 * float(total_pairs(cfg)) * cfg.head_dim * cfg.q_heads
        q_elems = float(total_tokens(cfg)) * cfg.q_heads * cfg.head_dim
        kv_elems = float(total_tokens(cfg)) * cfg.kv_heads * cfg.head_dim
    else:
        flops = 4.0 * float(visible_pairs(cfg)) * cfg.head_dim * cfg.q_heads * cfg.batch
        q_elems = float(cfg.batch) * cfg.q_heads * cfg.q_len * cfg.head_dim
        kv_elems = float(cfg.batch) * cfg.kv_heads * cfg.kv_len * cfg.head_dim
    out_bytes = 2  # fp8 inputs write O in bf16
    nbytes = (q_elems + 2 * kv_elems) * ELEM_BYTES[cfg.dtype] + q_elems * out_bytes
    axes = {"batch": cfg.batch, "q_heads": cfg.q_heads, "kv_heads": cfg.kv_heads, "seq_len": cfg.q_len,
            "kv_len": cfg.kv_len, "head_dim": cfg.head_dim, "causal": cfg.causal, "window": cfg.window}
    if cfg.is_ragged:
        axes["tokens"] = total_tokens(cfg)
    return axes, flops, nbytes


def shape_name(cfg: Config) -> str:
    """kernels/prefill/prefill_shapes.hpp prefill_shape_name(): a ragged batch names its
    lengths value instead of seq (or q_len/kv_len) and batch."""
    if cfg.is_ragged:
        name = f"{cfg.dtype}/lengths:{cfg.lengths_spec}"
    else:
        name = cfg.dtype + (f"/seq:{cfg.q_len}" if cfg.q_len == cfg.kv_len
                            else f"/q_len:{cfg.q_len}/kv_len:{cfg.kv_len}")
    name += f"/head_dim:{cfg.head_dim}/causal:{cfg.causal}"
    if cfg.window:
        name += f"/window:{cfg.window}"
    if not cfg.is_ragged and cfg.batch != fa3_batch(cfg.q_len):
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
    """What FA4 compiles one kernel for among our shapes (its compile key holds no lengths, but
    whether cu_seqlens are given, and above FA4_VARLEN_LOOKUP_BATCH sequences the lookup's
    kernels)."""
    key = f"{cfg.dtype}/D{cfg.head_dim}/causal:{cfg.causal}"
    if cfg.window:
        key += "/window"
    if cfg.q_heads != cfg.kv_heads:
        key += f"/gqa:{cfg.q_heads // cfg.kv_heads}"
    if cfg.is_ragged:
        key += "/varlen" + ("/lookup" if cfg.batch > FA4_VARLEN_LOOKUP_BATCH else "")
    return key


def varlen_arguments(cfg: Config) -> dict:
    """flash_attn_varlen_func's length arguments for a ragged batch (cu_seqlens as a list; the
    call makes it an int32 tensor): the same cumulative lengths for queries and keys, and the
    longest sequence as the host bounds (without them FA4 takes the total token count)."""
    cu = cu_seqlens(cfg)
    return {"cu_seqlens_q": cu, "cu_seqlens_k": cu, "max_seqlen_q": cfg.q_len, "max_seqlen_k": cfg.kv_len}


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


def memory_refusal(cfg: Config, limit: float = MEMORY_LIMIT_BYTES) -> str | None:
    """Why the configuration is not started for its tensors' size (Q, K, V and O), or None."""
    need = tensor_bytes(cfg)
    if need > limit:
        return f"Q/K/V/O need {need / 1e9:.1f} GB, over this script's {limit / 1e9:.0f} GB limit"
    return None


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
    """Standard-normal Q [batch, q_len, q_heads, D] and K, V [batch, kv_len, kv_heads, D]; a
    ragged batch packed: Q [total, q_heads, D], K and V [total, kv_heads, D]."""
    torch = _torch()
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    dt = torch_dtype(cfg.dtype)
    if cfg.is_ragged:
        t = total_tokens(cfg)
        q_shape, kv_shape = (t, cfg.q_heads, cfg.head_dim), (t, cfg.kv_heads, cfg.head_dim)
    else:
        q_shape = (cfg.batch, cfg.q_len, cfg.q_heads, cfg.head_dim)
        kv_shape = (cfg.batch, cfg.kv_len, cfg.kv_heads, cfg.head_dim)
    q = torch.randn(*q_shape, device="cuda", dtype=dt, generator=g)
    k = torch.randn(*kv_shape, device="cuda", dtype=dt, generator=g)
    v = torch.randn(*kv_shape, device="cuda", dtype=dt, generator=g)
    return q, k, v


def ragged_reference_sample(cfg: Config, rng: random.Random) -> tuple[list[tuple[int, list[int]]], list[int]]:
    """What the reference checks of a ragged batch: ([(sequence, its query rows)], heads). Up to
    REF_SEQUENCES sequences, the first and the last always among them; up to REF_ROWS rows of
    each, its first and last always among them; REF_HEADS heads."""
    b = cfg.batch
    middle = rng.sample(range(1, b - 1), min(max(0, REF_SEQUENCES - 2), max(0, b - 2)))
    seqs = sorted({0, b - 1, *middle})
    picks = [(s, sorted(set(rng.sample(range(cfg.lengths[s]), min(REF_ROWS, cfg.lengths[s])))
                        | {0, cfg.lengths[s] - 1})) for s in seqs]
    heads = sorted(rng.sample(range(cfg.q_heads), min(REF_HEADS, cfg.q_heads)))
    return picks, heads


def _attend(qq, kk, vv, hidden, scale):
    """float64 softmax(qq kk^T * scale, keys ``hidden`` masked) vv; a row with no key: 0."""
    torch = _torch()
    s = (qq @ kk.T * scale).masked_fill(hidden, float("-inf"))
    return torch.nan_to_num(torch.softmax(s, dim=-1)) @ vv


def reference_compare(cfg: Config, q, k, v, out, gate=None) -> dict:
    """float64 reference on the GPU (upcast inputs) for a sample of batch items, heads and query
    rows (the first and last always among them); a ragged batch: a sample of its sequences
    (ragged_reference_sample), each against its own keys. Gated like ours (or by `gate`)."""
    torch = _torch()
    rng = random.Random(sp._seed())
    if cfg.is_ragged:
        return _ragged_reference_compare(cfg, q, k, v, out, rng, gate)
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
            refs.append(_attend(qq, kk, vv, hidden, scale).flatten())
            diffs.append(out[bi, ridx, h].double().flatten() - refs[-1])
            del kk, vv
    return (gate or sp.gate)(diffs, refs)


def _ragged_reference_compare(cfg: Config, q, k, v, out, rng: random.Random, gate=None) -> dict:
    """reference_compare of a packed batch: Q/O [total, q_heads, D], K/V [total, kv_heads, D]."""
    torch = _torch()
    scale = 1.0 / math.sqrt(cfg.head_dim)
    group = cfg.q_heads // cfg.kv_heads
    starts = cu_seqlens(cfg)
    picks, heads = ragged_reference_sample(cfg, rng)
    diffs, refs = [], []
    for seq, rows in picks:
        n, first = cfg.lengths[seq], starts[seq]
        ridx = torch.tensor([first + r for r in rows], device=q.device)
        lo = torch.tensor([visible_range(cfg, r, seq)[0] for r in rows], device=q.device)
        hi = torch.tensor([visible_range(cfg, r, seq)[1] for r in rows], device=q.device)
        keys = torch.arange(n, device=q.device)
        hidden = (keys[None, :] < lo[:, None]) | (keys[None, :] >= hi[:, None])   # [r, n]
        for h in heads:
            qq = q[ridx, h].double()                                               # [r, D]
            kk = k[first:first + n, h // group].double()                           # [n, D]
            vv = v[first:first + n, h // group].double()
            refs.append(_attend(qq, kk, vv, hidden, scale).flatten())
            diffs.append(out[ridx, h].double().flatten() - refs[-1])
            del kk, vv
    return (gate or sp.gate)(diffs, refs)


def fa4_call(cfg: Config, fa4, q, k, v):
    """The FA4 call of a configuration, as a closure returning O: flash_attn_func for a uniform
    batch, flash_attn_varlen_func with the cumulative lengths for a ragged one."""
    window = fa4_window(cfg)
    if not cfg.is_ragged:
        return lambda: fa4.flash_attn_func(q, k, v, causal=bool(cfg.causal), window_size=window)[0]
    torch = _torch()
    lens = varlen_arguments(cfg)
    cu = torch.tensor(lens["cu_seqlens_q"], dtype=torch.int32, device=q.device)
    return lambda: fa4.flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu, cu_seqlens_k=cu,
                                              max_seqlen_q=lens["max_seqlen_q"], max_seqlen_k=lens["max_seqlen_k"],
                                              causal=bool(cfg.causal), window_size=window)[0]


def run_one(cfg: Config, fa4, flush, reps: int, warmup: int, notes: dict, log, arch_major: int = 9) -> list[dict]:
    """Records of one configuration: timing iterations + aggregates, or a skip / failure record."""
    torch = _torch()
    why = known_refusal(cfg, arch_major) or memory_refusal(cfg)
    if why:
        return [failure_record(cfg, why, skipped=True)]
    q, k, v = make_inputs(cfg, sp._seed())
    call = fa4_call(cfg, fa4, q, k, v)
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
            timing = sp.time_peer(call, flush, reps, own_lead_us=QUEUE_LEAD_US)
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


def layout_context(configs: list[Config]) -> str:
    """The results' ``layout`` context: the calls made (the varlen one only where a ragged batch ran)."""
    text = ("flash_attn.cute.flash_attn_func(q, k, v, causal, window_size), Q [batch, q_len, q_heads, D], "
            "K/V [batch, kv_len, kv_heads, D], contiguous; the first call of each kernel (its JIT "
            "compile) is timed apart (first_call_s) and followed by the warm-up")
    if any(c.is_ragged for c in configs):
        text += ("; a ragged batch: flash_attn.cute.flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, "
                 "max_seqlen_q, max_seqlen_k, causal, window_size), Q [total, q_heads, D], K/V [total, kv_heads, D] "
                 "packed, cu_seqlens_q = cu_seqlens_k the int32 prefix sums of the lengths, max_seqlen_q/k the longest")
    return text


def accuracy_context(configs: list[Config]) -> str:
    """The results' ``accuracy`` context (the ragged sample only where a ragged batch ran)."""
    text = (f"float64 torch reference on the GPU from the upcast inputs, sampled {REF_BATCH_ITEMS} batch "
            f"items x {REF_HEADS} heads x {REF_ROWS}+ query rows; gate rel_l2 <= {sp.REL_L2_MAX:g}, "
            f"mismatch (atol {sp.ATOL:g} + rtol {sp.RTOL:g}) <= {sp.MAX_MISMATCH_PCT:g}%")
    if any(c.is_ragged for c in configs):
        text += (f"; a ragged batch: {REF_SEQUENCES} sequences (the first and last among them) x {REF_HEADS} heads "
                 f"x {REF_ROWS}+ query rows of each (its first and last among them), each against its own keys")
    return text


def select_configs(args, log) -> list[Config]:
    configs: list[Config] = []
    for d in args.from_results:
        found = discover_configs(d, log)
        n_ragged = sum(c.is_ragged for c in found)
        log(f"from-results {d}: {len(found)} prefill configurations"
            + (f" ({n_ragged} of them ragged batches)" if n_ragged else ""))
        configs += found
    if args.quick:
        configs += quick_configs()
    for spec in getattr(args, "lengths", None) or []:
        configs += ragged_configs(spec)
    if not configs and not args.from_results:
        configs = default_configs()
    for c in configs:
        c.check()
    return order(configs)


def profile_once(cfg: Config, fa4, warmup: int) -> int:
    """``--profile NAME``: FA4 on the configuration a benchmark name spells (checked by main),
    warmed up (its JIT compile among the warm-up calls), then one call between
    cudaProfilerStart and Stop, which a profiler started with ``--profile-from-start off`` sees
    alone (scripts/device_ncu_peer.sh). Writes nothing."""
    torch = _torch()
    why = known_refusal(cfg, torch.cuda.get_device_capability()[0]) or memory_refusal(cfg)
    if why:
        print(f"fa4_peers: --profile {bench_name(cfg)}: {why}", file=sys.stderr)
        return 2
    q, k, v = make_inputs(cfg, sp._seed())
    sp.profile_one_call(fa4_call(cfg, fa4, q, k, v), warmup)
    print(f"fa4_peers: profiled one call of {bench_name(cfg)}", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results-root", default="results")
    ap.add_argument("--from-results", action="append", default=[], metavar="DIR",
                    help="run every prefill configuration of our results files under DIR")
    ap.add_argument("--quick", action="store_true", help="D=128, seq 8192, causal and not")
    ap.add_argument("--lengths", action="append", default=[], metavar="SPEC",
                    help="a ragged batch in our names' grammar ('1000+8192', "
                         "'lognormal:30:1536:0.5:256-8192+2x32768'), bf16, D=128, causal and not")
    ap.add_argument("--site", default=os.environ.get("FA4_SITE"), metavar="DIR",
                    help="a folder holding the unpacked FA4 (scripts/pack_fa4.sh), added as a site directory")
    ap.add_argument("--budget-s", type=float, help="start no configuration after this many seconds")
    ap.add_argument("--profile", metavar="NAME",
                    help="warm up, then one call of the configuration a benchmark name spells between "
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
    if args.profile:
        try:
            profiled = config_from_name(args.profile)
            if profiled is not None:
                profiled.check()
        except ValueError as e:
            print(f"fa4_peers: --profile {args.profile}: {e}", file=sys.stderr)
            return 2
        if profiled is None:
            print(f"fa4_peers: --profile {args.profile!r} is not a prefill benchmark name", file=sys.stderr)
            return 2
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
    if profiled is not None:
        return profile_once(profiled, fa4, args.warmup)
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
               launch_lead_us=f"{sp.launch_lead_us(QUEUE_LEAD_US):g}",
               layout=layout_context(configs), accuracy=accuracy_context(configs))
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
