"""Figures for one experiment (an ``ExperimentView``). Every series comes from the data:
the variants, peers, configurations, ceilings and stall reasons plotted are the ones the
results files contain. Failed and skipped runs are listed in a note, never drawn as times.

Figures are ``matplotlib.figure.Figure`` objects made without pyplot, so nothing here
depends on the interactive backend; ``save`` writes PNGs (Agg).
"""
from __future__ import annotations

import io
import math
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from .dataset import ExperimentView
from .ncu import MEMWAIT_REASONS
from .stats import config_key, config_label

PEER_PREFIX = "peer: "
_RATES = (("time_us", "time (us)"), ("tflops", "TFLOP/s"), ("gbps", "GB/s"))
_BOUNDS = {"time_us": ("time_lo", "time_hi"), "tflops": ("tflops_lo", "tflops_hi"), "gbps": ("gbps_lo", "gbps_hi")}
_MAX_NOTE_LINES = 8
# resources.json fields shown next to a variant (max over its kernels), as scripts/resource_report.py names them.
_RESOURCE_FIELDS = (("registers", "regs"), ("vgpr_total", "vgpr"), ("spill_store_bytes", "B spilled"),
                    ("vgpr_spill_regs", "vgpr spilled"), ("occupancy", "occupancy"))
_MAX_PANELS = 6


# ----------------------------------------------------------------------------- helpers

def series_name(row: pd.Series) -> str:
    return (PEER_PREFIX if int(row.get("peer", 0) or 0) else "") + str(row["variant"])


def series_order(view: ExperimentView) -> list[str]:
    """Baseline(s) first, then the other variants, then peers (all from the data)."""
    ok = view.ok
    baselines = {series_name(dict(r, variant=r["baseline"])) for _, r in ok.iterrows() if pd.notna(r["baseline"])}
    own = sorted({series_name(r) for _, r in ok.iterrows()}, key=lambda v: (v not in baselines, v))
    peers = sorted({series_name(r) for _, r in view.peers.iterrows()} - set(own))
    return own + peers


def colors_for(names: list[str]) -> dict[str, tuple]:
    from matplotlib import colormaps
    cmap = colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {n: cmap(i % cmap.N) for i, n in enumerate(names)}


def plotted_rows(view: ExperimentView) -> pd.DataFrame:
    """Successful rows of the experiment and its peers, with ``series`` and ``config``."""
    frames = [f for f in (view.ok, view.peers) if not f.empty]
    if not frames:
        return pd.DataFrame(columns=["series", "config"])
    rows = pd.concat(frames, ignore_index=True)
    rows["series"] = [series_name(r) for _, r in rows.iterrows()]
    return rows


def _sortable(row: pd.Series, columns: list[str]) -> tuple:
    """Sort key of a row's configuration: numbers by value, then strings."""
    return tuple((0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v)) for v in config_key(row, columns))


def ordered_configs(view: ExperimentView) -> list[str]:
    """The experiment's configuration labels, ordered by their axis values (the scaling axis
    first, so a sweep over sequence length reads left to right)."""
    axis = scaling_axis(view)
    columns = ([axis] if axis else []) + [c for c in view.label_columns if c != axis]
    rows = sorted((r for _, r in view.summary.iterrows()), key=lambda r: _sortable(r, columns))
    return list(dict.fromkeys(r["config"] for r in rows))


def failures(view: ExperimentView) -> list[dict[str, str]]:
    """Every run that has no time: status (failed / skipped), variant, config, message."""
    return [{"status": str(r["status"]), "variant": str(r["variant"]),
             "config": str(r["config"]), "message": str(r.get("error_message", ""))}
            for _, r in view.not_ok.iterrows()]


def failure_lines(view: ExperimentView) -> list[str]:
    """'failed: variant @ config: message' for every run that has no time."""
    return [f"{f['status']}: {f['variant']} @ {f['config']}: {f['message']}" for f in failures(view)]


def _note(fig: Figure, lines: list[str], y: float = 0.005) -> None:
    if len(lines) > _MAX_NOTE_LINES:
        lines = lines[:_MAX_NOTE_LINES] + [f"... and {len(lines) - _MAX_NOTE_LINES} more (see index.md)"]
    wrapped = [textwrap.shorten(line, 160) for line in lines]
    fig.text(0.01, y, "\n".join(wrapped), fontsize=7, va="bottom", ha="left", family="monospace")


def _footer_height(lines: list[str]) -> float:
    return 0.2 + 0.14 * min(len(lines), _MAX_NOTE_LINES + 1)


def _resource_notes(view: ExperimentView) -> dict[str, str]:
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


def _error_bars(rows: pd.DataFrame, metric: str) -> np.ndarray:
    """2xN distances from the centre to the spread's ends (0 where there is no spread)."""
    lo, hi = _BOUNDS[metric]
    y = rows[metric].to_numpy(float)
    err = np.vstack([y - rows[lo].to_numpy(float), rows[hi].to_numpy(float) - y])
    return np.clip(np.nan_to_num(err), 0, None)


def _title(view: ExperimentView, what: str) -> str:
    fixed = f" [{view.fixed_axes}]" if view.fixed_axes else ""
    return f"{view.experiment} ({view.device_slug}){fixed}\n{what}"


def save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight", pad_inches=0.15)
    return path


def figure_png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight", pad_inches=0.15)
    return buf.getvalue()


# ----------------------------------------------------------------------------- figures

# Bars per panel row: beyond this a label can no longer be read, so the configurations are
# split over several rows of panels.
_BARS_PER_ROW = 40
_FIG_WIDTH = 13.0


def config_rows(configs: list[str], series: int) -> list[list[str]]:
    """The configurations split into rows of at most ``_BARS_PER_ROW`` bars each."""
    per_row = max(2, _BARS_PER_ROW // max(series, 1))
    n_rows = math.ceil(len(configs) / per_row) if configs else 1
    per_row = math.ceil(len(configs) / n_rows) if configs else 1
    return [configs[k:k + per_row] for k in range(0, len(configs), per_row)] or [[]]


def _primary_rate(view: ExperimentView, rows: pd.DataFrame) -> tuple[str, str]:
    """The family's rate: GB/s for decode (bandwidth-bound), TFLOP/s otherwise; time if none."""
    order = ("gbps", "tflops") if view.family == "decode" else ("tflops", "gbps")
    for metric in order:
        if metric in rows and rows[metric].notna().any():
            return metric, dict(_RATES)[metric]
    return "time_us", "time (us)"


def _grouped_bars(ax, rows: pd.DataFrame, names: list[str], colors: dict, configs: list[str], metric: str,
                  legend_notes: dict[str, str] | None = None) -> None:
    bar_w = 0.8 / max(len(names), 1)
    for i, name in enumerate(names):
        sub = rows[rows["series"] == name].drop_duplicates("config", keep="last").set_index("config")
        present = [c for c in configs if c in sub.index and np.isfinite(sub.at[c, metric])]
        if not present:
            continue
        pos = np.array([configs.index(c) for c in present]) + (i - (len(names) - 1) / 2) * bar_w
        y = sub.loc[present, metric].to_numpy(float)
        err = _error_bars(sub.loc[present], metric)
        label = name + (f" [{legend_notes[name]}]" if legend_notes and name in legend_notes else "")
        ax.bar(pos, y, bar_w, yerr=err, capsize=1.5, color=colors[name], label=label,
               hatch="//" if name.startswith(PEER_PREFIX) else None, edgecolor="black", linewidth=0.3)
    ax.set_xticks(np.arange(len(configs)))
    ax.set_xticklabels(configs, rotation=25, ha="right", fontsize=7)
    ax.set_xlim(-0.6, len(configs) - 0.4)
    ax.grid(axis="y", alpha=0.3)


def _top_legend(fig: Figure, ax) -> None:
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 3), fontsize=7,
                   bbox_to_anchor=(0.5, 1.0), frameon=False)


def bars_figure(view: ExperimentView) -> Figure:
    """The family's rate (GB/s for decode, TFLOP/s for prefill) per configuration, one bar per
    variant / peer, IQR error bars; the configurations split over rows of panels so every label
    can be read. Times are in the scaling figure and index.md."""
    rows = plotted_rows(view)
    names = series_order(view)
    colors = colors_for(names)
    configs = ordered_configs(view)
    metric, label = _primary_rate(view, rows) if len(rows) else ("time_us", "time (us)")
    notes = failure_lines(view)
    chunks = config_rows(configs, len(names))
    legend_rows = math.ceil(len(names) / 3)
    top = 0.2 + 0.16 * legend_rows + 0.3
    footer = view.provenance().split(" | ") + (["Runs without a time (not plotted):"] + notes if notes else [])
    height = 2.6 * len(chunks) + top + _footer_height(footer) + 0.4
    fig = Figure(figsize=(_FIG_WIDTH, height))
    axes = fig.subplots(len(chunks), 1, squeeze=False)[:, 0]
    if len(rows) and metric in rows and rows[metric].notna().any():
        for ax, chunk in zip(axes, chunks):
            _grouped_bars(ax, rows, names, colors, chunk, metric, _resource_notes(view))
            ax.set_ylabel(label)
        _top_legend(fig, axes[0])
    else:
        axes[0].text(0.5, 0.5, "no successful runs to plot", ha="center", va="center", transform=axes[0].transAxes)
        axes[0].set_axis_off()
    spread = sorted({str(s) for s in rows.get("spread_kind", pd.Series(dtype=object)).dropna()})
    fig.suptitle(_title(view, f"{label}, median over repetitions; error bars: " + ("; ".join(spread) or "n/a")),
                 fontsize=9, y=1.0 - (0.16 * legend_rows + 0.3) / height)
    fig.tight_layout(rect=(0, _footer_height(footer) / height, 1, 1 - top / height))
    _note(fig, footer)
    return fig


def speedup_figure(view: ExperimentView) -> Figure | None:
    """Speedup of each variant over its baseline per configuration, bootstrap 95% CI, with the
    run's practical band (1% or the A/A floor) shaded: inside it no difference is detected."""
    sp = view.speedups
    if sp.empty:
        return None
    series_of = {str(r["variant"]): series_name(r) for _, r in view.ok.iterrows()}
    order = series_order(view)
    colors = colors_for(order)
    names = sorted(set(sp["variant"]), key=lambda v: order.index(series_of[v]) if series_of.get(v) in order else 0)
    configs = [c for c in ordered_configs(view) if c in set(sp["config"])]
    chunks = config_rows(configs, len(names))
    band = float(sp["band"].max()) if "band" in sp and sp["band"].notna().any() else 0.0
    legend_rows = math.ceil(len(names) / 3)
    top = 0.2 + 0.16 * legend_rows + 0.3
    height = 2.4 * len(chunks) + top + 0.3
    fig = Figure(figsize=(_FIG_WIDTH, height))
    axes = fig.subplots(len(chunks), 1, squeeze=False)[:, 0]
    rows = sp.assign(series=[f"{v} / {b}" for v, b in zip(sp["variant"], sp["baseline"])])
    rows = rows.assign(time_lo=rows["ci_low"], time_hi=rows["ci_high"], time_us=rows["speedup"])
    labels = [f"{v} / {sp[sp['variant'] == v]['baseline'].iloc[0]}" for v in names]
    label_colors = {lab: colors.get(series_of.get(v)) for lab, v in zip(labels, names)}
    for ax, chunk in zip(axes, chunks):
        _grouped_bars(ax, rows, labels, label_colors, chunk, "time_us")
        ax.axhspan(1 - band, 1 + band, color="gray", alpha=0.2, linewidth=0)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_ylabel("speedup")
    _top_legend(fig, axes[0])
    methods = "; ".join(sorted(set(sp["method"])))
    fig.suptitle(_title(view, f"baseline time / variant time ({methods}); shaded: +-{band:.1%}, "
                              "no difference detected inside it"), fontsize=8,
                 y=1.0 - (0.16 * legend_rows + 0.3) / height)
    fig.tight_layout(rect=(0, 0, 1, 1 - top / height))
    return fig


def scaling_axis(view: ExperimentView) -> str | None:
    """The sequence-length-like axis to scale over: an axis whose name mentions seq, len or
    context and has several values; else the axis with the most values (None if all fixed)."""
    ok = view.ok
    counts = {c: ok[c].nunique() for c in view.config_columns if c != "dtype" and c in ok}
    varying = {c: n for c, n in counts.items() if n > 1}
    if not varying:
        return None
    seq_like = [c for c in varying if any(t in c for t in ("seq", "len", "context", "ctx"))]
    pool = seq_like or list(varying)
    return max(pool, key=lambda c: (varying[c], c))


def scaling_figure(view: ExperimentView) -> Figure | None:
    """Time and rates against the scaling axis, one line per variant / peer, one column per
    combination of the other axes (first few; the rest are counted in the title)."""
    axis = scaling_axis(view)
    rows = plotted_rows(view)
    if axis is None or rows.empty:
        return None
    rows, layout = _common_layout(rows)
    others = [c for c in view.label_columns if c != axis and c not in ("page", "page_size")]
    rows["_other"] = [config_label(r, others) for _, r in rows.iterrows()]
    ordered = sorted((r for _, r in rows.iterrows()), key=lambda r: _sortable(r, others))
    combos = list(dict.fromkeys(r["_other"] for r in ordered))
    shown = combos[:_MAX_PANELS]
    metrics = [(m, label) for m, label in _RATES if m in rows and rows[m].notna().any()]
    names = series_order(view)
    colors = colors_for(names)
    legend_rows = math.ceil(len(names) / 4)
    top = 0.75 + 0.16 * legend_rows
    height = 2.6 * len(metrics) + top + 0.2
    fig = Figure(figsize=(max(3.6 * len(shown) + 0.8, 8.0), height))
    axes = fig.subplots(len(metrics), len(shown), squeeze=False)
    for col, combo in enumerate(shown):
        panel = rows[rows["_other"] == combo]
        for r, (metric, label) in enumerate(metrics):
            ax = axes[r][col]
            for name in names:
                s = panel[panel["series"] == name].sort_values(axis)
                if s.empty or not s[metric].notna().any():
                    continue
                ax.errorbar(s[axis].astype(float), s[metric], yerr=_error_bars(s, metric), marker="o", ms=3,
                            capsize=2, color=colors[name], label=name,
                            linestyle="--" if name.startswith(PEER_PREFIX) else "-")
            ax.set_xscale("log", base=2)
            if metric == "time_us":
                ax.set_yscale("log")
            ax.grid(alpha=0.3)
            if col == 0:
                ax.set_ylabel(label)
            if r == 0:
                ax.set_title(combo, fontsize=7)
            if r == len(metrics) - 1:
                ax.set_xlabel(axis)
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    ordered_labels = [n for n in names if n in handles]
    fig.legend([handles[n] for n in ordered_labels], ordered_labels, loc="upper center", ncol=4, fontsize=7,
               frameon=False, bbox_to_anchor=(0.5, 1.0 - 0.5 / height))
    more = f" (first {len(shown)} of {len(combos)} combinations of the other axes)" if len(combos) > len(shown) else ""
    where = f"; our rows at page {layout}, peers on a contiguous cache" if layout is not None else ""
    fig.suptitle(_title(view, f"scaling over {axis}{more}{where}"), fontsize=9, y=1.0)
    fig.tight_layout(rect=(0, 0, 1, 1 - top / height))
    return fig


def _common_layout(rows: pd.DataFrame) -> tuple[pd.DataFrame, object]:
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


def roofline_figure(view: ExperimentView) -> Figure | None:
    """Each variant's points (arithmetic intensity, TFLOP/s) under the measured ceilings:
    copy bandwidth (context copy_bandwidth_GBps) and matrix peak (context matmul_tflops).
    A ceiling the data lacks is not drawn, and the title says so."""
    rows = plotted_rows(view)
    if rows.empty or not {"flops", "bytes"} <= set(rows.columns):
        return None
    rows = rows[(rows["flops"] > 0) & (rows["bytes"] > 0) & rows["tflops"].notna()]
    if rows.empty:
        return None
    ai = rows["flops"] / rows["bytes"]
    names = series_order(view)
    colors = colors_for(names)
    fig = Figure(figsize=(7.5, 5.0))
    ax = fig.subplots()
    x_lo, x_hi = ai.min() / 4, ai.max() * 4
    bw, peak = view.ceilings.copy_gbps, view.ceilings.matmul_tflops
    drawn, missing = [], []
    if bw:
        xs = np.geomspace(x_lo, x_hi if not peak else max(x_hi, peak * 1e3 / bw * 2), 200)
        ys = bw * 1e9 * xs / 1e12
        if peak:
            ys = np.minimum(ys, peak)
        ax.plot(xs, ys, color="black", linewidth=1, label=f"measured copy bandwidth {bw:.0f} GB/s")
        drawn.append("copy bandwidth")
    else:
        missing.append("copy bandwidth (no ctx copy_bandwidth_GBps)")
    if peak:
        ax.axhline(peak, color="gray", linestyle="--", linewidth=1, label=f"measured matrix peak {peak:.0f} TFLOP/s")
        drawn.append("matrix peak")
    else:
        missing.append("matrix peak (no ctx matmul_tflops)")
    for name in names:
        s = rows[rows["series"] == name]
        if s.empty:
            continue
        ax.scatter(s["flops"] / s["bytes"], s["tflops"], color=colors[name], label=name, s=18,
                   marker="^" if name.startswith(PEER_PREFIX) else "o", zorder=3)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP / byte, declared work)")
    ax.set_ylabel("TFLOP/s (median)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    title = "roofline; ceilings: " + (", ".join(drawn) or "none")
    if missing:
        title += "\nnot drawn, absent from the data: " + "; ".join(missing)
    ax.set_title(_title(view, title), fontsize=8)
    fig.tight_layout()
    return fig


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


def stalls_figure(view: ExperimentView) -> Figure | None:
    """Stacked stall-reason shares per benchmark (ncu / ATT stall files; the memwait reasons
    first, hatched) and, when probe files exist, the in-kernel wait-point shares."""
    panels = []
    if not view.stalls.empty:
        panels.append("stalls")
    wait_cols = [c for c in view.probes.columns if c.startswith("wait_") and c != "wait_cycles_share"] \
        if not view.probes.empty else []
    if wait_cols:
        panels.append("probes")
    if not panels:
        return None
    n_rows = max(len(view.stalls), len(view.probes))
    fig = Figure(figsize=(12, 1.2 + 0.35 * n_rows * len(panels) + 1.2 * len(panels)))
    axes = fig.subplots(len(panels), 1, squeeze=False)[:, 0]
    for ax, panel in zip(axes, panels):
        if panel == "stalls":
            recs = view.stalls.sort_values("benchmark")
            cols = _stall_columns(recs)
            shares = recs[cols].fillna(0.0).to_numpy(float)
            labels = [c.removeprefix("stall_") for c in cols]
            hatched = {f"stall_{r}" for r in MEMWAIT_REASONS}
            memwait = recs["memwait_share"].to_numpy(float) if "memwait_share" in recs else None
            tools = sorted({str(t) for t in recs.get("tool", pd.Series(dtype=object)).dropna()}) or ["stall file"]
            title = f"stall shares ({', '.join(tools)}); hatched = memwait reasons"
        else:
            recs = view.probes.sort_values("benchmark")
            total = pd.to_numeric(recs["total_cycles"], errors="coerce").to_numpy(float)
            shares = recs[wait_cols].fillna(0.0).to_numpy(float) / total[:, None]
            labels = [c.removeprefix("wait_") for c in wait_cols]
            cols, hatched, memwait = wait_cols, set(), None
            title = "in-kernel probe: cycles at each wait point / total cycles"
        colors = colors_for(labels)
        y = np.arange(len(recs))
        left = np.zeros(len(recs))
        for j, (col, label) in enumerate(zip(cols, labels)):
            ax.barh(y, shares[:, j], left=left, color=colors[label], label=label,
                    hatch="xx" if col in hatched else None, edgecolor="white", linewidth=0.3)
            left += shares[:, j]
        row_labels = _row_labels(recs, view)
        if memwait is not None:  # in the row's label, where no legend can cover it
            row_labels = [f"{lab} (memwait {m:.2f})" if np.isfinite(m) else lab for lab, m in zip(row_labels, memwait)]
        ax.set_yticks(y)
        ax.set_yticklabels(row_labels, fontsize=7)
        ax.set_xlim(0, max(1.0, float(left.max()) if len(left) else 1.0))
        ax.set_xlabel("share")
        ax.set_title(_title(view, title), fontsize=8)
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


FIGURES = (("bars", bars_figure), ("speedup", speedup_figure), ("scaling", scaling_figure),
           ("roofline", roofline_figure), ("stalls", stalls_figure))


def experiment_figures(view: ExperimentView) -> dict[str, Figure]:
    """Every figure that the experiment's data supports, by name."""
    out = {}
    for name, make in FIGURES:
        fig = make(view)
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


# ----------------------------------------------------------------------------- family summary

def best_variant(view: ExperimentView, metric: str) -> str | None:
    """The variant with the highest geometric-mean ``metric`` over the configurations every
    variant of the run measured (A/A controls excluded)."""
    ok = view.ok[~view.ok["variant"].map(lambda v: str(v).endswith("_aa"))]
    ok = ok[ok[metric].notna() & (ok[metric] > 0)]
    if ok.empty:
        return None
    common = set.intersection(*(set(g["config"]) for _, g in ok.groupby("variant")))
    ok = ok[ok["config"].isin(common)] if common else ok
    score = ok.groupby("variant")[metric].apply(lambda x: float(np.exp(np.log(x).mean())))
    return str(score.idxmax())


def family_summary_figure(data, device: str, family: str) -> Figure | None:
    """One figure per family: the best variant of each experiment (in its default run) and the
    peers, over the scaling axis, one panel per combination of the other axes. The family's
    rate on the y axis (GB/s for decode, TFLOP/s otherwise)."""
    metric, label = ("gbps", "GB/s") if family == "decode" else ("tflops", "TFLOP/s")
    frames, runs = [], []
    for dev, experiment in data.experiments(family):
        if dev != device:
            continue
        view = data.view(dev, experiment)
        if view.ok.empty or metric not in view.ok:
            continue
        peer = bool(int(view.ok["peer"].fillna(0).iloc[0] or 0))
        variants = sorted(set(view.ok["variant"])) if peer else [best_variant(view, metric)]
        for v in filter(None, variants):
            rows = view.ok[view.ok["variant"] == v].copy()
            rows["series"] = (PEER_PREFIX + v) if peer else f"{experiment}: {v}"
            frames.append(rows)
        runs.append(f"{experiment} @ {str(view.run).rsplit('/', 1)[-1]}")
    if not frames:
        return None
    rows = pd.concat(frames, ignore_index=True)
    # A reference kernel far below the rest (the naive end-to-end check) would flatten every
    # panel: series under a tenth of the best median rate are named in the footer instead.
    level = rows.groupby("series")[metric].median()
    slow = sorted(level[level < 0.1 * level.max()].index)
    rows = rows[~rows["series"].isin(slow)]
    if slow:
        runs.append("left out, under a tenth of the best rate: " + ", ".join(slow))
    axes_cols = [c for c in ("context", "seq_len", "seq") if c in rows and rows[c].notna().any()]
    if not axes_cols:
        return None
    x = axes_cols[0]
    # The layout axis (page size) is not a problem axis: keep the most common page of our rows.
    for layout in ("page_size", "page"):
        if layout in rows and rows[layout].notna().any():
            common = rows.loc[rows["peer"].fillna(0) == 0, layout].mode()
            if len(common):
                rows = rows[(rows[layout].isna()) | (rows[layout] == common.iloc[0]) | (rows["peer"] == 1)]
            break
    # An axis set by the scaling axis (the prefill batch, which keeps the tokens fixed) is no facet.
    facet_cols = [c for c in ("batch", "head_dim", "causal", "dtype") if c in rows and rows[c].nunique() > 1
                  and rows.groupby(x)[c].nunique().max() > 1]
    rows["_facet"] = [config_label(r, facet_cols) for _, r in rows.iterrows()]
    facets = sorted(set(rows["_facet"]), key=lambda f: _sortable(rows[rows["_facet"] == f].iloc[0], facet_cols))
    n = len(facets)
    ncols = 2 if n == 4 else min(n, 3)
    nrows = math.ceil(n / ncols)
    names = list(dict.fromkeys(sorted(s for s in rows["series"] if not s.startswith(PEER_PREFIX))
                               + sorted(s for s in rows["series"] if s.startswith(PEER_PREFIX))))
    colors = colors_for(names)
    legend_rows = math.ceil(len(names) / 3)
    top = 0.45 + 0.17 * legend_rows
    footer = textwrap.wrap("runs: " + "; ".join(runs), 150)
    bottom = 0.2 + 0.14 * len(footer)
    height = 2.8 * nrows + top + bottom
    fig = Figure(figsize=(4.4 * ncols + 0.8, height))
    axs = fig.subplots(nrows, ncols, squeeze=False)
    for k, facet in enumerate(facets):
        ax = axs[k // ncols][k % ncols]
        panel = rows[rows["_facet"] == facet]
        for name in names:
            s = panel[panel["series"] == name].sort_values(x)
            if s.empty:
                continue
            ax.plot(s[x].astype(float), s[metric].astype(float) / (1e3 if metric == "gbps" else 1), marker="o", ms=3,
                    color=colors[name], label=name, linestyle="--" if name.startswith(PEER_PREFIX) else "-")
        ax.set_xscale("log", base=2)
        ax.set_title(facet, fontsize=8)
        ax.set_xlabel(x, fontsize=8)
        ax.set_ylabel("TB/s" if metric == "gbps" else label, fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    for k in range(n, nrows * ncols):
        axs[k // ncols][k % ncols].set_axis_off()
    handles, labels = axs[0][0].get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    for a in axs.flat:
        for h, lab in zip(*a.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    fig.legend(list(seen.values()), list(seen.keys()), loc="upper center", ncol=3, fontsize=7, frameon=False,
               bbox_to_anchor=(0.5, 1.0 - 0.3 / height))
    fig.suptitle(f"{family} on {device}: the best variant of each experiment (geometric mean over its run's "
                 "shapes) and the peers", fontsize=9, y=1.0)
    fig.tight_layout(rect=(0, bottom / height, 1, 1 - top / height))
    fig.text(0.01, 0.005, "\n".join(footer), fontsize=6, va="bottom", ha="left", family="monospace")
    return fig
