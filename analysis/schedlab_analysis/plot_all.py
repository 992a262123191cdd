"""Plot every experiment under a results directory.

    python -m schedlab_analysis.plot_all results [--out analysis/out]

Writes ``<out>/<device>/summary_<family>.png`` (the best variant of each experiment and the
peers across the shapes), ``<out>/<device>/<experiment>/<figure>.png`` and ``<out>/index.md``
(the figures and the runs that have no time: failed or skipped). Prints one line per experiment. Exits 2
when there are no benchmark results (or a file is malformed), naming what is wrong.
"""
from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

import matplotlib

from .dataset import Dataset
from .load import ResultsFileError
from .stats import DEFAULT_SEED

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "out"  # analysis/out (git-ignored)


def _index_section(device: str, experiment: str, written: dict[str, Path], out: Path,
                   failures: list[dict[str, str]], speedup_lines: list[str], provenance: str) -> list[str]:
    lines = [f"## {experiment} ({device})", "", provenance, ""]
    lines += [f"- [{name}]({path.relative_to(out).as_posix()})" for name, path in written.items()]
    if speedup_lines:
        lines += ["", "Speedups over the baseline:", ""] + [f"- {s}" for s in speedup_lines]
    if failures:
        lines += ["", "Runs without a time (not plotted):", "", "| status | variant | config | message |",
                  "| --- | --- | --- | --- |"]
        lines += [f"| {f['status']} | {f['variant']} | {f['config']} | {f['message'].replace('|', '/')} |"
                  for f in failures]
    return lines + [""]


def main(argv: list[str] | None = None) -> int:
    matplotlib.use("Agg")
    from . import plots  # after the backend is chosen

    p = argparse.ArgumentParser(prog="schedlab-plot-all", description=__doc__.split("\n")[0])
    p.add_argument("results_dir", nargs="+", type=Path, help="results directories or files")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output directory (default {DEFAULT_OUT})")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap RNG seed")
    args = p.parse_args(argv)

    missing = [d for d in args.results_dir if not d.exists()]
    if missing:
        print(f"plot_all: no such path: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    try:
        data = Dataset.load(args.results_dir, seed=args.seed)
    except ResultsFileError as e:
        print(f"plot_all: malformed results file: {e}", file=sys.stderr)
        return 2
    if data.empty:
        print(f"plot_all: no benchmark results (Google Benchmark JSON with 'benchmarks') under "
              f"{', '.join(map(str, args.results_dir))}; nothing to plot", file=sys.stderr)
        return 2

    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    index = ["# schedlab plots", "",
             f"Made by `python -m schedlab_analysis.plot_all` from {', '.join(map(str, args.results_dir))} "
             f"on {stamp}; each experiment from one run (the most complete clean run, newest on a tie); "
             f"bootstrap seed {args.seed}.", ""]
    # Each experiment viewed once (a view bootstraps every comparison), for its figures and the summaries.
    views = {(device, experiment): data.view(device, experiment) for device, experiment in data.experiments()}
    for device in sorted({d for d, _ in data.experiments()}):
        for family in data.families():
            fig = plots.family_summary_figure(data, device, family, views)
            if fig is None:
                continue
            path = plots.save(fig, out / device / f"summary_{family}.png")
            index += [f"## {family} summary ({device})", "", f"![{family} summary]({path.relative_to(out).as_posix()})", ""]
            print(f"plot_all: {device}: {family} summary figure", flush=True)
    for (device, experiment), view in views.items():
        figures = plots.experiment_figures(view)
        written = {name: plots.save(fig, out / device / experiment / f"{name}.png") for name, fig in figures.items()}
        index += _index_section(device, experiment, written, out, plots.failures(view), plots.format_speedups(view),
                                view.provenance())
        variants = view.ok["variant"].nunique()
        print(f"plot_all: {device}/{experiment}: {len(written)} figures ({', '.join(written)}), "
              f"{variants} variants, {view.peers['variant'].nunique()} peers, "
              f"{len(view.not_ok)} runs without a time", flush=True)
    (out / "index.md").write_text("\n".join(index), encoding="utf-8")
    print(f"plot_all: wrote {out / 'index.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
