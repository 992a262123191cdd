"""What an experiment's figures draw: the series (variants and peers, all from the data), the
configurations in axis order, the runs without a time, and which variants are worth a
series at all: the baseline, the peers and the variants that differ from the baseline
beyond the run's practical band. A variant within the band at every configuration is left
out and counted in a note, so a run of thirty variants draws the handful that matter.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .. import stats
from ..dataset import ExperimentView
from ..stats import config_key
from .style import PEER_PREFIX, wrapped_note


def series_name(row: pd.Series) -> str:
    return (PEER_PREFIX if int(row.get("peer", 0) or 0) else "") + str(row["variant"])


def series_order(view: ExperimentView) -> list[str]:
    """Baseline(s) first, then the other variants, then peers (all from the data)."""
    ok = view.ok
    baselines = {series_name(dict(r, variant=r["baseline"])) for _, r in ok.iterrows() if pd.notna(r["baseline"])}
    own = sorted({series_name(r) for _, r in ok.iterrows()}, key=lambda v: (v not in baselines, v))
    peers = sorted({series_name(r) for _, r in view.peers.iterrows()} - set(own))
    return own + peers


def plotted_rows(view: ExperimentView) -> pd.DataFrame:
    """Successful rows of the experiment and its peers, with ``series`` and ``config``."""
    frames = [f for f in (view.ok, view.peers) if not f.empty]
    if not frames:
        return pd.DataFrame(columns=["series", "config"])
    rows = pd.concat(frames, ignore_index=True)
    rows["series"] = [series_name(r) for _, r in rows.iterrows()]
    return rows


def sortable(row: pd.Series, columns: list[str]) -> tuple:
    """Sort key of a row's configuration: numbers by value, then strings."""
    return tuple((0, v, "") if isinstance(v, (int, float, np.number)) else (1, 0, str(v))
                 for v in config_key(row, columns))


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


def ordered_configs(view: ExperimentView) -> list[str]:
    """The experiment's configuration labels, ordered by their axis values (the scaling axis
    first, so a sweep over sequence length reads left to right)."""
    axis = scaling_axis(view)
    columns = ([axis] if axis else []) + [c for c in view.label_columns if c != axis]
    rows = sorted((r for _, r in view.summary.iterrows()), key=lambda r: sortable(r, columns))
    return list(dict.fromkeys(r["config"] for r in rows))


def failures(view: ExperimentView) -> list[dict[str, str]]:
    """Every run that has no time: status (failed / skipped), variant, config, message."""
    return [{"status": str(r["status"]), "variant": str(r["variant"]),
             "config": str(r["config"]), "message": str(r.get("error_message", ""))}
            for _, r in view.not_ok.iterrows()]


def failure_lines(view: ExperimentView) -> list[str]:
    """'failed: variant @ config: message' for every run that has no time."""
    return [f"{f['status']}: {f['variant']} @ {f['config']}: {f['message']}" for f in failures(view)]


def differs(speedups: pd.DataFrame) -> bool:
    """Whether any of one variant's comparisons lies beyond the band: a whole 95% interval
    outside it (the verdict of ``stats.classify``), or, with no interval, the point."""
    for _, r in speedups.iterrows():
        if r["verdict"] in (stats.FASTER, stats.SLOWER):
            return True
        if not (np.isfinite(r["ci_low"]) and np.isfinite(r["ci_high"])) and abs(r["change"]) > r["band"]:
            return True
    return False


@dataclass
class Selection:
    """The series an experiment's figures draw, in order, and the variants left out."""
    shown: list[str]
    within_band: list[str] = field(default_factory=list)
    band: float = stats.PRACTICAL_BAND
    floor: float = 0.0
    compared: int = 0            # variants with a comparison to their baseline

    def note(self) -> list[str]:
        if not self.within_band:
            return []
        floor = f", A/A floor {self.floor:.2%}" if self.floor else ", no A/A control in the run"
        return wrapped_note(f"not drawn, within the band of +-{self.band:.1%}{floor} at every configuration: "
                            f"{len(self.within_band)} of {self.compared} variants compared with the baseline",
                            self.within_band)


def select_series(view: ExperimentView) -> Selection:
    """The baseline(s), every variant that differs from its baseline somewhere (faster or
    slower beyond the band, ``stats``' verdict), every variant without a comparison (its
    baseline did not run, so nothing says it is within noise) and the peers."""
    order = series_order(view)
    sp = view.speedups
    compared = {str(v): g for v, g in sp.groupby("variant")} if len(sp) else {}
    within = [name for name in order if name in compared and not differs(compared[name])]
    return Selection([name for name in order if name not in within], within, view.band, view.noise_floor,
                     len(compared))
