"""Which unit of the SM a kernel keeps busy: Nsight Compute's pipe utilization, as
``scripts/device_ncu_pipes.sh`` records it (``ncu --csv --page raw`` with the SpeedOfLight,
ComputeWorkloadAnalysis and MemoryWorkloadAnalysis sections), one profiled launch per file.

Each figure is a share of the SM's active cycles (the ``pct_of_peak_sustained_active`` form):
the tensor pipe (wgmma, mma.sync), the transcendental unit XU (MUFU: exp2 of the softmax), the
FMA and ALU pipes, and instruction issue; beside them the SM clock the kernel ran at
(``sm__cycles_elapsed.avg.per_second``, clocks left alone) and the L1 / L2 throughput. Two
units near their peak together say the kernel is bound by both; two well under it, that their
work does not overlap.

CLI: python -m schedlab_analysis.ncu_pipes CSV [CSV ...]   (prints the table)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from .ncu import parse_number, read_ncu_csv

# (column, metric, scale): scale turns the metric into the column's unit.
PIPES = (
    ("time_us", "gpu__time_duration.sum", 1e-3),
    ("sm_clock_ghz", "sm__cycles_elapsed.avg.per_second", 1e-9),
    ("tensor_pct", "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active", 1.0),
    ("xu_pct", "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active", 1.0),
    ("fma_pct", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active", 1.0),
    ("alu_pct", "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active", 1.0),
    # Instructions issued per active cycle over the SM's four schedulers (one each a cycle).
    ("issue_pct", "sm__inst_issued.avg.per_cycle_active", 25.0),
    ("l1_pct", "l1tex__throughput.avg.pct_of_peak_sustained_active", 1.0),
    ("l2_pct", "lts__throughput.avg.pct_of_peak_sustained_elapsed", 1.0),
)
LABELS = {"time_us": "time (us)", "sm_clock_ghz": "SM clock (GHz)", "tensor_pct": "tensor pipe",
          "xu_pct": "XU (exp2)", "fma_pct": "FMA", "alu_pct": "ALU", "issue_pct": "issue",
          "l1_pct": "L1 / shared", "l2_pct": "L2"}


class PipesError(ValueError):
    pass


def _benchmark(path: Path) -> str:
    """``<experiment>/pipes-<stamp>-<commit>-<variant>-<dtype>[-<shape>].csv`` -> ``<experiment>/<variant>
    <dtype> [<shape>] (<stamp>)``: which kernel, and when it was profiled."""
    parts = path.stem.split("-")
    if len(parts) <= 3:
        return path.stem
    return f"{path.parent.name}/{' '.join(parts[3:])} ({parts[1]})"


def read_pipes(path: Path | str) -> dict[str, float]:
    """One file's figures (the first profiled launch); a metric the file lacks is an error."""
    path = Path(path)
    raw, units = read_ncu_csv(path)
    if raw.empty:
        raise PipesError(f"{path}: no profiled launch")
    row = raw.iloc[0]
    out: dict[str, float] = {}
    for column, metric, scale in PIPES:
        if metric not in raw.columns:
            raise PipesError(f"{path}: no column {metric} (was it written by scripts/device_ncu_pipes.sh?)")
        value = parse_number(row[metric])
        if column == "time_us" and units.get(metric, "ns") not in ("ns", "nsecond"):
            raise PipesError(f"{path}: {metric} in {units.get(metric)!r}, expected ns")
        out[column] = value * scale
    return out


def pipes_table(paths: list[Path | str]) -> pd.DataFrame:
    rows = [{"kernel": _benchmark(Path(p)), **read_pipes(p)} for p in paths]
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    cols = [c for c, _, _ in PIPES]
    head = "| kernel | " + " | ".join(LABELS[c] for c in cols) + " |"
    lines = [head, "|" + "---|" * (len(cols) + 1)]
    for _, r in table.iterrows():
        cells = [f"{r['time_us']:.0f}", f"{r['sm_clock_ghz']:.3f}"] + [f"{r[c]:.0f}%" for c in cols[2:]]
        lines.append(f"| {r['kernel']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m schedlab_analysis.ncu_pipes", description=__doc__.split("\n")[0])
    p.add_argument("files", nargs="+", metavar="CSV", help="pipes-*.csv written by scripts/device_ncu_pipes.sh")
    args = p.parse_args(argv)
    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        p.error("no such file: " + ", ".join(missing))
    try:
        print(markdown(pipes_table(args.files)))
    except PipesError as e:
        p.error(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
