"""One figure per family and device: the best variant of each experiment and the peers over
the scaling axis, one panel per combination of the main axes (batch, head_dim, causal,
dtype). A line joins the points of one shape only: where a series has several shapes in a
panel (other heads, ragged lengths, ...), each is a line of its own with its own marker,
named in the panel's small legend."""
from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.transforms import offset_copy

from ..stats import config_label, is_control
from .series import sortable
from .style import (FONT, LINE_H, PEER_PREFIX, chars_in, colors_for, figure_legend, honest_ylim, is_peer,
                    legend_height, new_figure, plain_numbers, wrap_label)

_FACET_AXES = ("batch", "head_dim", "causal", "dtype")
_LAYOUT_AXES = ("page", "page_size")
_MARKERS = "osD^vP*Xh<>p"
_PANEL_W, _PANEL_H = 4.4, 2.8


def best_variant(view, metric: str) -> str | None:
    """The variant with the highest geometric-mean ``metric`` over the configurations every
    variant of the run measured (A/A controls excluded)."""
    ok = view.ok[~view.ok["variant"].map(is_control)]
    ok = ok[ok[metric].notna() & (ok[metric] > 0)]
    if ok.empty:
        return None
    common = set.intersection(*(set(g["config"]) for _, g in ok.groupby("variant")))
    ok = ok[ok["config"].isin(common)] if common else ok
    score = ok.groupby("variant")[metric].apply(lambda x: float(np.exp(np.log(x).mean())))
    return str(score.idxmax())


def _family_rows(data, device: str, family: str, metric: str, views: dict | None) -> tuple[pd.DataFrame, list[str], list[str]]:
    """The best variant's rows of each experiment and every peer's, each at its most common
    page size (a layout, not a shape); the runs used; the problem axes met."""
    frames, runs, axes = [], [], set()
    for dev, experiment in data.experiments(family):
        if dev != device:
            continue
        view = (views or {}).get((dev, experiment)) or data.view(dev, experiment)
        if view.ok.empty or metric not in view.ok:
            continue
        peer = bool(int(view.ok["peer"].fillna(0).iloc[0] or 0))
        variants = sorted(set(view.ok["variant"])) if peer else [best_variant(view, metric)]
        for v in filter(None, variants):
            rows = view.ok[view.ok["variant"] == v].copy()
            rows["series"] = (PEER_PREFIX + v) if peer else f"{experiment}: {v}"
            for layout in _LAYOUT_AXES:
                if layout in rows and rows[layout].notna().any():
                    rows = rows[rows[layout] == rows[layout].mode().iloc[0]]
            frames.append(rows)
        axes.update(c for c in view.config_columns if c not in _LAYOUT_AXES)
        runs.append(f"{experiment} @ {str(view.run).rsplit('/', 1)[-1]}")
    rows = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return rows, runs, sorted(axes)


def _tied_to(rows: pd.DataFrame, column: str, x: str) -> bool:
    """Whether ``column``, where recorded, is set by the scaling axis in every series: the
    same axis under another name (``seq`` beside ``seq_len``), or the prefill batch, which
    keeps batch x seq_len (the tokens) fixed. Such a column changes along a line, not
    between lines."""
    if not pd.api.types.is_numeric_dtype(rows[column]):
        return False
    rec = rows[rows[column].notna()]
    value, scale = rec[column].astype(float), rec[x].astype(float)
    same = bool((value == scale).all())
    product = (value * scale).groupby(rec["series"]).nunique()
    return same or bool((product == 1).all())


def _varies(rows: pd.DataFrame, column: str) -> bool:
    """Two values within one series (a missing one counts: uniform lengths beside ragged
    ones), or two recorded values across series (an axis a peer does not record is no
    difference of shape)."""
    within = rows.groupby("series")[column].nunique(dropna=False).max() > 1
    return bool(within or rows[column].nunique() > 1)


def shape_columns(rows: pd.DataFrame, axes: list[str], x: str, facets: list[str]) -> list[str]:
    """The problem axes besides the scaling axis and the panels' axes that tell one shape of
    a series from another in a panel."""
    return [c for c in axes if c != x and c not in facets and c in rows and _varies(rows, c)
            and not _tied_to(rows, c, x)]


def family_summary_figure(data, device: str, family: str, views: dict | None = None) -> Figure | None:
    """One figure per family: the best variant of each experiment (in its default run) and the
    peers, over the scaling axis, one panel per combination of the main axes, one line per
    series and shape. The family's rate on the y axis (TB/s for decode, TFLOP/s otherwise).
    ``views`` ((device, experiment) -> ExperimentView) saves viewing an experiment twice."""
    metric, label = ("gbps", "TB/s") if family == "decode" else ("tflops", "TFLOP/s")
    rows, runs, axes = _family_rows(data, device, family, metric, views)
    if rows.empty:
        return None
    # A reference kernel far below the rest (the naive end-to-end check) would flatten every
    # panel: series under a tenth of the best median rate are named in the footer instead.
    level = rows.groupby("series")[metric].median()
    slow = sorted(level[level < 0.1 * level.max()].index)
    rows = rows[~rows["series"].isin(slow)].copy()
    if slow:
        runs.append("left out, under a tenth of the best rate: " + ", ".join(slow))
    xs = [c for c in ("context", "seq_len", "seq") if c in rows and rows[c].notna().any()]
    if not xs:
        return None
    x = xs[0]
    rows = rows[rows[x].notna()]
    # An axis set by the scaling axis (the prefill batch, which keeps the tokens fixed) is no facet.
    facets = [c for c in _FACET_AXES if c in rows and rows[c].nunique() > 1 and rows.groupby(x)[c].nunique().max() > 1]
    shapes = shape_columns(rows, axes, x, facets)
    rows["_facet"] = [config_label(r, facets) for _, r in rows.iterrows()]
    rows["_shape"] = [config_label(r, shapes) if shapes else "" for _, r in rows.iterrows()]
    panels = sorted(set(rows["_facet"]), key=lambda f: sortable(rows[rows["_facet"] == f].iloc[0], facets))
    ncols = 2 if len(panels) == 4 else min(len(panels), 3)
    nrows = math.ceil(len(panels) / ncols)
    names = list(dict.fromkeys(sorted(s for s in rows["series"] if not is_peer(s))
                               + sorted(s for s in rows["series"] if is_peer(s))))
    colors = colors_for(names)
    width = _PANEL_W * ncols + 0.8
    footer = textwrap.wrap("runs: " + "; ".join(runs), 150)
    shape_lines = [_shape_legend_lines(rows[rows["_facet"] == p]) for p in panels]
    per_row = [max(shape_lines[k:k + ncols], default=0) for k in range(0, len(panels), ncols)]
    height = (sum(_PANEL_H + LINE_H * (n + 2) for n in per_row) + legend_height(names, width)
              + 0.15 + LINE_H * (len(footer) + 3))
    fig = new_figure(width, height)
    axs = fig.subplots(nrows, ncols, squeeze=False)
    for k, facet in enumerate(panels):
        ax = axs[k // ncols][k % ncols]
        _panel(ax, rows[rows["_facet"] == facet], names, colors, x, metric)
        ax.set_title(facet, fontsize=FONT + 1)
        ax.set_xlabel(x, fontsize=FONT + 1)
        ax.set_ylabel(label, fontsize=FONT + 1)
    for k in range(len(panels), nrows * ncols):
        axs[k // ncols][k % ncols].set_axis_off()
    figure_legend(fig, axs, names, heading=f"{family} on {device}: the best variant of each experiment (geometric "
                                           "mean over its run's shapes) and the peers; one line per shape")
    fig.get_layout_engine().set(rect=(0, LINE_H * (len(footer) + 1) / height, 1, 1 - LINE_H * (len(footer) + 1) / height))
    fig.text(0.01, 0.005, "\n".join(footer), fontsize=FONT - 1, va="bottom", ha="left", family="monospace")
    return fig


def _shape_order(panel: pd.DataFrame) -> list[str]:
    """The panel's shapes, the one with the most points first (it gets the plain marker)."""
    counts = panel.groupby("_shape").size()
    return sorted(counts.index, key=lambda s: (-counts[s], s))


def _shape_legend_lines(panel: pd.DataFrame) -> int:
    order = _shape_order(panel)
    return 0 if len(order) < 2 else sum(wrap_label(s, chars_in(_PANEL_W - 0.6)).count("\n") + 1 for s in order)


def _panel(ax, panel: pd.DataFrame, names: list[str], colors: dict, x: str, metric: str) -> None:
    """One line per series and shape; a legend of the shapes' markers under the axes when the
    panel holds more than one shape."""
    order = _shape_order(panel)
    marker = {s: _MARKERS[i % len(_MARKERS)] for i, s in enumerate(order)}
    scale = 1e3 if metric == "gbps" else 1.0
    for name in names:
        for shape in order:
            s = panel[(panel["series"] == name) & (panel["_shape"] == shape)].sort_values(x)
            if s.empty:
                continue
            line, = ax.plot(s[x].astype(float), s[metric].astype(float) / scale, marker=marker[shape], ms=3.5,
                            color=colors[name], label=name, linestyle="--" if is_peer(name) else "-")
            line.set_gid(f"{name}\n{shape}")
    ax.set_xscale("log", base=2)
    ax.tick_params(which="both", labelsize=FONT)
    ax.grid(alpha=0.3)
    plain_numbers(ax)
    honest_ylim(ax, panel[metric].astype(float) / scale)
    if len(order) > 1:
        handles = [Line2D([], [], color="black", marker=marker[s], linestyle="none", ms=3.5) for s in order]
        labels = [wrap_label(s, chars_in(_PANEL_W - 0.6)) for s in order]
        # Under the x label (constrained layout makes room), where it can cover no point.
        below = offset_copy(ax.transAxes, fig=ax.figure, y=-0.42, units="inches")
        ax.legend(handles, labels, fontsize=FONT - 1, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                  bbox_transform=below, frameon=False, ncol=1, handletextpad=0.3)
