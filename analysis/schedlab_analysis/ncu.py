"""Nsight Compute (``ncu --csv --page raw``) -> warp-stall shares per kernel launch.

Raw-page CSV as ncu 2025.3 writes it (checked on the H200): optional ``==PROF==`` /
``==WARNING==`` lines and application output, a header row starting ``"ID"`` (ID, Process
ID, Process Name, Host Name, Kernel Name, Context, Stream, Block Size, Grid Size, Device,
CC, then one column per metric), a units row (empty for the fixed columns; ``ns``,
``cycle``, ``inst``, ...), then one row per profiled launch. Numbers carry thousands
separators (``"217,088"``).

Share of a stall reason = (warps stalled for that reason per issued instruction) / (warp
latency per issued instruction), both as ncu reports them; the shares of all reasons,
``selected`` included, add up to about 1.

CLI:
  python -m schedlab_analysis.ncu command BINARY BENCHMARK --kernel REGEX --out-csv F
  python -m schedlab_analysis.ncu parse CSV [--benchmark NAME --results-file F --write]
  python -m schedlab_analysis.ncu profile BINARY --results-file F --kernel REGEX [--ncu PATH]
"""
from __future__ import annotations

import argparse
import csv
import io
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from .load import benchmark_rows, read_json, ResultsFileError, strip_manual_time
from .stallfile import commit_tag, run_context, utc_stamp, write_stall_file

METRIC_TIME = "gpu__time_duration.sum"
METRIC_LATENCY = "smsp__average_warp_latency_per_inst_issued.ratio"

# Every warp-stall reason ncu reports per issued instruction on sm_90 (``ncu --query-metrics
# --chip gh100``); ``gmma`` (waiting on a warpgroup MMA) exists on Hopper only.
STALL_REASONS = (
    "long_scoreboard", "short_scoreboard", "lg_throttle", "mio_throttle", "barrier", "wait",
    "math_pipe_throttle", "not_selected", "selected", "dispatch_stall", "drain", "imc_miss",
    "branch_resolving", "no_instruction", "sleeping", "membar", "tex_throttle", "misc", "gmma",
)

MEMWAIT_REASONS = ("long_scoreboard", "short_scoreboard", "lg_throttle", "mio_throttle")
"""The stall reasons that make up ``memwait_share`` (the one definition; README documents it).

memwait_share = (long_scoreboard + short_scoreboard + lg_throttle + mio_throttle) / total,
where each term is ``smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio`` and
total is ``smsp__average_warp_latency_per_inst_issued.ratio`` (all stall cycles per issued
instruction). Why these four: long_scoreboard waits on global/local memory (L1TEX) results,
short_scoreboard on shared memory / MIO results, lg_throttle on a full global/local memory
queue, mio_throttle on a full shared-memory/MIO queue: together, the time warps spend
waiting for memory operations to finish or to be accepted.
"""

_TIME_UNITS_NS = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6,
                  "s": 1e9, "second": 1e9}


def stall_metric(reason: str) -> str:
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


def ncu_metrics() -> list[str]:
    return [METRIC_TIME, METRIC_LATENCY] + [stall_metric(r) for r in STALL_REASONS]


def parse_number(text: object) -> float:
    """'217,088' -> 217088.0; '' or 'n/a' -> NaN."""
    if isinstance(text, (int, float)):
        return float(text)
    s = str(text).strip().replace(",", "")
    try:
        return float(s)
    except ValueError:
        return float("nan")


class NcuCsvError(ValueError):
    pass


def read_ncu_csv(source: Path | str) -> tuple[pd.DataFrame, dict[str, str]]:
    """Rows of a raw-page CSV (strings, as written) and the units per column.

    ``source`` is a path or the CSV text itself. Lines before the ``"ID",...`` header (ncu
    banners, application output) are skipped.
    """
    path = Path(source) if not (isinstance(source, str) and "\n" in source) else None
    text = path.read_text(encoding="utf-8", errors="replace") if path else str(source)
    where = str(path) if path else "ncu CSV text"
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise NcuCsvError(f"{where}: no raw-page header row (\"ID\",...); was ncu run with --csv --page raw?")
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header = rows[0]
    if "Kernel Name" not in header:
        raise NcuCsvError(f"{where}: header has no 'Kernel Name' column")
    body = [r for r in rows[1:] if r]
    units: dict[str, str] = {}
    if body and body[0][0] == "":  # the units row: first (ID) cell empty
        units = {h: u for h, u in zip(header, body[0]) if u}
        body = body[1:]
    body = [r for r in body if len(r) == len(header)]
    return pd.DataFrame(body, columns=header), units


def stall_breakdown(raw: pd.DataFrame, units: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per profiled launch: ``id``, ``kernel``, ``gpu_time_ns``,
    ``warp_latency_per_inst``, ``stall_<reason>`` (share of total), ``memwait_share`` and
    ``share_sum`` (sum of the reasons present; near 1 when none is missing)."""
    units = units or {}
    if METRIC_LATENCY not in raw.columns:
        raise NcuCsvError(f"CSV lacks {METRIC_LATENCY}; profile with ncu_metrics()")
    scale = _TIME_UNITS_NS.get(units.get(METRIC_TIME, "ns"))
    if scale is None:
        raise NcuCsvError(f"unknown unit {units[METRIC_TIME]!r} for {METRIC_TIME}")
    out = pd.DataFrame({"id": raw["ID"].map(parse_number).astype("Int64"), "kernel": raw["Kernel Name"]})
    time = raw[METRIC_TIME].map(parse_number) if METRIC_TIME in raw else np.nan
    out["gpu_time_ns"] = time * scale
    total = raw[METRIC_LATENCY].map(parse_number)
    out["warp_latency_per_inst"] = total
    present = [r for r in STALL_REASONS if stall_metric(r) in raw.columns]
    missing = [r for r in MEMWAIT_REASONS if r not in present]
    if missing:
        raise NcuCsvError(f"CSV lacks the memwait reasons {missing}")
    for reason in present:
        out[f"stall_{reason}"] = raw[stall_metric(reason)].map(parse_number) / total
    out["memwait_share"] = sum(out[f"stall_{r}"] for r in MEMWAIT_REASONS)
    out["share_sum"] = sum(out[f"stall_{r}"] for r in present)
    return out


def parse_ncu_csv(source: Path | str) -> pd.DataFrame:
    raw, units = read_ncu_csv(source)
    return stall_breakdown(raw, units)


def benchmark_filter_for(benchmark: str) -> str:
    """An anchored --benchmark_filter that selects exactly this benchmark."""
    return "^" + re.escape(strip_manual_time(benchmark)) + "(/manual_time)?$"


def ncu_command(binary: Path | str, benchmark_filter: str, out_csv: Path | str, kernel_regex: str, *,
                launch_skip: int = 1, launch_count: int = 1, metrics: list[str] | None = None,
                ncu: str = "ncu") -> list[str]:
    """The ncu command line (argv list) that profiles one launch of one benchmark.

    With ``--schedlab_profile_once`` the harness launches each configuration's kernel once
    for the accuracy check and once more for the profiler, with no timing loop; so
    ``launch_skip=1`` over launches matching ``kernel_regex`` picks the second, on a warm
    binary but with ncu's own cache control. ``benchmark_filter`` should select one
    benchmark (``benchmark_filter_for``). ncu's report goes to ``out_csv`` (``--log-file``);
    the benchmark's own output stays on stdout. Clocks are left alone (DEVICE.md).
    """
    if not kernel_regex:
        raise ValueError("kernel_regex is required: without it the launch count includes "
                         "the input-fill kernels")
    return [ncu, "--clock-control", "none", "--csv", "--page", "raw", "--print-units", "base",
            "--metrics", ",".join(metrics or ncu_metrics()),
            "--launch-skip", str(launch_skip), "--launch-count", str(launch_count),
            "-k", f"regex:{kernel_regex}", "--log-file", str(out_csv),
            str(binary), f"--benchmark_filter={benchmark_filter}", "--schedlab_profile_once"]


def records_for(breakdown: pd.DataFrame, benchmark: str) -> list[dict]:
    """Stall-file records (one per profiled launch) for ``benchmark``."""
    recs = []
    for _, row in breakdown.iterrows():
        rec = {"benchmark": strip_manual_time(benchmark), "tool": "ncu"}
        rec.update({k: (v.item() if hasattr(v, "item") else v) for k, v in row.items() if not pd.isna(v)})
        rec["id"] = int(row["id"]) if not pd.isna(row["id"]) else None
        recs.append(rec)
    return recs


def _ncu_version(ncu: str) -> str:
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    lines = [line for line in out.splitlines() if line.strip()]
    return lines[-1].strip() if lines else "unknown"


def _run_benchmarks(results_file: Path) -> list[str]:
    rows = benchmark_rows(results_file, read_json(results_file))
    names = []
    for r in rows:
        if r["status"] == "ok" and r["benchmark"] not in names:
            names.append(r["benchmark"])
    return names


def profile(binary: Path, results_file: Path, kernel_regex: str, *, benchmarks: list[str] | None = None,
            ncu: str = "ncu", raw_dir: Path | None = None) -> Path:
    """Profile every successful benchmark of ``results_file`` (or ``benchmarks``) once with
    ncu and write one stall file beside the results file. Raw CSVs are kept in ``raw_dir``
    (default: ``<run dir>/ncu-<stamp>-<sha>/``)."""
    context = run_context(results_file)
    names = benchmarks or _run_benchmarks(results_file)
    if not names:
        raise ResultsFileError(results_file, "no successful benchmark to profile")
    raw_dir = raw_dir or results_file.parent / f"ncu-{utc_stamp()}-{commit_tag(context)}"
    raw_dir.mkdir(parents=True, exist_ok=True)
    records = []
    for name in names:
        out_csv = raw_dir / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".csv")
        cmd = ncu_command(binary, benchmark_filter_for(name), out_csv, kernel_regex, ncu=ncu)
        print("ncu:", shlex.join(cmd), flush=True)
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL)
        if done.returncode != 0:
            raise RuntimeError(f"ncu exited with {done.returncode} for {name}; see {out_csv}")
        breakdown = parse_ncu_csv(out_csv)
        if breakdown.empty:
            raise RuntimeError(f"ncu profiled no launch of /{kernel_regex}/ in {name}; see {out_csv}")
        records.extend(records_for(breakdown, name))
    extra = {"profiler": f"ncu {_ncu_version(ncu)}", "profiler_metrics": ",".join(ncu_metrics()),
             "profiler_kernel_regex": kernel_regex, "profiler_raw_dir": str(raw_dir),
             "memwait_reasons": ",".join(MEMWAIT_REASONS)}
    return write_stall_file(records, context, results_file.parent, extra_context=extra)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m schedlab_analysis.ncu", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("command", help="print the ncu command for one benchmark")
    c.add_argument("binary")
    c.add_argument("benchmark", help="benchmark name (anchored into a filter)")
    c.add_argument("--kernel", required=True, help="regex of the kernel to profile")
    c.add_argument("--out-csv", required=True)
    c.add_argument("--launch-skip", type=int, default=1)
    r = sub.add_parser("parse", help="stall shares from a raw CSV; --write adds a stall file")
    r.add_argument("csv")
    r.add_argument("--benchmark", help="benchmark the launches belong to (needed with --write)")
    r.add_argument("--results-file", help="the run's results JSON (context and output directory)")
    r.add_argument("--write", action="store_true")
    f = sub.add_parser("profile", help="profile every benchmark of a run (needs a GPU and ncu)")
    f.add_argument("binary")
    f.add_argument("--results-file", required=True)
    f.add_argument("--kernel", required=True)
    f.add_argument("--benchmark", action="append", help="only these (repeatable)")
    f.add_argument("--ncu", default="ncu")
    args = p.parse_args(argv)
    try:
        if args.cmd == "command":
            print(shlex.join(ncu_command(args.binary, benchmark_filter_for(args.benchmark), args.out_csv,
                                         args.kernel, launch_skip=args.launch_skip)))
        elif args.cmd == "parse":
            table = parse_ncu_csv(args.csv)
            cols = ["id", "kernel", "gpu_time_ns", "memwait_share"] + [
                c for c in table.columns if c.startswith("stall_")]
            print(table[cols].to_string(index=False))
            if args.write:
                if not (args.benchmark and args.results_file):
                    p.error("--write needs --benchmark and --results-file")
                res = Path(args.results_file)
                path = write_stall_file(records_for(table, args.benchmark), run_context(res), res.parent,
                                        extra_context={"profiler": "ncu (parsed from " + args.csv + ")",
                                                       "memwait_reasons": ",".join(MEMWAIT_REASONS)})
                print(f"wrote {path}")
        else:
            path = profile(Path(args.binary), Path(args.results_file), args.kernel,
                           benchmarks=args.benchmark, ncu=args.ncu)
            print(f"wrote {path}")
    except (NcuCsvError, ResultsFileError, RuntimeError, ValueError) as e:
        print(f"ncu: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
