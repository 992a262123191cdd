"""AMD thread trace (``rocprofv3 --att``) -> memory-wait share from ``s_waitcnt`` latency.

NOT RUN ON AMD HARDWARE HERE: this parser and ``rocprof_command`` follow the documented
format of ``stats_ui_output_agent_<agent>_dispatch_<n>.csv`` (rocprofiler-sdk thread-trace
decoder) and were tested on fixture files written from that format only.

The stats CSV has columns ``CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source``
(some releases spell the first ``Codeobj``), one row per instruction with cycle totals over
the traced waves. A row whose Instruction starts with ``;`` labels a kernel: its Source is
the kernel's demangled name and the rows after it belong to that kernel.

memwait_share (ATT) = Latency on ``s_waitcnt`` rows / Latency on all instruction rows, per
kernel. It is split by the counters the wait names:
  * ``vmcnt``          waits that name vmcnt only (vector memory: global/buffer loads);
  * ``lgkmcnt``        waits that name lgkmcnt only (LDS, scalar memory, messages);
  * ``vmcnt+lgkmcnt``  waits that name both, e.g. ``s_waitcnt vmcnt(2) lgkmcnt(0)``. A trace
                       cannot tell which counter the wave was held on, so a combined wait
                       is kept in its own bucket, never split or guessed;
  * ``other``          waits on expcnt / vscnt only.
expcnt / vscnt next to vmcnt or lgkmcnt do not change the bucket. A raw immediate
(``s_waitcnt 0``) is decoded with the gfx9 encoding (gfx942 / gfx950): vmcnt bits 3:0 and
15:14, expcnt 6:4, lgkmcnt 11:8; a field at its maximum is not waited on.

CLI:
  python -m schedlab_analysis.att command BINARY BENCHMARK --kernel REGEX --out-dir DIR
  python -m schedlab_analysis.att parse STATS.csv [...] [--kernel SUBSTRING]
"""
from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path

import pandas as pd

from .ncu import benchmark_filter_for

WAIT_BUCKETS = ("vmcnt", "lgkmcnt", "vmcnt+lgkmcnt", "other")
_COLUMNS = {"codeobj": "codeobj", "vaddr": "vaddr", "instruction": "instruction", "hitcount": "hitcount",
            "latency": "latency", "stall": "stall", "idle": "idle", "source": "source"}
_WAIT_RE = re.compile(r"^s_waitcnt(?:_(vmcnt|lgkmcnt|expcnt|vscnt))?(?:\s+(.*))?$")
_COUNTER_RE = re.compile(r"(vmcnt|lgkmcnt|expcnt|vscnt)\((\d+)\)")
# gfx9 simm16 fields: (name, extractor, maximum = "do not wait")
_GFX9_FIELDS = (
    ("vmcnt", lambda v: (v & 0xF) | ((v >> 14) & 0x3) << 4, 63),
    ("expcnt", lambda v: (v >> 4) & 0x7, 7),
    ("lgkmcnt", lambda v: (v >> 8) & 0xF, 15),
)


class AttCsvError(ValueError):
    pass


def parse_waitcnt(instruction: str) -> dict[str, int] | None:
    """Counters an ``s_waitcnt`` waits on: {'vmcnt': 2, 'lgkmcnt': 0}; None for any other
    instruction. Examples: ``s_waitcnt vmcnt(0)``, ``s_waitcnt vmcnt(2) lgkmcnt(0)``,
    ``s_waitcnt vmcnt(0) & lgkmcnt(0)``, ``s_waitcnt 0``, ``s_waitcnt_vscnt null, 0x0``."""
    m = _WAIT_RE.match(instruction.strip())
    if not m:
        return None
    suffix, operands = m.group(1), (m.group(2) or "").strip()
    if suffix:  # gfx10+ single-counter form: s_waitcnt_<counter> <sgpr|null>, <imm>
        imm = operands.split(",")[-1].strip() if operands else "0"
        return {suffix: int(imm, 0) if re.fullmatch(r"(0x[0-9a-fA-F]+|\d+)", imm) else 0}
    named = {name: int(value) for name, value in _COUNTER_RE.findall(operands)}
    if named:
        return named
    if re.fullmatch(r"(0x[0-9a-fA-F]+|\d+)", operands):
        value = int(operands, 0)
        return {name: get(value) for name, get, top in _GFX9_FIELDS if get(value) < top}
    return {}


def wait_bucket(counters: dict[str, int]) -> str:
    """Which WAIT_BUCKETS entry a wait's latency goes to (see module doc)."""
    vm, lgkm = "vmcnt" in counters, "lgkmcnt" in counters
    if vm and lgkm:
        return "vmcnt+lgkmcnt"
    if vm:
        return "vmcnt"
    if lgkm:
        return "lgkmcnt"
    return "other"


def read_att_stats(path: Path | str) -> pd.DataFrame:
    """Instruction rows of one stats CSV with lower-case columns plus ``kernel`` (from the
    preceding ``;`` label row; empty when the file has none) and ``wait`` (bucket or None)."""
    path = Path(path)
    try:
        raw = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, UnicodeDecodeError) as e:
        raise AttCsvError(f"{path}: cannot read: {e}") from e
    cols = {c: _COLUMNS.get(c.strip().lower()) for c in raw.columns}
    missing = sorted(set(_COLUMNS.values()) - set(cols.values()))
    if missing:
        raise AttCsvError(f"{path}: missing column(s) {missing}; is this a stats_ui_output_*.csv?")
    raw = raw.rename(columns=cols)[list(_COLUMNS.values())]
    kernel, kernels, keep = "", [], []
    for instruction, source in zip(raw["instruction"], raw["source"]):
        is_label = instruction.lstrip().startswith(";")
        if is_label:
            kernel = source.strip() or instruction.lstrip("; ").strip()
        kernels.append(kernel)
        keep.append(not is_label)
    raw["kernel"] = kernels
    df = raw[keep].reset_index(drop=True)
    for c in ("hitcount", "latency", "stall", "idle"):
        df[c] = pd.to_numeric(df[c], errors="coerce")
    if df[["latency"]].isna().any().any():
        raise AttCsvError(f"{path}: non-numeric Latency values")
    waits = df["instruction"].map(parse_waitcnt)
    df["wait"] = [wait_bucket(w) if w is not None else None for w in waits]
    df["source_file"] = str(path)
    return df


def memwait_breakdown(stats: pd.DataFrame, kernel: str | None = None) -> pd.DataFrame:
    """Per kernel: total latency, ``memwait_share`` and ``memwait_<bucket>`` shares (of all
    latency; the buckets add up to memwait_share). ``kernel`` keeps kernels whose name
    contains it."""
    if kernel:
        stats = stats[stats["kernel"].str.contains(kernel, regex=False)]
    out = []
    for (source, name), g in stats.groupby(["source_file", "kernel"], sort=False):
        total = float(g["latency"].sum())
        row = {"source_file": source, "kernel": name, "total_latency": total,
               "waitcnt_latency": float(g.loc[g["wait"].notna(), "latency"].sum())}
        row["memwait_share"] = row["waitcnt_latency"] / total if total else float("nan")
        for bucket in WAIT_BUCKETS:
            lat = float(g.loc[g["wait"] == bucket, "latency"].sum())
            row[f"memwait_{bucket}"] = lat / total if total else float("nan")
        out.append(row)
    return pd.DataFrame(out)


def rocprof_command(binary: Path | str, benchmark_filter: str, out_dir: Path | str, kernel_regex: str, *,
                    iteration: int = 2, rocprofv3: str = "rocprofv3") -> list[str]:
    """The rocprofv3 thread-trace command for one benchmark (argv list).

    With ``--schedlab_profile_once`` the kernel runs once for the accuracy check and once
    for the profiler: instance ``iteration=2`` (counted from 1) of the kernels matching
    ``kernel_regex`` is traced. Not run on AMD hardware here.
    """
    if not kernel_regex:
        raise ValueError("kernel_regex is required")
    return [rocprofv3, "--att", "--kernel-include-regex", kernel_regex,
            "--kernel-iteration-range", str(iteration), "-d", str(out_dir), "--",
            str(binary), f"--benchmark_filter={benchmark_filter}", "--schedlab_profile_once"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m schedlab_analysis.att", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("command", help="print the rocprofv3 --att command for one benchmark")
    c.add_argument("binary")
    c.add_argument("benchmark")
    c.add_argument("--kernel", required=True)
    c.add_argument("--out-dir", required=True)
    r = sub.add_parser("parse", help="memwait shares of stats CSVs")
    r.add_argument("csv", nargs="+")
    r.add_argument("--kernel", help="keep kernels whose name contains this")
    args = p.parse_args(argv)
    try:
        if args.cmd == "command":
            print(shlex.join(rocprof_command(args.binary, benchmark_filter_for(args.benchmark),
                                             args.out_dir, args.kernel)))
        else:
            table = pd.concat([memwait_breakdown(read_att_stats(f), args.kernel) for f in args.csv],
                              ignore_index=True)
            print(table.to_string(index=False))
    except AttCsvError as e:
        print(f"att: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
