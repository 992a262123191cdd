"""The look every figure shares: one distinct colour per series, legends gathered from every
panel, labels wrapped to the room they have, plain numbers on the axes, notes under the
figure, and sizes estimated from what a figure holds so that nothing overlaps.

Figures use matplotlib's constrained layout: it places titles, tick labels, axis labels and
the legends placed "outside" without overlap, provided the figure is big enough; the sizes
below are estimated from the number of rows and the lines of the labels so that it is.
"""
from __future__ import annotations

import io
import re
import textwrap
from pathlib import Path

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter, ScalarFormatter

PEER_PREFIX = "peer: "
FONT = 7                          # points: tick labels, legends, notes
CHAR_W = 0.68 * FONT / 72         # inches per character, an upper bound (digits and '=' are wide)
LINE_H = 1.45 * FONT / 72         # inches per line of text
LEGEND_ROW_H = 0.2                # inches per row of a legend (its handle is taller than the text)
MAX_NOTE_LINES = 8
_NOTE_CHARS = 160


def is_peer(name: str) -> bool:
    return name.startswith(PEER_PREFIX)


# ----------------------------------------------------------------------------- colours

def palette(n: int) -> list[tuple]:
    """``n`` distinct colours: tab10 up to ten, then tab20, tab20b and tab20c (60 in all),
    and beyond that a continuous colormap sampled at ``n`` points."""
    if n <= 10:
        return list(colormaps["tab10"].colors[:n])
    if n <= 60:
        return [c for name in ("tab20", "tab20b", "tab20c") for c in colormaps[name].colors][:n]
    return [tuple(c) for c in colormaps["turbo"].resampled(n)(np.arange(n))]


def colors_for(names: list[str]) -> dict[str, tuple]:
    """One colour per name, none shared; a figure builds this once so that a series has the
    same colour in every panel."""
    names = list(dict.fromkeys(names))
    return dict(zip(names, palette(len(names))))


# ----------------------------------------------------------------------------- text

def wrap_label(text: str, width: int) -> str:
    """``text`` over lines of at most ``width`` characters, broken at spaces; a longer word
    (a ragged ``lengths=1+16+256+...``) is broken after its '+' or ','."""
    width = max(width, 4)
    words = []
    for word in text.split():
        while len(word) > width:
            cut = max((m.end() for m in re.finditer(r"[+,]", word[:width])), default=width)
            words.append(word[:cut])
            word = word[cut:]
        words.append(word)
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def line_count(text: str) -> int:
    return text.count("\n") + 1


def chars_in(width_in: float) -> int:
    """How many characters of FONT fit in ``width_in`` inches."""
    return max(4, int(width_in / CHAR_W))


def shorten_lines(lines: list[str]) -> list[str]:
    if len(lines) > MAX_NOTE_LINES:
        lines = lines[:MAX_NOTE_LINES] + [f"... and {len(lines) - MAX_NOTE_LINES} more (see index.md)"]
    return [textwrap.shorten(line, _NOTE_CHARS) for line in lines]


def note_height(lines: list[str]) -> float:
    """Inches the note under a figure takes (``add_note`` reserves it)."""
    return 0.15 + LINE_H * len(shorten_lines(lines)) if lines else 0.0


def add_note(fig: Figure, lines: list[str]) -> None:
    """Monospace lines under the axes, in a strip that constrained layout leaves free."""
    lines = shorten_lines(lines)
    if not lines:
        return
    height = fig.get_size_inches()[1]
    strip = note_height(lines) / height
    engine = fig.get_layout_engine()
    if engine is not None:
        engine.set(rect=(0, strip, 1, 1 - strip))
    fig.text(0.01, 0.005, "\n".join(lines), fontsize=FONT, va="bottom", ha="left", family="monospace")


def wrapped_note(prefix: str, names: list[str]) -> list[str]:
    """'prefix: a, b, c' over lines of the note's width."""
    return textwrap.wrap(f"{prefix}: " + ", ".join(names), _NOTE_CHARS, subsequent_indent="  ")


# ----------------------------------------------------------------------------- figures and axes

def new_figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def plain_numbers(ax, *, percent_x: bool = False) -> None:
    """Ticks as the numbers themselves: no offset ('+7.488e2') and no scientific factor on a
    linear axis, so a 0.002% difference cannot pass for a large one; shares as percentages."""
    for axis in (ax.xaxis, ax.yaxis):
        formatter = axis.get_major_formatter()
        if axis.get_scale() != "linear" or not isinstance(formatter, ScalarFormatter):
            continue  # a log axis, or labels already set (the configurations of a bar chart)
        if percent_x and axis is ax.xaxis:
            axis.set_major_formatter(PercentFormatter(xmax=1.0, decimals=0))
            continue
        formatter.set_useOffset(False)
        formatter.set_scientific(False)


def honest_ylim(ax, values, *, min_span: float = 0.1) -> None:
    """Y limits that span at least ``min_span`` of the largest |value|: autoscaling alone
    zooms onto differences of a few thousandths until they look like the whole range."""
    v = np.asarray([x for x in values if np.isfinite(x)], float)
    if not v.size:
        return
    lo, hi = float(v.min()), float(v.max())
    need = min_span * max(abs(lo), abs(hi))
    if hi - lo < need:
        mid = (lo + hi) / 2
        ax.set_ylim(mid - need / 2 - 0.05 * need, mid + need / 2 + 0.05 * need)


def legend_columns(labels: list[str], width_in: float) -> int:
    widest = max((len(label) for label in labels), default=1) * CHAR_W + 0.45
    return max(1, min(len(labels), int(width_in / widest)))


def legend_height(labels: list[str], width_in: float) -> float:
    if not labels:
        return 0.0
    ncol = legend_columns(labels, width_in)
    return 0.15 + LEGEND_ROW_H * -(-len(labels) // ncol)


def gathered_handles(axes, order: list[str] | None = None) -> tuple[list, list[str]]:
    """Every labelled handle of every axes, once per label, in ``order`` (then as found):
    a series that is absent from the first panel is still in the legend."""
    found: dict[str, object] = {}
    for ax in np.ravel(axes):
        for handle, label in zip(*ax.get_legend_handles_labels()):
            found.setdefault(label, handle)
    rank = {name: i for i, name in enumerate(order or [])}
    labels = sorted(found, key=lambda label: rank.get(label.split(" [")[0], len(rank)))
    return [found[label] for label in labels], labels


def figure_legend(fig: Figure, axes, order: list[str] | None = None, *, heading: str | None = None,
                  loc: str = "outside upper center"):
    """One legend for the figure from every panel's handles, as wide as the figure allows.
    Above the panels it carries the figure's heading as its title: constrained layout keeps
    an outside legend clear of the axes but not of a suptitle."""
    handles, labels = gathered_handles(axes, order)
    if not handles:
        if heading:
            fig.suptitle(heading, fontsize=FONT + 2)
        return None
    width = fig.get_size_inches()[0]
    ncol = legend_columns(labels, width) if "center" in loc else max(1, -(-len(labels) // 45))
    if heading and "upper center" not in loc:
        fig.suptitle(heading, fontsize=FONT + 2)
        heading = None
    return fig.legend(handles, labels, loc=loc, ncol=ncol, fontsize=FONT, frameon=False, title=heading,
                      title_fontsize=FONT + 2)


def save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight", pad_inches=0.15)
    return path


def figure_png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight", pad_inches=0.15)
    return buf.getvalue()
