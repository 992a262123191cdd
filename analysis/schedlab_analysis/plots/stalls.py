"""Stacked stall-reason shares per profiled benchmark and in-kernel probe wait-point shares.
Every profiled row is drawn (the profiler was asked for these rows, not for a sweep)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..dataset import ExperimentView
from ..ncu import MEMWAIT_REASONS
from .bars import title
from .style import FONT, LINE_H, colors_for, figure_legend, line_count, new_figure, plain_numbers

_ROW_IN = 0.22          # inches per stacked bar (a row label of FONT fits with room)


def _stall_columns(stalls: pd.DataFrame) -> list[str]:
    cols = [c for c in stalls.columns if c.startswith("stall_") and stalls[c].notna().any()]
    mem = [f"stall_{r}" for r in MEMWAIT_REASONS if f"stall_{r}" in cols]
    rest = sorted((c for c in cols if c not in mem), key=lambda c: -stalls[c].fillna(0).mean())
    return mem + rest


def _kernel_function(name: object) -> str:
    """'void ns::f<...>(Params)' -> 'f'."""
    head = str(name).split("<")[0].split("(")[0].strip()
    return head.split()[-1].split("::")[-1] if head else ""


def _row_labels(records: pd.DataFrame, view: ExperimentView) -> list[str]:
    rows = view.stall_rows if len(view.stall_rows) else view.summary
    by_bench = {b: r for b, r in zip(rows["benchmark"], rows.to_dict("records"))}
    # A run of several kernels (decode and its split combine) gets one row per kernel, named.
    several = "kernel" in records and records.groupby("benchmark")["kernel"].transform("count").gt(1)
    labels = []
    for i, (_, rec) in enumerate(records.iterrows()):
        r = by_bench.get(rec["benchmark"])
        label = f"{r['variant']} @ {r['config']}" if r else str(rec["benchmark"])
        if several is not False and bool(several.iloc[i]):
            label += f" [{_kernel_function(rec['kernel'])}]"
        labels.append(label)
    return labels


def _panel(view: ExperimentView, panel: str, wait_cols: list[str]):
    """(records, columns, shares, legend labels, hatched columns, memwait shares, title)."""
    if panel == "stalls":
        recs = view.stalls.sort_values("benchmark")
        cols = _stall_columns(recs)
        memwait = recs["memwait_share"].to_numpy(float) if "memwait_share" in recs else None
        tools = sorted({str(t) for t in recs.get("tool", pd.Series(dtype=object)).dropna()}) or ["stall file"]
        return (recs, cols, recs[cols].fillna(0.0).to_numpy(float), [c.removeprefix("stall_") for c in cols],
                {f"stall_{r}" for r in MEMWAIT_REASONS}, memwait,
                f"stall shares ({', '.join(tools)}); hatched = memwait reasons")
    recs = view.probes.sort_values("benchmark")
    total = pd.to_numeric(recs["total_cycles"], errors="coerce").to_numpy(float)
    shares = recs[wait_cols].fillna(0.0).to_numpy(float) / total[:, None]
    return (recs, wait_cols, shares, [c.removeprefix("wait_") for c in wait_cols], set(), None,
            "in-kernel probe: cycles at each wait point / total cycles")


def stalls_figure(view: ExperimentView) -> Figure | None:
    """Stacked stall-reason shares per benchmark (ncu / ATT stall files; the memwait reasons
    first, hatched) and, when probe files exist, the in-kernel wait-point shares; one legend
    of every reason beside the panels."""
    panels = ["stalls"] if not view.stalls.empty else []
    wait_cols = [c for c in view.probes.columns if c.startswith("wait_") and c != "wait_cycles_share"] \
        if not view.probes.empty else []
    if wait_cols:
        panels.append("probes")
    if not panels:
        return None
    data = [_panel(view, p, wait_cols) for p in panels]
    heading = title(view, "where the cycles wait (each panel's x label says what it counts)")
    height = sum(_ROW_IN * len(d[0]) + 0.9 for d in data) + LINE_H * (line_count(heading) + 1) + 0.3
    fig = new_figure(12, max(height, 2.5))
    axes = fig.subplots(len(panels), 1, squeeze=False, height_ratios=[max(len(d[0]), 2) for d in data])[:, 0]
    colors = colors_for([label for d in data for label in d[3]])
    for ax, (recs, cols, shares, labels, hatched, memwait, what) in zip(axes, data):
        y = np.arange(len(recs))
        left = np.zeros(len(recs))
        for j, (col, label) in enumerate(zip(cols, labels)):
            ax.barh(y, shares[:, j], left=left, color=colors[label], label=label,
                    hatch="xx" if col in hatched else None, edgecolor="white", linewidth=0.3)
            left += shares[:, j]
        row_labels = _row_labels(recs, view)
        if memwait is not None:  # in the row's label, where no legend can cover it
            row_labels = [f"{lab} (memwait {m:.0%})" if np.isfinite(m) else lab for lab, m in zip(row_labels, memwait)]
        ax.set_yticks(y)
        ax.set_yticklabels(row_labels, fontsize=FONT)
        ax.set_ylim(len(recs) - 0.5, -0.5)
        ax.set_xlim(0, max(1.0, float(left.max()) if len(left) else 1.0))
        ax.tick_params(axis="x", labelsize=FONT)
        plain_numbers(ax, percent_x=True)
        ax.set_xlabel(what, fontsize=FONT + 1)
    figure_legend(fig, axes, list(colors), heading=heading, loc="outside right upper")
    return fig
