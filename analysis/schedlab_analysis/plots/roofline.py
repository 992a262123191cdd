"""Each series' points (arithmetic intensity, TFLOP/s) under the measured ceilings."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ..dataset import ExperimentView
from .bars import title
from .series import Selection, plotted_rows, select_series
from .style import (FONT, LEGEND_ROW_H, LINE_H, add_note, colors_for, figure_legend, is_peer, line_count,
                    new_figure, note_height)


def roofline_figure(view: ExperimentView, selection: Selection | None = None) -> Figure | None:
    """Each series' points (arithmetic intensity, TFLOP/s) under the measured ceilings:
    copy bandwidth (context copy_bandwidth_GBps) and matrix peak (context matmul_tflops).
    A ceiling the data lacks is not drawn, and the title says so. The legend stands beside
    the axes, one column per 45 entries, so it never hides a point."""
    rows = plotted_rows(view)
    if rows.empty or not {"flops", "bytes"} <= set(rows.columns):
        return None
    selection = selection or select_series(view)
    rows = rows[(rows["flops"] > 0) & (rows["bytes"] > 0) & rows["tflops"].notna() & rows["series"].isin(selection.shown)]
    if rows.empty:
        return None
    ai = rows["flops"] / rows["bytes"]
    names = [n for n in selection.shown if n in set(rows["series"])]
    colors = colors_for(names)
    bw, peak = view.ceilings.copy_gbps, view.ceilings.matmul_tflops
    drawn = [c for c, v in (("copy bandwidth", bw), ("matrix peak", peak)) if v]
    missing = []
    if not bw:
        missing.append("copy bandwidth (no ctx copy_bandwidth_GBps)")
    if not peak:
        missing.append("matrix peak (no ctx matmul_tflops)")
    heading = "roofline; ceilings: " + (", ".join(drawn) or "none")
    if missing:
        heading += "\nnot drawn, absent from the data: " + "; ".join(missing)
    heading = title(view, heading)
    note = selection.note()
    legend_rows = min(len(names) + 2, 45)
    height = max(5.0, LEGEND_ROW_H * legend_rows + LINE_H * (line_count(heading) + 1) + note_height(note) + 0.5)
    fig = new_figure(9.5 if len(names) + 2 <= 45 else 12.0, height)
    ax = fig.subplots()
    x_lo, x_hi = ai.min() / 4, ai.max() * 4
    if bw:
        xs = np.geomspace(x_lo, x_hi if not peak else max(x_hi, peak * 1e3 / bw * 2), 200)
        ys = bw * 1e9 * xs / 1e12
        if peak:
            ys = np.minimum(ys, peak)
        ax.plot(xs, ys, color="black", linewidth=1, label=f"measured copy bandwidth {bw:.0f} GB/s")
    if peak:
        ax.axhline(peak, color="gray", linestyle="--", linewidth=1, label=f"measured matrix peak {peak:.0f} TFLOP/s")
    for name in names:
        s = rows[rows["series"] == name]
        ax.scatter(s["flops"] / s["bytes"], s["tflops"], color=colors[name], label=name, s=18,
                   marker="^" if is_peer(name) else "o", zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP / byte, declared work)", fontsize=FONT + 1)
    ax.set_ylabel("TFLOP/s (median)", fontsize=FONT + 1)
    ax.tick_params(which="both", labelsize=FONT)
    ax.grid(alpha=0.3, which="both")
    ax.set_title(heading, fontsize=FONT + 1)
    figure_legend(fig, [ax], names, loc="outside right upper")
    add_note(fig, note)
    return fig
