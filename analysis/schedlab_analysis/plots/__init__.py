"""Figures for one experiment (an ``ExperimentView``) and one per family. Every series comes
from the data: the variants, peers, configurations, ceilings and stall reasons plotted are
the ones the results files contain. Failed and skipped runs are listed in a note, never
drawn as times; variants within the run's noise band everywhere are counted in a note, not
drawn (``series.select_series``).

One module per kind of figure (``bars``: rates and speedups; ``scaling``; ``roofline``;
``stalls``; ``summary``: the family figure) and ``style`` for what they share. Figures are
``matplotlib.figure.Figure`` objects made without pyplot, so nothing here depends on the
interactive backend; ``save`` writes PNGs (Agg).
"""
from __future__ import annotations

import math

import pandas as pd
from matplotlib.figure import Figure

from ..dataset import ExperimentView
from .bars import bars_figure, config_rows, speedup_figure
from .roofline import roofline_figure
from .scaling import scaling_figure
from .series import (Selection, failure_lines, failures, ordered_configs, plotted_rows, scaling_axis, select_series,
                     series_name, series_order)
from .stalls import stalls_figure
from .style import PEER_PREFIX, colors_for, figure_png, save
from .summary import best_variant, family_summary_figure

__all__ = ["PEER_PREFIX", "Selection", "bars_figure", "best_variant", "colors_for", "config_rows",
           "experiment_figures", "failure_lines", "failures", "family_summary_figure", "figure_png",
           "format_speedups", "ordered_configs", "plotted_rows", "roofline_figure", "save", "scaling_axis",
           "scaling_figure", "select_series", "series_name", "series_order", "speedup_figure", "stalls_figure",
           "summary_table"]

# (name, figure maker, whether it draws the selected series)
def _overlap_figure(view: ExperimentView):
    from ..unit_overlap import overlap_figure  # only runs with pair variants draw it
    return overlap_figure(view)


FIGURES = (("bars", bars_figure, True), ("speedup", speedup_figure, True), ("scaling", scaling_figure, True),
           ("roofline", roofline_figure, True), ("stalls", stalls_figure, False), ("overlap", _overlap_figure, False))


def experiment_figures(view: ExperimentView) -> dict[str, Figure]:
    """Every figure that the experiment's data supports, by name; all of them draw the same
    series, in the same colours."""
    selection = select_series(view)
    out = {}
    for name, make, selected in FIGURES:
        fig = make(view, selection) if selected else make(view)
        if fig is not None:
            out[name] = fig
    return out


def summary_table(view: ExperimentView) -> pd.DataFrame:
    """A compact table for notebooks and index.md: one row per run (peers included)."""
    frames = [f for f in (view.summary, view.peers) if not f.empty]
    if not frames:
        return pd.DataFrame()
    rows = pd.concat(frames, ignore_index=True)
    table = pd.DataFrame({
        "series": [series_name(r) for _, r in rows.iterrows()],
        "config": rows["config"],
        "status": rows["status"],
        "n": rows["n"],
        "time_us": rows["time_us"].round(2),
    })
    for rate in ("tflops", "gbps"):
        if rate in rows and rows[rate].notna().any():
            table[rate] = rows[rate].round(1)
    table["error"] = rows["error_message"].fillna("")
    return table


def format_speedups(view: ExperimentView) -> list[str]:
    """One sentence per comparison, for notebooks: 'streaming vs resident @ ...: 1.07x [1.05, 1.09]'."""
    lines = []
    for _, r in view.speedups.iterrows():
        ci = "" if math.isnan(r["ci_low"]) else f" [95% CI {r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        lines.append(f"{r['variant']} vs {r['baseline']} @ {r['config']}: {r['speedup']:.3f}x{ci} -> "
                     f"{r['verdict']} (band +-{r['band']:.1%})")
    return lines
