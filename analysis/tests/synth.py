"""Synthetic results trees for the tests, written in the harness's format (Google Benchmark
1.7 JSON with schedlab's label, counters and context). Never written under results/."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

DEVICE_CONTEXT = {
    "date": "2026-11-20T12:00:00+00:00", "host_name": "synthetic", "executable": "./bench",
    "num_cpus": 16, "mhz_per_cpu": 2000, "cpu_scaling_enabled": False,
    "caches": [{"type": "Data", "level": 1, "size": 49152, "num_sharing": 2}],
    "load_avg": [0.1, 0.2, 0.3], "library_build_type": "release",
    "schedlab_commit": "0123456789abcdef0123456789abcdef01234567", "schedlab_dirty": "false",
    "device": "NVIDIA H200", "arch": "sm_90", "backend": "cuda", "sm_count": "132",
    "l2_bytes": "62914560", "sm_clock_mhz": "1980", "mem_clock_mhz": "3201",
    "driver_version": "13.0 (13000)", "toolkit_version": "13.0 (13000)", "compiler_flags": "-O3",
    "sched_hints": "no-op on this backend", "async_copy": "cp.async",
    "timing": "device events around each launch; L2 flushed before each",
    "copy_bandwidth_GBps": "4250.0",
}


def benchmark_records(name: str, label: str, times_us, counters: dict, *, iterations: bool = True,
                      aggregates: bool = True, error: str | None = None) -> list[dict]:
    """The records Google Benchmark writes for one benchmark run with repetitions."""
    full = name + "/manual_time"
    if error is not None:
        return [{"name": full, "run_name": full, "run_type": "iteration", "repetitions": len(times_us),
                 "repetition_index": 0, "threads": 1, "iterations": 0, "real_time": 0.0, "cpu_time": 0.0,
                 "time_unit": "us", "label": label, "error_occurred": True, "error_message": error}]
    base = {"run_name": full, "repetitions": len(times_us), "threads": 1, "time_unit": "us", "label": label,
            "family_index": 0, "per_family_instance_index": 0}
    out = []
    if iterations:
        for i, t in enumerate(times_us):
            rec = dict(base, name=full, run_type="iteration", repetition_index=i, iterations=50,
                       real_time=float(t), cpu_time=float(t) * 1.1)
            rec.update(counters)
            out.append(rec)
    if aggregates:
        t = np.asarray(times_us, float)
        for agg, value, unit in (("mean", t.mean(), "time"), ("median", np.median(t), "time"),
                                 ("stddev", t.std(ddof=1) if t.size > 1 else 0.0, "time"),
                                 ("cv", (t.std(ddof=1) / t.mean()) if t.size > 1 else 0.0, "percentage")):
            rec = dict(base, name=f"{full}_{agg}", run_type="aggregate", aggregate_name=agg,
                       aggregate_unit=unit, iterations=len(times_us), real_time=float(value),
                       cpu_time=float(value))
            rec.update(counters)
            out.append(rec)
    return out


def write_results_file(path: Path, context: dict, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"context": context, "benchmarks": records}, indent=1), encoding="utf-8")
    return path


def label(family: str, experiment: str, variant: str, baseline: str, dtype: str, peer: int = 0) -> str:
    return f"family={family};experiment={experiment};variant={variant};baseline={baseline};dtype={dtype};peer={peer}"


def experiment_run(root: Path, experiment: str, family: str, baseline: str, variants: dict[str, float],
                   configs: list[dict], *, dtype: str = "bf16", reps: int = 6, peer: bool = False,
                   errors: dict[tuple[str, int], str] | None = None, stamp: str = "20261120T120000Z",
                   sha: str = "0123456789", device_slug: str = "h200", noise: float = 0.01,
                   iterations: bool = True, aggregates: bool = True, context: dict | None = None,
                   seed: int = 0, variant_counters: dict[str, dict] | None = None) -> Path:
    """One results file for ``experiment``: ``variants`` maps a variant to a time factor;
    each config's time is factor * (bytes / 4 TB/s + flops / 600 TFLOP/s), with noise.
    A config's ``_name`` (a format string over its axes) spells the name's axis segments, as
    the decode registration does; ``variant_counters`` adds per-variant counters (a plan's
    ``num_splits``, which is not an axis of the problem)."""
    rng = np.random.default_rng(seed)
    errors = errors or {}
    records = []
    for variant, factor in variants.items():
        for ci, cfg in enumerate(configs):
            flops = float(cfg.get("_flops", 4.0 * cfg.get("seq_len", cfg.get("context", 1024)) ** 2 * 128 * 16))
            nbytes = float(cfg.get("_bytes", 2.0 * cfg.get("seq_len", cfg.get("context", 1024)) * 128 * 16 * 4))
            t0 = factor * (nbytes / 4.0e12 + flops / 600e12) * 1e6
            times = t0 * (1 + noise * rng.standard_normal(reps))
            axes = {k: v for k, v in cfg.items() if not k.startswith("_")}
            segments = cfg["_name"].format(**axes) if "_name" in cfg else "/".join(f"{k}:{v}" for k, v in axes.items())
            name = f"{experiment}/{variant}/{dtype}/{segments}"
            counters = dict(axes, flops=flops, bytes=nbytes, FLOP_per_s=flops / (t0 * 1e-6),
                            bytes_per_s=nbytes / (t0 * 1e-6), rel_l2_err=0.003, max_abs_err=0.01,
                            mismatch_pct=0.0, input_sets=4, **(variant_counters or {}).get(variant, {}))
            lab = label(family, experiment, variant, baseline, dtype, int(peer))
            records += benchmark_records(name, lab, times, counters, iterations=iterations,
                                         aggregates=aggregates, error=errors.get((variant, ci)))
    ctx = dict(DEVICE_CONTEXT, experiment=experiment)
    if peer:
        ctx["timing"] = "kernel time (torch.profiler)"
    ctx.update(context or {})
    return write_results_file(root / device_slug / experiment / f"{stamp}-{sha}.json", ctx, records)


# As kernels/decode/decode_bench.hpp registers them: name .../batch:B/context:C/page:P, the
# problem's axes as counters (page_size, window, ...).
DECODE_CONFIGS = [{"batch": b, "q_heads": 32, "kv_heads": 8, "head_dim": 128, "page_size": 16, "context": c,
                   "window": 0, "_name": "batch:{batch}/context:{context}/page:{page_size}",
                   "_flops": 4.0 * b * 32 * 128 * c, "_bytes": 2.0 * b * 8 * 128 * c * 2}
                  for b in (1, 16) for c in (4096, 16384)]
PREFILL_CONFIGS = [{"batch": 16384 // s, "q_heads": 16, "kv_heads": 16, "head_dim": 128, "seq_len": s,
                    "causal": 0, "_flops": 4.0 * (16384 // s) * s * s * 128 * 16,
                    "_bytes": 4.0 * (16384 // s) * s * 16 * 128 * 2}
                   for s in (1024, 4096, 8192)]


def stall_records(benchmarks: list[str], memwait: list[float]) -> list[dict]:
    out = []
    for b, m in zip(benchmarks, memwait):
        rest = 1.0 - m
        out.append({"benchmark": b, "kernel": "attn_kernel", "gpu_time_ns": 1e5, "memwait_share": m,
                    "stall_long_scoreboard": m * 0.6, "stall_short_scoreboard": m * 0.2,
                    "stall_lg_throttle": m * 0.1, "stall_mio_throttle": m * 0.1,
                    "stall_barrier": rest * 0.4, "stall_wait": rest * 0.3, "stall_selected": rest * 0.3})
    return out


def _nvidia(kernel, experiment, variant, registers):
    # The keys scripts/resource_report.py writes for sm_90a.
    return {"kernel": kernel, "symbol": kernel, "source": "k.cu", "experiment": experiment, "variant": variant,
            "target": "sm_90a", "compiler": "nvcc 13.0", "registers": registers, "barriers": 1,
            "stack_frame_bytes": 0, "spill_store_bytes": 0, "spill_load_bytes": 0, "static_smem_bytes": 98304,
            "dynamic_smem_bytes": 0, "block_size": 384, "blocks_per_sm": 1, "warps_per_sm": 12,
            "occupancy": 12 / 64, "occupancy_limiter": "registers", "notes": []}


def _amd(kernel, experiment, variant, vgpr_total, spills, waves):
    # The keys scripts/resource_report.py writes for gfx942 / gfx950.
    return {"kernel": kernel, "symbol": kernel, "source": "k.cu", "experiment": experiment, "variant": variant,
            "target": "gfx950", "compiler": "clang 22", "vgpr_total": vgpr_total, "vgpr": vgpr_total, "agpr": 0,
            "sgpr": 60, "vgpr_spill_regs": spills, "sgpr_spill_regs": 0, "scratch_bytes_per_lane": 4 * spills,
            "static_smem_bytes": 65536, "dynamic_smem_bytes": 0, "block_size": 256, "waves_per_simd": waves,
            "workgroups_per_cu": waves, "occupancy": waves / 8, "occupancy_limiter": "vgpr", "notes": []}


def resource_records() -> list[dict]:
    return [
        _nvidia("attn<schedlab::experiments::prefill_kv_tiles::union>", "prefill_kv_tiles", "union", 168),
        _nvidia("attn<schedlab::experiments::prefill_kv_tiles::separate>", "prefill_kv_tiles", "separate", 168),
        _amd("attn<schedlab::experiments::prefill_kv_tiles::union>", "prefill_kv_tiles", "union", 172, 0, 2),
        _amd("attn<schedlab::experiments::prefill_kv_tiles::separate>", "prefill_kv_tiles", "separate", 172, 0, 2),
        _amd("decode<schedlab::experiments::decode_kv_streaming::resident>", "decode_kv_streaming", "resident",
             256, 12, 1),
        _amd("decode<schedlab::experiments::decode_kv_streaming::streaming>", "decode_kv_streaming", "streaming",
             108, 0, 2),
    ]


def write_records(path: Path, context: dict, records: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"context": context, "records": records}), encoding="utf-8")
    return path


def full_tree(root: Path) -> Path:
    """A results tree with a decode and a prefill experiment, peers for both, a failed and a
    skipped run, stall and probe files, a resources report and a stray non-benchmark JSON."""
    experiment_run(root, "decode_kv_streaming", "decode", "resident", {"resident": 1.0, "streaming": 0.9},
                   DECODE_CONFIGS, errors={("streaming", 3): "accuracy gate failed: rel_l2_err 0.2 > 0.02",
                                           ("resident", 0): "skipped: invalid problem: page_size"},
                   variant_counters={"resident": {"num_splits": 8}, "streaming": {"num_splits": 4}})
    peer_configs = [{k: v for k, v in c.items() if k not in ("page_size", "window", "_name")} for c in DECODE_CONFIGS]
    experiment_run(root, "peers_decode", "decode", "sdpa_flash", {"sdpa_flash": 1.05, "sdpa_cudnn": 0.95},
                   peer_configs, peer=True, seed=1)
    experiment_run(root, "prefill_kv_tiles", "prefill", "union", {"union": 1.0, "separate": 0.96},
                   PREFILL_CONFIGS, seed=2)
    experiment_run(root, "peers_prefill", "prefill", "sdpa_flash", {"sdpa_flash": 1.8, "sdpa_cudnn": 1.0},
                   PREFILL_CONFIGS, peer=True, seed=3)
    ctx = dict(DEVICE_CONTEXT, experiment="prefill_kv_tiles")
    names = [f"prefill_kv_tiles/{v}/bf16/batch:2/q_heads:16/kv_heads:16/head_dim:128/seq_len:8192/causal:0"
             for v in ("union", "separate")]
    write_records(root / "h200" / "prefill_kv_tiles" / "stalls-20261120T130000Z-0123456789.json", ctx,
                  stall_records(names, [0.31, 0.19]))
    write_records(root / "h200" / "prefill_kv_tiles" / "probes-20261120T130000Z-0123456789.json", ctx,
                  [{"benchmark": n, "wait_cycles_share": w, "total_cycles": 1000,
                    "wait_points": {"async_wait": 1000 * w * 0.7, "block_barrier": 1000 * w * 0.3}}
                   for n, w in zip(names, (0.4, 0.3))])
    static = root / "static" / "resources.json"
    static.parent.mkdir(parents=True, exist_ok=True)
    static.write_text(json.dumps(resource_records()), encoding="utf-8")
    (root / "h200" / "notes.json").write_text(json.dumps({"comment": "not a results file"}), encoding="utf-8")
    return root


# A ragged batch spelled in the name as the decode registration does (lengths:...), one token
# long enough to need breaking inside.
RAGGED_LENGTHS = "1+16+256+2048+8192+16384+32768+65536"


def _decode_shape(b: int, c: int, kv: int, q: int, lengths: str | None = None, page: int = 16) -> dict:
    segments = "batch:{batch}/context:{context}/kv_heads:{kv_heads}/q_heads:{q_heads}"
    segments += f"/lengths:{lengths}" if lengths else ""
    return {"batch": b, "context": c, "kv_heads": kv, "q_heads": q, "head_dim": 128, "page_size": page,
            "_name": segments + "/page:{page_size}", "_flops": 4.0 * b * q * 128 * c, "_bytes": 2.0 * b * kv * 128 * c * 2}


# Uniform shapes at three batches and two head layouts, and two ragged batches: a summary panel
# (batch=32) holds three shapes of one series, two of them at the same contexts.
MANY_SHAPES_DECODE = ([_decode_shape(b, c, 8, 32) for b in (1, 8, 32) for c in (2048, 16384)]
                      + [_decode_shape(32, c, 2, 64) for c in (2048, 16384)]
                      + [_decode_shape(32, 51200, 8, 32, "31x1024+1x51200"),
                         _decode_shape(8, 65536, 8, 32, RAGGED_LENGTHS, page=32)])


def many_variant_factors(n: int) -> dict[str, float]:
    """The baseline, its A/A control and ``n`` variants named like real ones; every third is
    the baseline's time (within noise), the others spread from 0.7x to 1.3x."""
    out = {"split": 1.0, "split_aa": 1.0}
    for i in range(n):
        out[f"token_balanced_variant_number_{i:02d}"] = 1.0 if i % 3 == 0 else 0.7 + 0.6 * i / max(n - 1, 1)
    return out


def many_variants_tree(root: Path, n: int = 24) -> Path:
    """A decode and a prefill experiment of ``n`` variants each (plus baseline and A/A control)
    over many shapes with long labels, peers of which one has only the ragged shapes (so it is
    absent from the first panels), stall records of a dozen benchmarks, and two prefill
    experiments 0.0005% apart (the close values an offset axis shows as "+5.788e2") at one shape."""
    factors = many_variant_factors(n)
    experiment_run(root, "decode_many_variants", "decode", "split", factors, MANY_SHAPES_DECODE, noise=0.002,
                   reps=6, context={"run_id": "many-decode"})
    peer_shapes = [{k: v for k, v in c.items() if k not in ("page_size", "_name")}
                   | {"_name": c["_name"].removesuffix("/page:{page_size}")} for c in MANY_SHAPES_DECODE]
    ragged = range(len(peer_shapes) - 2, len(peer_shapes))
    skipped = {("flashinfer", i): "skipped: not a ragged batch" for i in range(len(peer_shapes)) if i not in ragged}
    skipped |= {("sdpa_flash", i): "skipped: ragged batch" for i in ragged}
    experiment_run(root, "peers_decode", "decode", "sdpa_flash", {"sdpa_flash": 1.05, "flashinfer": 0.95},
                   peer_shapes, peer=True, seed=1, errors=skipped)
    prefill = [dict(c, causal=causal) for c in PREFILL_CONFIGS for causal in (0, 1)]
    experiment_run(root, "prefill_many_variants", "prefill", "split", factors, prefill, noise=0.002, reps=6, seed=3)
    experiment_run(root, "peers_prefill", "prefill", "sdpa_flash", {"sdpa_flash": 1.1}, prefill, peer=True, seed=4)
    one = [dict(PREFILL_CONFIGS[-1], head_dim=96)]
    experiment_run(root, "prefill_close_a", "prefill", "a", {"a": 1.0}, one, noise=0.0, seed=5)
    experiment_run(root, "prefill_close_b", "prefill", "b", {"b": 1.000005}, one, noise=0.0, seed=6)
    ctx = dict(DEVICE_CONTEXT, experiment="decode_many_variants", run_id="many-decode")
    names = [f"decode_many_variants/{v}/bf16/" + c["_name"].format(**{k: x for k, x in c.items() if not k.startswith("_")})
             for v in list(factors)[:4] for c in MANY_SHAPES_DECODE[-3:]]
    write_records(root / "h200" / "decode_many_variants" / "stalls-20261120T130000Z-0123456789.json", ctx,
                  stall_records(names, list(np.linspace(0.1, 0.6, len(names)))))
    return root
