"""Markdown table of one experiment from one run: a row per configuration, a column per
variant (median TFLOP/s for prefill, TB/s for decode), each variant's change against the
baseline of the same run and configuration with its verdict under the one rule
(``stats.classify``: faster / slower only when the 95% interval lies beyond the band), and
the results files and run it came from.

    python -m schedlab_analysis.table results decode_kv_streaming [--device h200] [--run RUN]

Without ``--run`` the experiment's default run (``load.select_runs``) is shown; a results
file (or a run id) named as the results argument restricts it to that run. A results path that
does not exist, or an experiment with no results on the device, is an error (exit 2) that says
what there is.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from . import stats
from .dataset import Dataset, ExperimentView

REPO = Path(__file__).resolve().parents[2]
SHORT_VERDICT = {stats.FASTER: "faster", stats.SLOWER: "slower", stats.NO_DIFFERENCE: "no difference",
                 stats.NO_CI: "no interval"}


def rate_column(view: ExperimentView) -> tuple[str, str, float]:
    """(summary column, unit, divisor): TB/s for decode, TFLOP/s otherwise."""
    return ("gbps", "TB/s", 1e3) if view.family == "decode" else ("tflops", "TFLOP/s", 1.0)


def fmt_rate(value: float, decode: bool) -> str:
    return f"{value:.3g}" if decode else f"{value:.0f}"


def variants_in_order(ok: pd.DataFrame) -> list[str]:
    baseline = ok["baseline"].iloc[0]
    return [baseline] + sorted(v for v in ok["variant"].unique() if v != baseline)


def render_view(view: ExperimentView) -> str:
    ok = view.ok
    if ok.empty:
        return f"no timed results for {view.device_slug}/{view.experiment}"
    decode = view.family == "decode"
    column, unit, scale = rate_column(view)
    variants = variants_in_order(ok)
    baseline = variants[0]
    ok = ok.assign(rate=ok[column] / scale)
    sp = {(r["variant"], r["config"]): r for _, r in view.speedups.iterrows()}
    lines = ["| configuration | " + " | ".join(f"{v} ({unit})" for v in variants) + " |",
             "|---|" + "---|" * len(variants)]
    for config, rows in ok.groupby("config", sort=False):
        by_variant = {v: rows[rows["variant"] == v]["rate"].median() for v in variants}
        cells = []
        for v in variants:
            r = by_variant.get(v)
            if r is None or r != r:
                cells.append("-")
                continue
            cell = fmt_rate(r, decode)
            s = sp.get((v, config))
            if v != baseline and s is not None:
                cell += f" ({s['change'] * 100:+.1f}%, {SHORT_VERDICT.get(s['verdict'], s['verdict'])})"
            cells.append(cell)
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    lines += ["", footer(view)]
    return "\n".join(lines)


def footer(view: ExperimentView) -> str:
    files = sorted(set(map(display_path, view.summary["source_file"])))
    floor = (f"the run's A/A noise floor is {view.noise_floor:.2%}" if view.noise_floor
             else "this run has no A/A control")
    n = view.ok["n"].astype(int) if "n" in view.ok else pd.Series(dtype=int)
    reps = "" if n.empty else (f"{n.min()} " if n.min() == n.max() else f"{n.min()}-{n.max()} ")
    return (f"Median of {reps}repetitions of " + ", ".join(f"`{f}`" for f in files) + f" (run `{run_label(view.run)}`). "
            f"Changes against `{variants_in_order(view.ok)[0]}` in the same run; a change is called faster or "
            f"slower only when its 95% bootstrap interval lies beyond +-{view.band:.1%} ({floor}); otherwise "
            "no difference is detected at this noise floor.")


def display_path(path: object) -> str:
    """A results path as the READMEs cite it: relative to the repository when inside it."""
    p = Path(str(path))
    try:
        return p.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return str(path)


def run_label(run: str) -> str:
    """How a README names a run: its run id, or, for an older file that has none (the file is
    the run), the file's path as it is committed, so that the citation resolves (its name
    alone when it lies outside the repository)."""
    if not run.endswith((".json", ".json.gz")):
        return run
    shown = display_path(run)
    return Path(shown).name if Path(shown).is_absolute() else shown


def render(ds: Dataset, device: str, experiment: str, run: str | None = None) -> str:
    return render_view(ds.view(device, experiment, run))


def unknown_experiment(ds: Dataset, device: str, experiment: str) -> str | None:
    """Why ``experiment`` cannot be shown on ``device``, naming what there is; None when it can."""
    pairs = ds.experiments()
    if (device, experiment) in pairs:
        return None
    here = [e for d, e in pairs if d == device]
    if here:
        return f"no results of experiment {experiment!r} on {device}; its experiments: {', '.join(here)}"
    devices = sorted({d for d, _ in pairs})
    if devices:
        return (f"no results on device {device!r} (--device); devices with results: {', '.join(devices)}"
                + ("" if any(e == experiment for _, e in pairs) else f"; experiment {experiment!r} is on none"))
    return f"no benchmark results under {', '.join(map(str, ds.paths))}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="schedlab-table", description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="+", help="results directory, or the results files of one run")
    ap.add_argument("experiment")
    ap.add_argument("--device", default="h200")
    ap.add_argument("--run", help="a run id (or, for files without one, the results file's path)")
    args = ap.parse_args(argv)
    missing = [p for p in args.results if not Path(p).exists()]
    if missing:
        print(f"table: error: no such results file or folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    data = Dataset.load(args.results)
    why = unknown_experiment(data, args.device, args.experiment)
    if why:
        print(f"table: error: {why}", file=sys.stderr)
        return 2
    try:
        print(render(data, args.device, args.experiment, args.run))
    except (KeyError, stats.ComparisonError) as e:
        print(f"table: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
