#!/usr/bin/env python3
"""Bring a device run's results.tgz (scripts/device_full.sh) into results/.

- Benchmark results files are copied to results/<device>/<experiment>/ (never over a file),
  the sweep summaries (scripts/sweep.py) to results/<device>/sweeps/, and the decode gates'
  seed sweeps (schedlab_gpu_tests_decode --seed_sweep, PHASE=seeds) to results/<device>/seed_sweep/.
- Each ncu CSV (results/ncu/<benchmark name with '/' as '+'>.csv) becomes records of
  a stalls-*.json beside its experiment's results, with the run's provenance.
- Probe-build runs become probes-*.json records (their perturbed timings are not kept).
- The harness's median time for each profiled benchmark is set beside ncu's kernel time
  (the sum of gpu__time_duration over the kernels of one run) in
  results/<device>/harness_vs_ncu/<stamp>-<commit>.json; agreement means within 3%.

    python3 scripts/ingest_device_results.py RESULTS_TGZ [--results results]
"""
from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
import tarfile
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
from schedlab_analysis import ncu, probes  # noqa: E402
from schedlab_analysis.load import is_results_name, read_json, results_stem  # noqa: E402
from schedlab_analysis.stallfile import run_context, utc_stamp, commit_tag, write_stall_file  # noqa: E402

AGREEMENT_TOLERANCE = 0.03  # harness and ncu kernel times agree within 3%


def copy_new(src: Path, dest: Path) -> None:
    """Copies src to dest unless an identical file is there; a different one is an error."""
    if dest.exists():
        if dest.read_bytes() != src.read_bytes():
            raise SystemExit(f"{dest} exists and differs: results are never written over")
        print(f"already  {dest}")
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)
    print(f"summary  {dest}")


def write_gzip(data: bytes, dest: Path) -> None:
    """Deterministic gzip (no name, no timestamp in the header): the same run gives the same bytes."""
    with open(dest, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as z:
        z.write(data)


def copy_results(stage: Path, results: Path) -> dict[tuple[str, str], Path]:
    """Copies every benchmark results file; returns (device, experiment) -> newest copy."""
    newest: dict[tuple[str, str], Path] = {}
    # An older build timed in the same call (scripts/device_full.sh, .carry/old) writes
    # results/<device>/builds/<experiment>/: stored alike, but never an experiment's newest.
    for f in sorted((stage / "results").glob("*/builds/*/*.json")):
        dest = results / f.parts[-4] / "builds" / f.parts[-2] / (f.name + ".gz")
        store_compressed(f, dest)
    for f in sorted((stage / "results").glob("*/*/*.json")):
        device, experiment = f.parts[-3], f.parts[-2]
        if experiment == "sweeps":  # scripts/sweep.py's summary of the run: kept as it is
            copy_new(f, results / device / experiment / f.name)
            continue
        if experiment == "seed_sweep":  # the decode gates' seed sweep (kernels/tests/seed_sweep_decode.cpp)
            if not read_json(f).get("records"):
                print(f"skipped  {f.name}: no seed sweep records")
                continue
            store_compressed(f, results / device / experiment / (f.name + ".gz"))
            continue
        if not read_json(f).get("benchmarks"):
            print(f"skipped  {f.name}: no benchmark records")
            continue
        # Committed compressed: the tree travels to the device with every call (load.py reads both).
        dest = results / device / experiment / (f.name + ".gz")
        store_compressed(f, dest)
        newest[(device, experiment)] = dest
    return newest


def store_compressed(f: Path, dest: Path) -> None:
    """f gzip-compressed at dest; the same archive ingested again (with a later one of the same
    session) is fine, a different file of that name is an error: results are never written over."""
    if dest.exists():
        if gzip.decompress(dest.read_bytes()) != f.read_bytes():
            raise SystemExit(f"{dest} exists and differs: results are never written over")
        print(f"already  {dest}")
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_gzip(f.read_bytes(), dest)
    print(f"results  {dest}")


def median_us(results_file: Path, benchmark: str) -> float | None:
    for b in read_json(results_file).get("benchmarks", []):
        if b.get("aggregate_name") == "median" and ncu.strip_manual_time(b.get("run_name", "")) == benchmark:
            scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b.get("time_unit", "us")]
            return b["real_time"] * scale
    return None


def run_time(context: dict) -> datetime | None:
    """When the run happened (Google Benchmark's context date), so a file derived from it
    later sorts with its run, not with the day it was derived."""
    try:
        return datetime.fromisoformat(str(context["date"])).astimezone(timezone.utc)
    except (KeyError, ValueError):
        return None


def newest_on_disk(results: Path, device: str, experiment: str) -> Path | None:
    """The newest committed results file of an experiment (profiles of a run that did not
    re-time it attach to it)."""
    files = sorted((p for p in (results / device / experiment).glob("2*.json*")
                    if is_results_name(p.name) and read_json(p).get("benchmarks")),
                   key=lambda p: results_stem(p.name))
    return files[-1] if files else None


def ncu_run_times_us(csv: Path, kernels_per_run: int) -> list[float]:
    """Per-run kernel time (us) from a timing pass: consecutive groups of the run's kernels."""
    raw, units = ncu.read_ncu_csv(csv)
    scale = {"ns": 1e-3, "us": 1.0, "usecond": 1.0, "nsecond": 1e-3, "ms": 1e3}[units.get(ncu.METRIC_TIME, "ns")]
    times = [ncu.parse_number(v) * scale for v in raw[ncu.METRIC_TIME]]
    return [sum(times[i:i + kernels_per_run]) for i in range(0, len(times) - kernels_per_run + 1, kernels_per_run)]


def ingest_ncu(stage: Path, results: Path, newest: dict, profiled_build: str | None = None) -> list[dict]:
    rows = []
    attached: list[Path] = []  # the results files the profiles attach to
    # device_full.sh writes the CSVs to results/ncu/ (the device is the one the run's results name)
    devices = sorted({d for d, _ in newest})
    if not devices:  # a profiles-only archive: the one device that has results
        known = sorted(p.name for p in results.iterdir() if p.is_dir() and p.name != "static") if results.is_dir() else []
        devices = known if len(known) == 1 else []
        if len(known) > 1:
            print(f"ncu      skipped: a profiles-only archive and several devices under {results} ({known})")
    for device_dir, device in [(stage / "results" / "ncu", d) for d in devices[:1]]:
        if not device_dir.is_dir():
            continue
        by_experiment: dict[str, list[dict]] = {}
        for csv in sorted(device_dir.glob("*.csv")):
            benchmark = csv.stem.replace("+", "/")  # device_full.sh names the CSV after it
            experiment = benchmark.split("/")[0]
            try:
                breakdown = ncu.parse_ncu_csv(csv)
            except ncu.NcuCsvError as e:  # a profile that did not run: say so, keep going
                print(f"ncu      skipped {csv.name}: {e}")
                continue
            by_experiment.setdefault(experiment, []).extend(ncu.records_for(breakdown, benchmark))
            run = newest.get((device, experiment)) or newest_on_disk(results, device, experiment)
            harness = median_us(run, benchmark) if run else None
            kernels_per_run = len(breakdown)
            kernel_us = float(breakdown["gpu_time_ns"].sum()) / 1e3
            timing = device_dir.parent / "ncu_time" / csv.name
            runs_us = ncu_run_times_us(timing, kernels_per_run) if timing.exists() else []
            if runs_us:
                kernel_us = float(np.median(runs_us))
            rows.append({"benchmark": benchmark, "kernels": list(breakdown["kernel"]), "ncu_kernel_us": kernel_us,
                         "ncu_runs_us": runs_us, "ncu_time_source": "median of the timing pass" if runs_us
                         else "the stall pass's single run",
                         "harness_median_us": harness,
                         "ratio": harness / kernel_us if harness else None,
                         "agrees": harness is not None and abs(harness / kernel_us - 1) <= AGREEMENT_TOLERANCE,
                         "memwait_share_main_kernel": float(breakdown["memwait_share"].iloc[0])})
        for experiment, records in by_experiment.items():
            run = newest.get((device, experiment)) or newest_on_disk(results, device, experiment)
            if run is None:
                print(f"ncu      {experiment}: no results file of this run to attach to; skipped")
                continue
            attached.append(run)
            extra = {"profiler": "ncu --clock-control none, one run per variant"}
            if profiled_build:  # profiles of a separate build, attached to the run they re-profile
                extra["profiled_build"] = profiled_build
            path = write_stall_file(records, run_context(run), run.parent, extra_context=extra)
            print(f"stalls   {path}")
        if rows:
            ctx = run_context(next(iter(newest.values())) if newest else attached[0])
            ctx["tolerance"] = str(AGREEMENT_TOLERANCE)
            if profiled_build:
                ctx["profiled_build"] = profiled_build
            out = results / device / "harness_vs_ncu" / f"{utc_stamp()}-{commit_tag(ctx)}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps({"context": ctx, "records": rows}, indent=1))
            print(f"agreement {out}")
    return rows


def ingest_probes(stage: Path, results: Path) -> None:
    for f in sorted((stage / "probe_runs").glob("*/*/*.json")):
        device, experiment = f.parts[-3], f.parts[-2]
        records = probes.probe_records(read_json(f))
        if records:
            ctx = run_context(f)
            path = write_stall_file(records, ctx, results / device / experiment, kind="probes", now=run_time(ctx),
                                    extra_context={"probes": "in-kernel cycle counter at wait points (separate build)"})
            print(f"probes   {path}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tgz", type=Path, nargs="+", help="archives of one device session, oldest first")
    ap.add_argument("--results", type=Path, default=Path("results"))
    ap.add_argument("--profiled-build", help="for a profiles-only archive: the build that was profiled "
                    "(commit, and why its kernels are those of the results it attaches to)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        stage = Path(tmp)
        for tgz in args.tgz:
            with tarfile.open(tgz) as tar:
                tar.extractall(stage)
        newest = copy_results(stage, args.results)
        rows = ingest_ncu(stage, args.results, newest, args.profiled_build)
        ingest_probes(stage, args.results)
    for r in rows:
        h = f"{r['harness_median_us']:.1f}" if r["harness_median_us"] else "-"
        print(f"{r['benchmark']:70s} harness {h:>8} us  ncu {r['ncu_kernel_us']:8.1f} us  "
              f"memwait {r['memwait_share_main_kernel']:.2f}  {'agrees' if r['agrees'] else 'DIFFERS'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
