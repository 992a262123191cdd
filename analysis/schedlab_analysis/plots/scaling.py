"""Time and rates against the scaling axis (sequence length, context), one line per series
drawn, one column of panels per combination of the other axes."""
from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ..dataset import ExperimentView
from ..stats import config_label
from .bars import _RATES, error_bars, title
from .series import Selection, plotted_rows, scaling_axis, select_series, sortable
from .style import (FONT, LINE_H, add_note, chars_in, colors_for, figure_legend, is_peer, legend_height, line_count,
                    new_figure, note_height, plain_numbers, wrap_label)

_MAX_PANELS = 6
_PANEL_W = 3.6
_PANEL_H = 2.4


def common_layout(rows: pd.DataFrame) -> tuple[pd.DataFrame, object]:
    """Our rows at the most common page size (a layout, not a problem axis: the odd page-64
    shape would otherwise sit on the same line), peers kept; and that page size."""
    for col in ("page_size", "page"):
        if col in rows and rows[col].notna().any():
            ours = rows["peer"].fillna(0).astype(int) == 0
            mode = rows.loc[ours, col].mode()
            if len(mode):
                value = mode.iloc[0]
                keep = ~ours | (rows[col] == value)
                return rows[keep].copy(), int(value) if float(value).is_integer() else value
    return rows, None


def scaling_figure(view: ExperimentView, selection: Selection | None = None) -> Figure | None:
    """Time and rates against the scaling axis, one line per series drawn, one column per
    combination of the other axes (first few; the rest are counted in the title)."""
    axis = scaling_axis(view)
    rows = plotted_rows(view)
    if axis is None or rows.empty:
        return None
    selection = selection or select_series(view)
    # A configuration without the axis (a ragged batch beside a sweep over seq) is not on it.
    rows = rows[rows["series"].isin(selection.shown) & pd.to_numeric(rows[axis], errors="coerce").notna()]
    if rows.empty:
        return None
    rows, layout = common_layout(rows)
    others = [c for c in view.label_columns if c != axis and c not in ("page", "page_size")]
    rows["_other"] = [config_label(r, others) for _, r in rows.iterrows()]
    ordered = sorted((r for _, r in rows.iterrows()), key=lambda r: sortable(r, others))
    combos = list(dict.fromkeys(r["_other"] for r in ordered))
    shown = combos[:_MAX_PANELS]
    metrics = [(m, label) for m, label in _RATES if m in rows and rows[m].notna().any()]
    names = selection.shown
    colors = colors_for(names)
    width = max(_PANEL_W * len(shown) + 0.8, 8.0)
    titles = {c: wrap_label(c, chars_in(_PANEL_W - 0.5)) for c in shown}
    more = f" (first {len(shown)} of {len(combos)} combinations of the other axes)" if len(combos) > len(shown) else ""
    where = f"; our rows at page {layout}, peers on a contiguous cache" if layout is not None else ""
    heading = title(view, f"scaling over {axis}{more}{where}")
    note = selection.note()
    height = (_PANEL_H * len(metrics) + LINE_H * (max(map(line_count, titles.values()), default=1) + 2)
              + legend_height(names, width) + LINE_H * (line_count(heading) + 1) + note_height(note) + 0.3)
    fig = new_figure(width, height)
    axes = fig.subplots(max(len(metrics), 1), len(shown), squeeze=False)
    for col, combo in enumerate(shown):
        panel = rows[rows["_other"] == combo]
        for r, (metric, label) in enumerate(metrics):
            ax = axes[r][col]
            for name in names:
                s = panel[panel["series"] == name].sort_values(axis)
                if s.empty or not s[metric].notna().any():
                    continue
                ax.errorbar(s[axis].astype(float), s[metric], yerr=error_bars(s, metric), marker="o", ms=3,
                            capsize=2, color=colors[name], label=name, linestyle="--" if is_peer(name) else "-")
            ax.set_xscale("log", base=2)
            if metric == "time_us":
                ax.set_yscale("log")
            ax.grid(alpha=0.3)
            ax.tick_params(which="both", labelsize=FONT)
            plain_numbers(ax)
            if col == 0:
                ax.set_ylabel(label, fontsize=FONT + 1)
            if r == 0:
                ax.set_title(titles[combo], fontsize=FONT)
            if r == len(metrics) - 1:
                ax.set_xlabel(axis, fontsize=FONT + 1)
    figure_legend(fig, axes, names, heading=heading)
    add_note(fig, note)
    return fig
