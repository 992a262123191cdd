"""The unit-overlap probe's answer (experiments/hopper_unit_overlap): how much of one unit's time a
GEMM hides when both run on the same SMs.

The probe's variants are named by what runs: a GEMM alone (``gemm``, ``gemm_rs``, ``gemm_n256``), a unit alone
(``exp2``, ``ffma``, ...), and a pair, ``<gemm>_and_<unit>`` (two warpgroups) or
``<gemm>_then_<unit>`` (one warpgroup doing both). For each pair in a run, with the median times
``g`` (the GEMM alone), ``u`` (the unit alone) and ``t`` (together), the share of the unit's time
hidden is ``(g + u - t) / u``: 1 when the pair takes as long as the GEMM alone, 0 when it takes
the sum of the two. Its 95% interval is a bootstrap over the three sets of repetitions.

    python -m schedlab_analysis.readme <README>   (kind: overlap)
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from .load import load_results, samples
from .stats import DEFAULT_BOOTSTRAP, DEFAULT_SEED

PAIR = re.compile(r"^(?P<gemm>gemm(?:_rs)?(?:_n\d+)?)_(?P<how>and|then)_(?P<unit>.+)$")
WHERE = {"and": "another warpgroup", "then": "the same warpgroup"}


class OverlapError(ValueError):
    pass


def _hidden(g: np.ndarray, u: np.ndarray, t: np.ndarray) -> float:
    return (np.median(g) + np.median(u) - np.median(t)) / np.median(u)


def overlap_rows(df: pd.DataFrame, *, n_boot: int = DEFAULT_BOOTSTRAP, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """One row per pair variant and dtype of one run: the three median times (us), the hidden
    share and its 95% bootstrap interval (NaN for a unit the run has no time of alone), the GEMM's rate alone (TFLOP/s), and the SM clock
    the GEMM alone and the pair ran at (GHz), and when in the pair the GEMM's and the unit's
    warpgroups finished (us from the CTA's start; NaN where the run did not measure it)."""
    runs = sorted(df["run"].dropna().unique())
    if len(runs) != 1:
        raise OverlapError(f"overlap compares within one run; these files hold {len(runs)} ({', '.join(runs)})")
    ok = samples(df)
    times = {(d, v): g["time_us"].to_numpy(float) for (d, v), g in ok.groupby(["dtype", "variant"])}
    rate = {(d, v): float(g["FLOP_per_s"].median()) for (d, v), g in ok.groupby(["dtype", "variant"])}
    def median_of(column: str) -> dict:
        return {(d, v): float(g[column].median()) if column in ok.columns else float("nan")
                for (d, v), g in ok.groupby(["dtype", "variant"])}
    clock, gemm_end, unit_end = median_of("sm_clock_ghz"), median_of("wg0_end_us"), median_of("wg1_end_us")
    rng = np.random.default_rng(seed)
    registered = set(df["variant"].dropna())
    rows = []
    for (dtype, variant), t in sorted(times.items()):
        m = PAIR.match(str(variant))
        if not m:
            continue
        # A unit the run never registers alone (warps waiting for the GEMM: no time of their own)
        # leaves its share empty; one registered but failed or skipped is an error.
        missing = [v for v in (m["gemm"], m["unit"]) if (dtype, v) not in times and (v == m["gemm"] or v in registered)]
        if missing:
            raise OverlapError(f"{variant} ({dtype}) needs {' and '.join(missing)} alone in the same run")
        g, u = times[(dtype, m["gemm"])], times.get((dtype, m["unit"]))
        if u is None:
            hidden = low = high = unit_us = float("nan")
        else:
            boot = [_hidden(rng.choice(g, g.size), rng.choice(u, u.size), rng.choice(t, t.size)) for _ in range(n_boot)]
            hidden, low, high, unit_us = _hidden(g, u, t), np.percentile(boot, 2.5), np.percentile(boot, 97.5), np.median(u)
        rows.append({"dtype": dtype, "variant": variant, "gemm": m["gemm"], "unit": m["unit"], "where": WHERE[m["how"]],
                     "gemm_us": np.median(g), "unit_us": unit_us, "together_us": np.median(t),
                     "hidden": hidden, "low": low, "high": high,
                     "gemm_tflops": rate[(dtype, m["gemm"])] / 1e12,
                     "gemm_ghz": clock[(dtype, m["gemm"])], "together_ghz": clock[(dtype, variant)],
                     "gemm_end_us": gemm_end[(dtype, variant)],
                     "unit_end_us": unit_end[(dtype, variant)] if m["how"] == "and" else float("nan")})
    if not rows:
        raise OverlapError("no pair variant (gemm_and_<unit>, gemm_rs_and_<unit>, gemm_then_<unit>) in these files")
    return pd.DataFrame(rows)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _num(x: float) -> str:
    return "-" if not np.isfinite(x) else f"{x:.0f}"


def _share(r: pd.Series) -> str:
    return "-" if not np.isfinite(r["hidden"]) else f"{_pct(r['hidden'])} ({_pct(r['low'])} to {_pct(r['high'])})"


def render_overlap(args: list[str], files: list[str]) -> str:
    """The table of every pair in the files' one run, GEMM dtype by dtype, then the A/A control
    and the accuracy gate's verdict on every record."""
    from .readme import REPO, ReadmeError, _one_view, accuracy_sentence

    if args:
        raise ReadmeError("overlap takes no arguments, only its results file")
    df = load_results([REPO / f for f in files])
    try:
        rows = overlap_rows(df)
    except OverlapError as e:
        raise ReadmeError(str(e)) from e
    view = _one_view(files, str(df["experiment"].dropna().iloc[0]))
    lines = ["| GEMM (dtype, TFLOP/s alone) | beside it | in | GEMM alone (us) | unit alone (us) | together (us) "
             "| unit's time hidden (95% interval) | SM clock, GEMM alone / together (GHz) "
             "| together: GEMM / unit done at (us) |",
             "|---|---|---|---|---|---|---|---|---|"]
    ghz = lambda x: "-" if not np.isfinite(x) else f"{x:.2f}"
    for _, r in rows.sort_values(["dtype", "hidden"], ascending=[False, False], na_position="last").iterrows():
        lines.append(f"| `{r['gemm']}` ({r['dtype']}, {r['gemm_tflops']:.0f}) | `{r['unit']}` | {r['where']} "
                     f"| {r['gemm_us']:.0f} | {_num(r['unit_us'])} | {r['together_us']:.0f} "
                     f"| {_share(r)} "
                     f"| {ghz(r['gemm_ghz'])} / {ghz(r['together_ghz'])} "
                     f"| {_num(r['gemm_end_us'])} / {_num(r['unit_end_us'])} |")
    baseline = view.summary["baseline"].dropna().iloc[0] if "baseline" in view.summary else "the baseline"
    return ("Median times of the repetitions in run `" + str(df["run"].dropna().iloc[0]) + "`; a unit's time "
            "hidden is (GEMM alone + unit alone - together) / unit alone: 100% when the pair takes as long as "
            "the GEMM alone, 0% when it takes both in turn.\n\n" + "\n".join(lines) + "\n\n"
            f"A/A control (`{baseline}` registered twice): median |change| {view.noise_floor:.2%}. "
            + accuracy_sentence(view))


def overlap_figure(view):
    """Each pair of the view's run against its two bounds, GEMM dtype by dtype: the pair's time
    (bar), the GEMM alone (black tick: all of the unit hidden) and the two alone in turn (red
    tick: none hidden), the hidden share written at the bar. None for a run without pairs."""
    from .plots.style import new_figure

    files = sorted(set(view.summary["source_file"].dropna()))
    try:
        rows = overlap_rows(load_results(files), n_boot=200)
    except OverlapError:
        return None
    dtypes = sorted(rows["dtype"].unique(), reverse=True)
    counts = [int((rows["dtype"] == d).sum()) for d in dtypes]
    fig = new_figure(11, 1.2 + 0.32 * sum(counts) + 0.6 * len(dtypes))
    axes = fig.subplots(len(dtypes), 1, squeeze=False, height_ratios=counts)[:, 0]
    for ax, dtype in zip(axes, dtypes):
        r = rows[rows["dtype"] == dtype].sort_values("hidden", ascending=False, na_position="last")
        y = np.arange(len(r))[::-1]
        ax.barh(y, r["together_us"], color="#8fb3d9", label="together")
        ax.scatter(r["gemm_us"], y, marker="|", s=250, color="k", label="GEMM alone (all hidden)", zorder=3)
        ax.scatter(r["gemm_us"] + r["unit_us"], y, marker="|", s=250, color="#c0392b",
                   label="both alone, in turn (none hidden)", zorder=3)
        for yi, (_, x) in zip(y, r.iterrows()):
            text = "-" if not np.isfinite(x["hidden"]) else f"{100 * x['hidden']:.0f}% hidden"
            ax.text(x["together_us"], yi, "  " + text, va="center", fontsize=8)
        ax.set_yticks(y, [f"{x['gemm']} + {x['unit']}" + (" (one warpgroup)" if x["where"] != WHERE["and"] else "")
                          for _, x in r.iterrows()], fontsize=8)
        ax.set_title(f"GEMM in {dtype}", fontsize=9, loc="left")
        ax.set_xlabel("time a launch (us)")
        ax.set_xlim(0, 1.25 * max(r["together_us"].max(), np.nanmax(r["gemm_us"] + r["unit_us"].fillna(0))))
    axes[0].legend(loc="upper right", fontsize=8)
    fig.suptitle(f"{view.experiment} ({view.device_slug}): a GEMM beside another warpgroup's unit, run {view.run}",
                 fontsize=10)
    return fig
