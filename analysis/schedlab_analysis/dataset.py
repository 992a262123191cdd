"""Everything under a results directory, grouped per (device, experiment).

    data = Dataset.load("results")
    for device, experiment in data.experiments():
        view = data.view(device, experiment)   # summary, peers, speedups, stalls, ceilings

Only the newest measurement of each configuration is used (``load.latest_runs``); peers
(``peer=1`` rows, experiment ``peers_<family>``) join an experiment of the same family on
the device when they share its configuration axes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

import pandas as pd

from . import load, stats


@dataclass
class Ceilings:
    """Measured device ceilings from the results context (None when the data lacks one)."""
    copy_gbps: float | None
    matmul_tflops: float | None


@dataclass
class ExperimentView:
    device_slug: str
    experiment: str
    family: str
    summary: pd.DataFrame        # this experiment's benchmarks (ok, failed and skipped)
    peers: pd.DataFrame          # peer benchmarks at the same configurations (ok only)
    speedups: pd.DataFrame       # variant over baseline, with bootstrap CI
    stalls: pd.DataFrame         # ncu / ATT stall records of this experiment
    probes: pd.DataFrame         # in-kernel wait-point probe records
    resources: pd.DataFrame      # static report rows of this experiment
    ceilings: Ceilings
    config_columns: list[str] = field(default_factory=list)   # axes + dtype
    label_columns: list[str] = field(default_factory=list)    # those that vary here

    @property
    def fixed_axes(self) -> str:
        """The configuration columns that do not vary, as 'head_dim=128 bf16'."""
        fixed = [c for c in self.config_columns if c not in self.label_columns]
        return stats.config_label(self.summary.iloc[0], fixed) if len(self.summary) and fixed else ""

    @property
    def ok(self) -> pd.DataFrame:
        return self.summary[self.summary["status"] == "ok"]

    @property
    def not_ok(self) -> pd.DataFrame:
        return self.summary[self.summary["status"] != "ok"]

    def provenance(self) -> str:
        """One line: the devices, commits (dirty flagged) and timing methods behind the view."""
        parts = []
        for who, frame in (("ours", self.summary), ("peers", self.peers)):
            if frame.empty:
                continue
            files = frame.drop_duplicates("source_file")
            dirty = files.get("ctx_schedlab_dirty", pd.Series("", index=files.index)).astype(str) == "true"
            commits = sorted({str(c)[:10] + ("-dirty" if d else "")
                              for c, d in zip(files.get("ctx_schedlab_commit", files["source_file"]), dirty)})
            devices = sorted({str(d) for d in files.get("ctx_device", pd.Series(dtype=object)).dropna()})
            timing = sorted({str(t) for t in files.get("ctx_timing", pd.Series(dtype=object)).dropna()})
            parts.append(f"{who}: {', '.join(devices) or 'device ?'}, commit {', '.join(commits)}, "
                         f"timing: {'; '.join(timing) or '?'}")
        return " | ".join(parts)


class Dataset:
    def __init__(self, paths: Iterable[Path | str], results: pd.DataFrame, stalls: pd.DataFrame,
                 probes: pd.DataFrame, resources: pd.DataFrame, *, seed: int = stats.DEFAULT_SEED):
        self.paths = [Path(p) for p in paths]
        self.results = results
        self.latest = load.latest_runs(results)
        self.summary = stats.summarize(self.latest)
        self.stalls = load.latest_records(stalls)
        self.probes = load.latest_records(probes)
        self.resources = resources
        self.seed = seed

    @classmethod
    def load(cls, paths: Iterable[Path | str] | Path | str, *, seed: int = stats.DEFAULT_SEED) -> "Dataset":
        """Read every results, stall, probe and resources file below ``paths``. Paths that do
        not exist are treated as empty (a fresh clone has no results yet)."""
        if isinstance(paths, (str, Path)):
            paths = [paths]
        paths = [Path(p) for p in paths]
        existing = [p for p in paths if p.exists()]
        return cls(paths, load.load_results(existing), load.load_records(existing, "stalls"),
                   load.load_records(existing, "probes"), load.load_resources(existing), seed=seed)

    @property
    def empty(self) -> bool:
        return self.results.empty

    def experiments(self, family: str | None = None) -> list[tuple[str, str]]:
        """(device_slug, experiment) pairs with results, own experiments before peers."""
        s = self.summary
        if family is not None:
            s = s[s["family"] == family]
        pairs = {(d, e, int(p or 0)) for d, e, p in zip(s["device_slug"], s["experiment"], s["peer"])}
        return [(d, e) for d, e, _ in sorted(pairs, key=lambda t: (t[0], t[2], t[1]))]

    def families(self) -> list[str]:
        return sorted({str(f) for f in self.summary["family"].dropna()})

    def view(self, device_slug: str, experiment: str) -> ExperimentView:
        s = self.summary
        own = s[(s["device_slug"] == device_slug) & (s["experiment"] == experiment)].reset_index(drop=True)
        family = str(own["family"].dropna().iloc[0]) if own["family"].notna().any() else ""
        ccols = load.config_columns(own)
        lcols = stats.varying_columns(own, ccols)
        own["config"] = [stats.config_label(r, lcols) for _, r in own.iterrows()]
        peers = s[(s["device_slug"] == device_slug) & (s["peer"] == 1) & (s["experiment"] != experiment)
                  & (s["family"] == family) & (s["status"] == "ok")]
        peers = _at_configs(peers, own, ccols)
        raw = self.latest[(self.latest["device_slug"] == device_slug) & (self.latest["experiment"] == experiment)]
        records = {}
        for name, table in (("stalls", self.stalls), ("probes", self.probes)):
            records[name] = table[(table["device_slug"] == device_slug)
                                  & (table["experiment"] == experiment)].reset_index(drop=True)
        res = self.resources
        res = res[res["experiment"] == experiment].reset_index(drop=True)
        latest = self.latest[self.latest["device_slug"] == device_slug]
        ceilings = Ceilings(load.context_number(latest, "copy_bandwidth_GBps"),
                            load.context_number(latest, "matmul_tflops"))
        return ExperimentView(device_slug, experiment, family, own, peers,
                              stats.speedups(own, raw, seed=self.seed), records["stalls"],
                              records["probes"], res, ceilings, ccols, lcols)


# Axes that describe how our kernel stores the problem, not the problem: a peer that reads a
# contiguous KV cache (page 0 in its name) still computes the same attention.
LAYOUT_AXES = ("page", "page_size")


def _at_configs(peers: pd.DataFrame, own: pd.DataFrame, ccols: list[str]) -> pd.DataFrame:
    """Peer rows whose values agree with a configuration of ``own`` on every problem axis (and
    the dtype) both have, labelled (``config``) with that configuration's label."""
    candidates = sorted((set(load.axis_columns(own)) | set(ccols)) - set(LAYOUT_AXES))
    shared = [c for c in candidates if c in peers.columns and peers[c].notna().any()]
    if peers.empty or own.empty or not shared:
        return peers.iloc[0:0].assign(config=pd.Series(dtype=object))
    labels = {}
    for _, r in own.iterrows():
        labels.setdefault(stats.config_key(r, shared), r["config"])
    config = [labels.get(stats.config_key(r, shared)) for _, r in peers.iterrows()]
    peers = peers.assign(config=config)
    return peers[peers["config"].notna()].reset_index(drop=True)
