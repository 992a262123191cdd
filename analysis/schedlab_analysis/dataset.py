"""Everything under a results directory, grouped per (device, experiment).

    data = Dataset.load("results")
    for device, experiment in data.experiments():
        view = data.view(device, experiment)   # summary, peers, speedups, stalls, ceilings

Each experiment is shown from one run (device call): by default the run that measured the
most configurations from a clean commit, the newest on a tie (``load.select_runs``); ``view(..., run=...)`` or
``Dataset.load(paths)`` over named files chooses another. Variants are compared only with
their baseline from that run. ncu stall records join only the harness rows of the run and
binary they profiled (``load.attach_records``). Probe records come from a separate probe
build (its timings are perturbed and not kept), so they are shown on their own, never set
beside a time. Peers (``peer=1`` rows, experiment ``peers_<family>``) join an experiment of
the same family on the device when they share its configuration axes; they are preferred
from the same run, else from their own most complete run.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields, replace

import numpy as np
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
    summary: pd.DataFrame        # this experiment's benchmarks in one run (ok, failed and skipped)
    peers: pd.DataFrame          # peer benchmarks at the same configurations (ok only)
    speedups: pd.DataFrame       # variant over baseline, with bootstrap CI
    stalls: pd.DataFrame         # ncu / ATT stall records of this run's binary (else of stall_run)
    probes: pd.DataFrame         # in-kernel wait-point probe records (the newest probe build)
    resources: pd.DataFrame      # static report rows of this experiment
    ceilings: Ceilings
    config_columns: list[str] = field(default_factory=list)   # axes + dtype
    label_columns: list[str] = field(default_factory=list)    # those that vary here
    run: str = ""                                             # the run shown
    stall_rows: pd.DataFrame = field(default_factory=pd.DataFrame)  # harness rows the stalls profiled
    noise_floor: float = 0.0                                  # A/A floor of the run (0: no control)

    @property
    def band(self) -> float:
        """The practical band of this run: 1%, or the A/A noise floor when larger."""
        return max(stats.PRACTICAL_BAND, self.noise_floor)

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
        self.latest = load.select_runs(results)
        self.summary = stats.summarize(self.latest)
        self.stalls = load.attach_records(stalls, results)
        self.unattached = load.unattached_records(stalls, results, attached=self.stalls)
        self.probes = probes
        self.resources = resources
        self.seed = seed

    @classmethod
    def load(cls, paths: Iterable[Path | str] | Path | str, *, seed: int = stats.DEFAULT_SEED) -> "Dataset":
        """Read every results, stall, probe and resources file below ``paths``. Paths that do
        not exist are treated as empty (a fresh clone has no results yet); ``empty`` says when
        there are no results, so load's NoResultsWarning is not given."""
        paths = load.as_paths(paths)
        existing = [p for p in paths if p.exists()]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", load.NoResultsWarning)
            results = load.load_results(existing)
        return cls(paths, results, load.load_records(existing, "stalls"),
                   load.load_records(existing, "probes"), load.load_resources(existing), seed=seed)

    @property
    def empty(self) -> bool:
        return self.results.empty

    @property
    def samples(self) -> dict[tuple[str, str], "np.ndarray"]:
        """(source_file, benchmark) -> per-repetition times (us) of the selected runs."""
        if getattr(self, "_samples", None) is None:
            samp = load.samples(self.latest) if len(self.latest) else pd.DataFrame(
                columns=["source_file", "benchmark", "time_us", "from_aggregate"])
            samp = samp[~samp["from_aggregate"].astype(bool)]
            self._samples = load.times_by_record(samp)
        return self._samples

    def noise_floor(self, device_slug: str, experiment: str, run: str) -> float:
        """The A/A noise floor of one run of an experiment (0 when it has no control)."""
        key = (device_slug, experiment, run)
        cache = self.__dict__.setdefault("_floors", {})
        if key not in cache:
            view = self.view(device_slug, experiment, run)
            cache[key] = view.noise_floor
        return cache[key]

    def experiments(self, family: str | None = None) -> list[tuple[str, str]]:
        """(device_slug, experiment) pairs with results, own experiments before peers."""
        s = self.summary
        if family is not None:
            s = s[s["family"] == family]
        pairs = {(d, e, int(p or 0)) for d, e, p in zip(s["device_slug"], s["experiment"], s["peer"])}
        return [(d, e) for d, e, _ in sorted(pairs, key=lambda t: (t[0], t[2], t[1]))]

    def families(self) -> list[str]:
        return sorted({str(f) for f in self.summary["family"].dropna()})

    def runs(self, device_slug: str, experiment: str) -> pd.DataFrame:
        """The experiment's runs (``load.run_table``), the one shown by default last."""
        r = self.results
        table = load.run_table(r[(r["device_slug"] == device_slug) & (r["experiment"] == experiment)])
        return table.sort_values(["clean", "configs", "run_time", "run"]).reset_index(drop=True)

    def _run_summary(self, device_slug: str, experiment: str, run: str) -> pd.DataFrame:
        r = self.results
        rows = r[(r["device_slug"] == device_slug) & (r["experiment"] == experiment) & (r["run"] == run)]
        if rows.empty:
            raise KeyError(f"no results of {device_slug}/{experiment} in run {run!r}")
        return stats.summarize(rows)

    def view(self, device_slug: str, experiment: str, run: str | None = None) -> ExperimentView:
        """One experiment in one run (by default ``select_runs``' run). Computed once per
        (device, experiment, run) and handed out as a copy (frames copy on write): a README
        asks for the same run's view once per row of its tables, and each costs a summary
        and a bootstrap over every configuration."""
        cache = self.__dict__.setdefault("_views", {})
        key = (device_slug, experiment, run)
        if key not in cache:
            cache[key] = self._view(device_slug, experiment, run)
        view = cache[key]
        return replace(view, config_columns=list(view.config_columns), label_columns=list(view.label_columns),
                       **{f.name: getattr(view, f.name).copy(deep=False) for f in fields(view)
                          if isinstance(getattr(view, f.name), pd.DataFrame)})

    def _view(self, device_slug: str, experiment: str, run: str | None) -> ExperimentView:
        s = self.summary
        if run is None:
            own = s[(s["device_slug"] == device_slug) & (s["experiment"] == experiment)].reset_index(drop=True)
        else:
            own = self._run_summary(device_slug, experiment, run)
        run = str(own["run"].iloc[0]) if len(own) else ""
        family = str(own["family"].dropna().iloc[0]) if own["family"].notna().any() else ""
        ccols = load.config_columns(own)
        lcols = stats.varying_columns(own, ccols)
        own["config"] = [stats.config_label(r, lcols) for _, r in own.iterrows()]
        peers = self._peers(device_slug, family, experiment, run)
        peers = _at_configs(peers, own, ccols)
        raw = self.results[(self.results["device_slug"] == device_slug) & (self.results["experiment"] == experiment)
                           & (self.results["run"] == run)]
        st = self.stalls[(self.stalls["device_slug"] == device_slug) & (self.stalls["experiment"] == experiment)]
        stall_run = run if (st["run"] == run).any() else (
            str(st.sort_values("made_time")["run"].iloc[-1]) if len(st) else "")
        stalls = st[st["run"] == stall_run].reset_index(drop=True)
        stall_rows = own if stall_run == run else (
            self._run_summary(device_slug, experiment, stall_run) if stall_run else own.iloc[0:0])
        if len(stall_rows) and stall_run != run:
            stall_rows = stall_rows.assign(config=[stats.config_label(r, lcols) for _, r in stall_rows.iterrows()])
        pr = self.probes
        pr = pr[(pr["device_slug"] == device_slug) & (pr["experiment"] == experiment)] if len(pr) else pr
        if len(pr):  # the newest probe build's records
            pr = pr[pr["context_key"] == pr.sort_values("made_time")["context_key"].iloc[-1]]
        records = {"stalls": stalls, "probes": pr.reset_index(drop=True)}
        res = self.resources
        res = res[res["experiment"] == experiment].reset_index(drop=True)
        ceilings = Ceilings(load.context_number(raw, "copy_bandwidth_GBps"),
                            load.context_number(raw, "matmul_tflops"))
        sp = stats.speedups(own, raw, seed=self.seed)
        return ExperimentView(device_slug, experiment, family, own, peers, sp, records["stalls"],
                              records["probes"], res, ceilings, ccols, lcols, run, stall_rows,
                              stats.noise_floor(sp))

    def _peers(self, device_slug: str, family: str, experiment: str, run: str) -> pd.DataFrame:
        """Peer rows of the family: from the same run when it timed peers, else each peer
        experiment's default run."""
        s = self.summary
        keep = (s["device_slug"] == device_slug) & (s["peer"] == 1) & (s["experiment"] != experiment) \
            & (s["family"] == family) & (s["status"] == "ok")
        r = self.results
        same = r[(r["device_slug"] == device_slug) & (r["peer"] == 1) & (r["family"] == family) & (r["run"] == run)]
        if len(same) and run:
            peers = stats.summarize(same)
            return peers[peers["status"] == "ok"]
        return s[keep]


# Axes that describe how our kernel stores the problem, not the problem: a peer that reads a
# contiguous KV cache (page 0 in its name) still computes the same attention. A paged peer
# (page > 0) is matched on its page too: one key a page is another workload than sixteen.
LAYOUT_AXES = ("page", "page_size")


def _page(row: pd.Series) -> int:
    """The row's page size (0: a contiguous cache, or no page axis)."""
    for c in LAYOUT_AXES:
        v = row.get(c)
        if v is not None and not (isinstance(v, float) and np.isnan(v)):
            return int(v)
    return 0


def _at_configs(peers: pd.DataFrame, own: pd.DataFrame, ccols: list[str]) -> pd.DataFrame:
    """Peer rows whose values agree with a configuration of ``own`` on every problem axis (and
    the dtype) both have, and on the page where the peer is paged, labelled (``config``) with
    that configuration's label."""
    candidates = sorted((set(load.axis_columns(own)) | set(ccols)) - set(LAYOUT_AXES))
    shared = [c for c in candidates if c in peers.columns and peers[c].notna().any()]
    if peers.empty or own.empty or not shared:
        return peers.iloc[0:0].assign(config=pd.Series(dtype=object))
    labels, paged = {}, {}
    for _, r in own.iterrows():
        key = stats.config_key(r, shared)
        labels.setdefault(key, r["config"])
        paged.setdefault((key, _page(r)), r["config"])
    config = []
    for _, r in peers.iterrows():
        key, page = stats.config_key(r, shared), _page(r)
        config.append(paged.get((key, page)) if page > 0 else labels.get(key))
    peers = peers.assign(config=config)
    return peers[peers["config"].notna()].reset_index(drop=True)
