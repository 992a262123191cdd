"""One configuration timed in several processes (``scripts/device_repeat_processes.sh``): does its
spread follow the device allocation its inputs landed in?

Each process builds its case once and times its repetitions in sequence, so they share one set
of allocations; the interleaved run rebuilds the case for every repetition (new allocations
each time). A peer's runs (FlashInfer, one process each) sit beside them. The files live under
``results/<device>/allocations/<experiment>/<run>/`` (``process-<k>``, ``interleaved``,
``<peer>-<k>`` results files), out of the directory scans that find an experiment's runs.

- ``process_times(files)``: one row per (file, benchmark): its source (the file's name without
  the results suffix), the variant or peer, the configuration, and the repetitions' median,
  lowest and highest time (us) and count.
- ``spread_table(rows)``: one row per variant and configuration: the medians of its processes,
  the widest spread within one process and the spread between the processes' medians. (Our
  repetitions are means of many launches each; a peer's, single launches, so its spread within
  a process is launch-to-launch jitter.)
- ``markdown(files)``: that table and what it says.

CLI: python -m schedlab_analysis.allocations FILE...
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

from .load import is_results_name, read_json, results_stem

_PROCESS = re.compile(r"^(?P<kind>.+?)-(?P<k>\d+)$")


def _source(path: Path) -> str:
    """``process-3.json.gz`` -> ``process-3``."""
    return results_stem(Path(path).name)


def process_times(files: list[Path | str]) -> pd.DataFrame:
    rows = []
    for f in map(Path, files):
        if not is_results_name(f.name):
            raise ValueError(f"{f}: not a results file")
        data = read_json(f)
        if not isinstance(data, dict) or "benchmarks" not in data:
            raise ValueError(f"{f}: no benchmarks")
        times: dict[str, list[float]] = {}
        for b in data["benchmarks"]:
            if b.get("run_type") != "iteration" or b.get("error_occurred"):
                continue
            name = re.sub(r"(/iterations:\d+)?/manual_time$", "", b["name"])
            times.setdefault(name, []).append(float(b["real_time"]))
        if not times:
            raise ValueError(f"{f}: no timed repetition")
        for name, t in times.items():
            parts = name.split("/")
            s = pd.Series(t)
            rows.append({"source": _source(f), "variant": parts[1], "config": "/".join(parts[2:]),
                         "median_us": s.median(), "min_us": s.min(), "max_us": s.max(), "reps": len(t)})
    return pd.DataFrame(rows)


def spread_table(rows: pd.DataFrame) -> pd.DataFrame:
    out = []
    for (variant, config), g in rows.groupby(["variant", "config"], sort=False):
        # Processes: every source but the interleaved run (one process, rebuilt every repetition).
        procs = g[g["source"].map(lambda s: bool(_PROCESS.match(s)))]
        within = ((procs["max_us"] - procs["min_us"]) / procs["median_us"]).max()
        medians = procs.sort_values("source", key=lambda c: c.map(lambda s: int(_PROCESS.match(s)["k"])))["median_us"]
        between = (medians.max() - medians.min()) / medians.min() if len(medians) > 1 else float("nan")
        inter = g[g["source"] == "interleaved"]
        out.append({"variant": variant, "config": config, "processes": len(medians),
                    "process_medians_us": list(medians.round(1)), "within": within, "between": between,
                    "interleaved_us": (f"{inter['min_us'].iloc[0]:.1f}-{inter['max_us'].iloc[0]:.1f}"
                                       if not inter.empty else "")})
    return pd.DataFrame(out)


def markdown(files: list[Path | str]) -> str:
    t = spread_table(process_times(files))
    lines = ["| variant | configuration | medians of its processes (us) | widest spread within one "
             "process | spread between processes | interleaved repetitions (us) |",
             "|---|---|---|---|---|---|"]
    for _, r in t.iterrows():
        between = "" if pd.isna(r["between"]) else f"{100 * r['between']:.1f}%"
        lines.append(f"| {r['variant']} | {r['config']} | {', '.join(f'{x:.1f}' for x in r['process_medians_us'])} "
                     f"| {100 * r['within']:.1f}% | {between} | {r['interleaved_us']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    try:
        print(markdown(args.files))
    except (ValueError, OSError) as e:
        print(f"allocations: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
