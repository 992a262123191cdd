"""Grouped bar charts over the configurations: the family's rate per variant and peer
(``bars``) and each variant's speedup over its baseline with its bootstrap interval
(``speedup``). The configurations are split over rows of panels; every row is as tall as its
wrapped configuration labels need, so a label never reaches the panel below.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..dataset import ExperimentView
from .series import Selection, failure_lines, ordered_configs, plotted_rows, select_series
from .style import (FONT, LINE_H, add_note, chars_in, colors_for, figure_legend, is_peer, legend_height,
                    line_count, new_figure, note_height, plain_numbers, wrap_label)

_RATES = (("time_us", "time (us)"), ("tflops", "TFLOP/s"), ("gbps", "GB/s"))
_BOUNDS = {"time_us": ("time_lo", "time_hi"), "tflops": ("tflops_lo", "tflops_hi"), "gbps": ("gbps_lo", "gbps_hi")}
# resources.json fields shown next to a variant (max over its kernels), as scripts/resource_report.py names them.
_RESOURCE_FIELDS = (("registers", "regs"), ("vgpr_total", "vgpr"), ("spill_store_bytes", "B spilled"),
                    ("vgpr_spill_regs", "vgpr spilled"), ("occupancy", "occupancy"))

# Bars per panel row: beyond this a bar can no longer be told from its neighbours, so the
# configurations are split over several rows of panels.
_BARS_PER_ROW = 40
_FIG_WIDTH = 13.0
_AXES_WIDTH = _FIG_WIDTH - 1.0      # the y label and tick labels take the rest
# A configuration's label is wrapped to its slot on the x axis; below this width a slot holds
# too few characters a line, so fewer configurations go in a row.
_MIN_SLOT_IN = 1.1
_PANEL_IN = 2.2                     # the bars' own height in a panel


def config_rows(configs: list[str], series: int, width_in: float = _AXES_WIDTH) -> list[list[str]]:
    """The configurations split into rows of at most ``_BARS_PER_ROW`` bars and at most as
    many labels as the row's width holds, the rows as even as they can be."""
    per_row = min(max(2, _BARS_PER_ROW // max(series, 1)), max(1, int(width_in // _MIN_SLOT_IN)))
    n_rows = math.ceil(len(configs) / per_row) if configs else 1
    per_row = math.ceil(len(configs) / n_rows) if configs else 1
    return [configs[k:k + per_row] for k in range(0, len(configs), per_row)] or [[]]


def _wrapped(configs: list[str], per_row: int) -> list[str]:
    return [wrap_label(c, chars_in(0.92 * _AXES_WIDTH / max(per_row, 1))) for c in configs]


def error_bars(rows: pd.DataFrame, metric: str, bounds: tuple[str, str] | None = None) -> np.ndarray:
    """2xN distances from the centre to the spread's ends (0 where there is no spread)."""
    lo, hi = bounds or _BOUNDS[metric]
    y = rows[metric].to_numpy(float)
    err = np.vstack([y - rows[lo].to_numpy(float), rows[hi].to_numpy(float) - y])
    return np.clip(np.nan_to_num(err), 0, None)


def _grouped_bars(ax, rows: pd.DataFrame, names: list[str], colors: dict, configs: list[str], labels: list[str],
                  metric: str, bounds: tuple[str, str], legend_notes: dict[str, str]) -> None:
    bar_w = 0.8 / max(len(names), 1)
    centres, tops, errs = [], [], []
    for i, name in enumerate(names):
        sub = rows[rows["series"] == name].drop_duplicates("config", keep="last").set_index("config")
        present = [c for c in configs if c in sub.index and np.isfinite(sub.at[c, metric])]
        if not present:
            continue
        pos = np.array([configs.index(c) for c in present]) + (i - (len(names) - 1) / 2) * bar_w
        y = sub.loc[present, metric].to_numpy(float)
        label = name + (f" [{legend_notes[name]}]" if name in legend_notes else "")
        ax.bar(pos, y, bar_w, color=colors[name], label=label, hatch="//" if is_peer(name) else None,
               edgecolor="black", linewidth=0.3)
        centres.append(pos), tops.append(y), errs.append(error_bars(sub.loc[present], metric, bounds))
    if centres:  # one call for the panel's error bars: one per series costs as much as the bars
        ax.errorbar(np.concatenate(centres), np.concatenate(tops), yerr=np.hstack(errs), fmt="none",
                    ecolor="black", elinewidth=0.6, capsize=1.5)
    ax.set_xticks(np.arange(len(configs)))
    ax.set_xticklabels(labels, fontsize=FONT)
    ax.set_xlim(-0.6, len(configs) - 0.4)
    ax.tick_params(axis="y", labelsize=FONT)
    ax.grid(axis="y", alpha=0.3)
    plain_numbers(ax)


def _bar_panels(rows: pd.DataFrame, names: list[str], configs: list[str], *, metric: str, bounds: tuple[str, str],
                ylabel: str, title: str, note: list[str], legend_notes: dict[str, str] | None = None,
                band: float | None = None, empty: str = "no successful runs to plot") -> Figure:
    """Rows of grouped-bar panels; the figure's height is the sum of the rows' panels and
    their wrapped labels, the legend and the note."""
    colors = colors_for(names)
    chunks = config_rows(configs, len(names))
    per_row = max(len(c) for c in chunks)
    wrapped = dict(zip(configs, _wrapped(configs, per_row)))
    label_lines = [max((line_count(wrapped[c]) for c in chunk), default=1) for chunk in chunks]
    legend_labels = [n + (f" [{legend_notes[n]}]" if legend_notes and n in legend_notes else "") for n in names]
    height = (sum(_PANEL_IN + 0.25 + LINE_H * n for n in label_lines) + legend_height(legend_labels, _FIG_WIDTH)
              + LINE_H * (line_count(title) + 1) + note_height(note) + 0.3)
    fig = new_figure(_FIG_WIDTH, height)
    axes = fig.subplots(len(chunks), 1, squeeze=False)[:, 0]
    if names and len(rows):
        for ax, chunk in zip(axes, chunks):
            _grouped_bars(ax, rows, names, colors, chunk, [wrapped[c] for c in chunk], metric, bounds,
                          legend_notes or {})
            if band is not None:
                ax.axhspan(1 - band, 1 + band, color="gray", alpha=0.2, linewidth=0)
                ax.axhline(1.0, color="black", linewidth=0.8)
            ax.set_ylabel(ylabel, fontsize=FONT + 1)
    else:
        axes[0].text(0.5, 0.5, empty, ha="center", va="center", transform=axes[0].transAxes)
        axes[0].set_axis_off()
    figure_legend(fig, axes, names, heading=title)
    add_note(fig, note)
    return fig


def _primary_rate(view: ExperimentView, rows: pd.DataFrame) -> tuple[str, str]:
    """The family's rate: GB/s for decode (bandwidth-bound), TFLOP/s otherwise; time if none."""
    order = ("gbps", "tflops") if view.family == "decode" else ("tflops", "gbps")
    for metric in order:
        if metric in rows and rows[metric].notna().any():
            return metric, dict(_RATES)[metric]
    return "time_us", "time (us)"


def resource_notes(view: ExperimentView) -> dict[str, str]:
    """variant -> 'sm_90a: 168 regs, 0 spills' from the static report, for the device's arch."""
    res = view.resources
    arch = str(view.summary.get("ctx_arch", pd.Series([""])).dropna().iloc[0]) if (
        "ctx_arch" in view.summary and view.summary["ctx_arch"].notna().any()) else ""
    if res.empty or not arch:
        return {}
    res = res[res["target"].astype(str).str.startswith(arch)]
    notes = {}
    for variant, g in res.groupby("variant"):
        parts = []
        for col, name in _RESOURCE_FIELDS:
            values = pd.to_numeric(g[col], errors="coerce").dropna() if col in g else pd.Series(dtype=float)
            if len(values):
                parts.append(f"{values.max():.3g} {name}")
        if parts:
            notes[str(variant)] = f"{g['target'].iloc[0]}: " + ", ".join(parts)
    return notes


def title(view: ExperimentView, what: str) -> str:
    fixed = f" [{view.fixed_axes}]" if view.fixed_axes else ""
    return f"{view.experiment} ({view.device_slug}){fixed}\n{what}"


def bars_figure(view: ExperimentView, selection: Selection | None = None) -> Figure:
    """The family's rate (GB/s for decode, TFLOP/s for prefill) per configuration, one bar per
    series drawn (``select_series``), IQR error bars; the configurations split over rows of
    panels so every label can be read. Times are in the scaling figure and index.md."""
    selection = selection or select_series(view)
    rows = plotted_rows(view)
    metric, label = _primary_rate(view, rows) if len(rows) else ("time_us", "time (us)")
    rows = rows[rows["series"].isin(selection.shown)] if len(rows) else rows
    has_metric = len(rows) and metric in rows and rows[metric].notna().any()
    names = selection.shown if has_metric else []
    notes = failure_lines(view)
    note = (selection.note() + view.provenance().split(" | ")
            + (["Runs without a time (not plotted):"] + notes if notes else []))
    spread = sorted({str(s) for s in rows.get("spread_kind", pd.Series(dtype=object)).dropna()})
    return _bar_panels(rows, names, ordered_configs(view), metric=metric, bounds=_BOUNDS[metric], ylabel=label,
                       title=title(view, f"{label}, median over repetitions; error bars: " + ("; ".join(spread) or "n/a")),
                       note=note, legend_notes=resource_notes(view))


def speedup_figure(view: ExperimentView, selection: Selection | None = None) -> Figure | None:
    """Speedup of each variant drawn over its baseline per configuration, bootstrap 95% CI,
    with the run's practical band (1% or the A/A floor) shaded: inside it no difference is
    detected. Variants inside it at every configuration are named in the note, not drawn."""
    sp = view.speedups
    if sp.empty:
        return None
    selection = selection or select_series(view)
    baseline_of = dict(zip(sp["variant"], sp["baseline"]))
    variants = [v for v in selection.shown if v in baseline_of]
    configs = [c for c in ordered_configs(view) if c in set(sp["config"])]
    rows = sp[sp["variant"].isin(variants)]
    rows = rows.assign(series=[f"{v} / {b}" for v, b in zip(rows["variant"], rows["baseline"])])
    names = [f"{v} / {baseline_of[v]}" for v in variants]
    methods = "; ".join(sorted(set(sp["method"])))
    what = (f"baseline time / variant time ({methods}); shaded: +-{selection.band:.1%}, "
            "no difference detected inside it")
    return _bar_panels(rows, names, configs, metric="speedup", bounds=("ci_low", "ci_high"), ylabel="speedup",
                       title=title(view, what), note=selection.note(), band=selection.band,
                       empty="no variant differs from its baseline beyond the band (the note names them)")
