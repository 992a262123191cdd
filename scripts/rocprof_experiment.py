#!/usr/bin/env python3
"""Stall records of an experiment's run on AMD, from rocprofv3, beside its results.

    python3 scripts/rocprof_experiment.py BENCH_BINARY --results-file RESULTS.json \\
        [--mode att|counters|both] [--kernel REGEX] [--benchmark NAME ...] [--rocprofv3 PATH]

For every benchmark that ran (status ok) in RESULTS.json (results/<device>/<experiment>/...),
or only those named with --benchmark, it runs BENCH_BINARY once more under rocprofv3 with
--schedlab_profile_once (the kernel runs once for the accuracy check, then once traced: the
second matching dispatch is the one kept) and writes records next to the results file:

  att       rocprofv3 --att (thread trace); each stats_ui_output_*.csv it writes goes through
            the existing parser (analysis/schedlab_analysis/att.py): memwait_share = latency on
            s_waitcnt / all latency, split by counter (memwait_vmcnt, memwait_lgkmcnt,
            memwait_vmcnt+lgkmcnt, memwait_other). One file stalls-<stamp>-<sha>.json, tool
            "rocprofv3 --att".
  counters  rocprofv3 --pmc with the SQ wave-cycle counters (AMD Instinct MI300 / MI350
            performance counter reference): SQ_WAVE_CYCLES (quad-cycles of resident waves),
            SQ_WAIT_ANY (waiting for anything: s_waitcnt, barriers, dependencies),
            SQ_WAIT_INST_ANY (ready but the instruction could not issue), SQ_ACTIVE_INST_ANY
            (issuing). Records: wait_any_share, wait_inst_any_share, active_inst_any_share
            (each over SQ_WAVE_CYCLES, per kernel dispatch) and the raw sums. These are not
            memwait_share (a wait on a barrier counts too) and are never written as it. One
            file stalls-<stamp>-<sha>.json, tool "rocprofv3 --pmc".

The raw profiler output stays in <results dir>/rocprof-<stamp>-<sha>/. The analysis loads
both files like the Nsight Compute ones (schedlab_analysis.load.load_records).

NEVER RUN ON AMD HARDWARE HERE: the commands follow the rocprofv3 documentation
(rocprofiler-sdk, "Using rocprofv3": --att, --pmc, --kernel-include-regex,
--kernel-iteration-range, -d, -f csv) and the parsers the documented CSV layouts; both are
tested against a stand-in rocprofv3 that writes fixture files (scripts/tests/test_rocprof_experiment.py).
Exit status: 0 when every benchmark gave records; 2 on bad arguments or input; 1 when
rocprofv3 failed or wrote nothing usable (nothing is written then).
"""
from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "analysis"))
from schedlab_analysis import att  # noqa: E402
from schedlab_analysis.load import ResultsFileError, benchmark_rows, read_json  # noqa: E402
from schedlab_analysis.ncu import benchmark_filter_for  # noqa: E402
from schedlab_analysis.stallfile import commit_tag, run_context, utc_stamp, write_stall_file  # noqa: E402

MODES = ("att", "counters", "both")
SQ_COUNTERS = ("SQ_WAVE_CYCLES", "SQ_WAIT_ANY", "SQ_WAIT_INST_ANY", "SQ_ACTIVE_INST_ANY")
# The kernels each family's benchmark times (the input fills and the reference are others).
DEFAULT_KERNELS = {"decode_": "paged_decode_kernel|decode_combine_kernel", "prefill_": "flash_prefill_kernel"}
ITERATION = 2  # with --schedlab_profile_once: the second matching dispatch (counted from 1)


class ProfileError(RuntimeError):
    pass


def default_kernel_regex(experiment: str) -> str | None:
    return next((regex for prefix, regex in DEFAULT_KERNELS.items() if experiment.startswith(prefix)), None)


def counters_command(binary: Path | str, benchmark_filter: str, out_dir: Path | str, kernel_regex: str, *,
                     rocprofv3: str = "rocprofv3") -> list[str]:
    """rocprofv3 counter collection of the SQ wave-cycle counters for one benchmark (argv)."""
    return [rocprofv3, "--pmc", *SQ_COUNTERS, "--kernel-include-regex", kernel_regex,
            "--kernel-iteration-range", str(ITERATION), "-f", "csv", "-d", str(out_dir), "--",
            str(binary), f"--benchmark_filter={benchmark_filter}", "--schedlab_profile_once"]


def read_counter_csv(path: Path) -> pd.DataFrame:
    """Per dispatch of a rocprofv3 ``*counter_collection.csv`` (one row per counter and
    dispatch, or per counter instance; instances are summed): Dispatch_Id, Kernel_Name and one
    column per counter."""
    try:
        raw = pd.read_csv(path)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as e:
        raise ProfileError(f"{path}: cannot read: {e}") from e
    need = {"Dispatch_Id", "Kernel_Name", "Counter_Name", "Counter_Value"}
    if not need <= set(raw.columns):
        raise ProfileError(f"{path}: missing column(s) {sorted(need - set(raw.columns))}; "
                           "is this a rocprofv3 counter_collection.csv?")
    raw["Counter_Value"] = pd.to_numeric(raw["Counter_Value"], errors="coerce")
    if raw["Counter_Value"].isna().any():
        raise ProfileError(f"{path}: non-numeric Counter_Value")
    table = raw.pivot_table(index=["Dispatch_Id", "Kernel_Name"], columns="Counter_Name", values="Counter_Value",
                            aggfunc="sum").reset_index()
    missing = [c for c in SQ_COUNTERS if c not in table.columns]
    if missing:
        raise ProfileError(f"{path}: counter(s) {missing} not collected")
    return table


def counter_records(table: pd.DataFrame, benchmark: str) -> list[dict]:
    recs = []
    for _, row in table.iterrows():
        cycles = float(row["SQ_WAVE_CYCLES"])
        rec = {"benchmark": benchmark, "tool": "rocprofv3 --pmc", "kernel": str(row["Kernel_Name"]),
               "dispatch_id": int(row["Dispatch_Id"])}
        rec.update({c.lower(): float(row[c]) for c in SQ_COUNTERS})
        for name, counter in (("wait_any_share", "SQ_WAIT_ANY"), ("wait_inst_any_share", "SQ_WAIT_INST_ANY"),
                              ("active_inst_any_share", "SQ_ACTIVE_INST_ANY")):
            rec[name] = float(row[counter]) / cycles if cycles > 0 else None
        recs.append(rec)
    return recs


def att_records(stats_files: list[Path], benchmark: str) -> list[dict]:
    table = pd.concat([att.memwait_breakdown(att.read_att_stats(f)) for f in stats_files], ignore_index=True)
    recs = []
    for _, row in table.iterrows():
        rec = {"benchmark": benchmark, "tool": "rocprofv3 --att", "stats_file": Path(row["source_file"]).name}
        rec.update({k: (v.item() if hasattr(v, "item") else v) for k, v in row.items() if k != "source_file"})
        recs.append(rec)
    return recs


def successful_benchmarks(results_file: Path) -> list[str]:
    names = []
    for r in benchmark_rows(results_file, read_json(results_file)):
        if r["status"] == "ok" and r["benchmark"] not in names:
            names.append(r["benchmark"])
    return names


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _run(cmd: list[str], log: Path) -> None:
    print("rocprof:", shlex.join(cmd), flush=True)
    with log.open("a") as f:
        f.write("$ " + shlex.join(cmd) + "\n")
        f.flush()
        done = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        raise ProfileError(f"rocprofv3 exited with {done.returncode}; see {log}")


def profile(binary: Path, results_file: Path, *, mode: str, kernel_regex: str, benchmarks: list[str],
            rocprofv3: str) -> list[Path]:
    """Runs rocprofv3 per benchmark and writes one stall file per mode; returns their paths."""
    context = run_context(results_file)
    raw_dir = results_file.parent / f"rocprof-{utc_stamp()}-{commit_tag(context)}"
    raw_dir.mkdir(parents=True, exist_ok=False)
    log = raw_dir / "rocprofv3.log"
    modes = ("att", "counters") if mode == "both" else (mode,)
    records: dict[str, list[dict]] = {m: [] for m in modes}
    for name in benchmarks:
        flt = benchmark_filter_for(name)
        if "att" in records:
            out = raw_dir / "att" / _safe(name)
            _run(att.rocprof_command(binary, flt, out, kernel_regex, iteration=ITERATION, rocprofv3=rocprofv3), log)
            stats = sorted(out.rglob("stats_ui_output_*.csv"))
            if not stats:
                raise ProfileError(f"rocprofv3 --att wrote no stats_ui_output_*.csv for {name} under {out}")
            records["att"].extend(att_records(stats, name))
        if "counters" in records:
            out = raw_dir / "counters" / _safe(name)
            _run(counters_command(binary, flt, out, kernel_regex, rocprofv3=rocprofv3), log)
            csvs = sorted(out.rglob("*counter_collection.csv"))
            if not csvs:
                raise ProfileError(f"rocprofv3 --pmc wrote no *counter_collection.csv for {name} under {out}")
            for csv in csvs:
                records["counters"].extend(counter_records(read_counter_csv(csv), name))
    empty = [m for m, recs in records.items() if not recs]
    if empty:
        raise ProfileError(f"{', '.join(empty)}: no kernel matching /{kernel_regex}/ was profiled")
    written = []
    for m, recs in records.items():
        extra = {"profiler": f"rocprofv3 ({'--att' if m == 'att' else '--pmc ' + ' '.join(SQ_COUNTERS)})",
                 "profiler_kernel_regex": kernel_regex, "profiler_raw_dir": str(raw_dir),
                 "profiler_iteration": ITERATION}
        if m == "att":
            extra["memwait_rule"] = "s_waitcnt latency / all instruction latency (schedlab_analysis.att)"
        written.append(write_stall_file(recs, context, results_file.parent, extra_context=extra))
    return written


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("binary", type=Path, help="the experiment's bench binary (build/hip/experiments/<e>/bench_<e>)")
    p.add_argument("--results-file", type=Path, required=True,
                   help="results/<device>/<experiment>/<stamp>-<sha>.json of a run of that binary")
    p.add_argument("--mode", choices=MODES, default="both")
    p.add_argument("--kernel", help="kernel-name regex to profile (default: by the experiment's family)")
    p.add_argument("--benchmark", action="append", default=[], help="only this benchmark (repeatable)")
    p.add_argument("--rocprofv3", default="rocprofv3", help="the rocprofv3 to run (default: on PATH)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if not args.binary.is_file():
            raise ProfileError(f"{args.binary}: no such binary")
        context = run_context(args.results_file)
        experiment = str(context.get("experiment") or args.results_file.parent.name)
        kernel = args.kernel or default_kernel_regex(experiment)
        if not kernel:
            raise ProfileError(f"no default kernel regex for experiment {experiment!r}: give --kernel")
        ran = successful_benchmarks(args.results_file)
        unknown = [b for b in args.benchmark if b not in ran]
        if unknown:
            raise ProfileError(f"not a successful benchmark of {args.results_file}: {', '.join(unknown)}")
        benchmarks = args.benchmark or ran
        if not benchmarks:
            raise ProfileError(f"{args.results_file}: no successful benchmark to profile")
    except (ProfileError, ResultsFileError) as e:
        print(f"rocprof_experiment: error: {e}", file=sys.stderr)
        return 2
    try:
        for path in profile(args.binary, args.results_file, mode=args.mode, kernel_regex=kernel,
                            benchmarks=benchmarks, rocprofv3=args.rocprofv3):
            print(f"wrote {path}")
    except (ProfileError, att.AttCsvError) as e:
        print(f"rocprof_experiment: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
