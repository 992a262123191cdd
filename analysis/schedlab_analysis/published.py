"""Published claims (analysis/published_claims.csv, one row per claim of
/work/shared/PUBLISHED.md) beside our measurements, with a verdict for every claim:

  reproduced                      same direction, and within tolerance where the claim is
                                  comparable here (direction-only claims: same direction)
  not reproduced                  measured, but the direction or the size differs
  proxy                           a stand-in was measured (``evidence=proxy``): the line says
                                  whether it moves as the claim does; never counted as
                                  reproduced
  holds by construction           (``evidence=by_construction``) true by how the kernels are
                                  built (fp8 moves half the bytes, ...): nothing to reproduce
  not measured yet                no results match the claim's ``match`` spec (yet)
  not applicable to this hardware (why)

Our direction of a timing change follows the one rule of ``stats.classify``: up or down only
when the whole 95% bootstrap interval of the change lies beyond the band (1%, or the A/A noise
floor of the run when larger); otherwise unchanged ("no difference detected"). Baseline and
variant are paired only within one run and one configuration (the claim's side-only keys
excepted); every verdict names the run(s) it used.

    python -m schedlab_analysis.published results [--plot out.png] [--claims FILE]

Claims file columns
  id, source, hardware, setting           what the claim is and where it comes from
  metric, unit                            time_us, tflops, gbps, speedup, memwait_share,
                                          mismatch_pct (from results / stall files), or
                                          static.<column> of the static resource report
                                          (resources.json: static.registers,
                                          static.vgpr_total, static.vgpr_spill_regs,
                                          static.waves_per_simd, static.occupancy, ...)
  baseline_value, variant_value           a change claim has both; a level claim only the
                                          variant value (speedup claims: baseline 1)
  direction                               lower_is_better / higher_is_better
  tolerance                               change claims: on the relative change (0.05 = 5
                                          points) and the band counted as "unchanged";
                                          level claims: relative to the published value
                                          (absolute when that is 0)
  reduce                                  single / max / min / geomean: how several matching
                                          configurations (or kernels, for static metrics)
                                          become one number
  match                                   ``key=value; ...``: ``experiment=..``, ``baseline=X``
                                          and ``variant=Y`` (variant names on each side),
                                          ``baseline.K=V`` / ``variant.K=V`` (one side only),
                                          anything else filters both sides; ``a|b`` lists
                                          alternatives, ``*`` globs (``dtype=fp8*``)
  applicability                           comparable / direction_only / not_applicable
  note                                    why (printed with the verdict)
  evidence (optional)                     measured (default) / proxy / by_construction
"""
from __future__ import annotations

import argparse
import csv
import fnmatch
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import stats
from .dataset import Dataset
from .load import ResultsFileError, config_columns, samples as repetition_samples

CLAIMS_FILE = Path(__file__).resolve().parent.parent / "published_claims.csv"
DEFAULT_RESULTS = Path(__file__).resolve().parents[2] / "results"

REPRODUCED, NOT_REPRODUCED, NOT_MEASURED, NOT_APPLICABLE = (
    "reproduced", "not reproduced", "not measured yet", "not applicable to this hardware")
PROXY, BY_CONSTRUCTION = "proxy", "holds by construction"
EVIDENCE = ("measured", "proxy", "by_construction")
TIMING_METRICS = {"time_us", "tflops", "gbps", "speedup"}
BENCHMARK_METRICS = {"time_us", "tflops", "gbps", "speedup", "memwait_share", "mismatch_pct"}
STATIC_PREFIX = "static."  # static.<column of resources.json>
ACCURACY_GATE = "accuracy gate failed"  # how common/harness/bench.cpp reports an inaccurate run
APPLICABILITY = ("comparable", "direction_only", "not_applicable")
DIRECTIONS = ("lower_is_better", "higher_is_better")
REDUCERS = ("single", "max", "min", "geomean")
COLUMNS = ("id", "source", "hardware", "setting", "metric", "unit", "baseline_value", "variant_value",
           "direction", "tolerance", "reduce", "match", "applicability", "note", "evidence")
REQUIRED_COLUMNS = COLUMNS[:-1]


class ClaimsFileError(ValueError):
    pass


@dataclass(frozen=True)
class Match:
    common: dict[str, tuple[str, ...]] = field(default_factory=dict)
    baseline: dict[str, tuple[str, ...]] = field(default_factory=dict)
    variant: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def side(self, which: str) -> dict[str, tuple[str, ...]]:
        return {**self.common, **(self.baseline if which == "baseline" else self.variant)}

    def describe(self) -> str:
        parts = [f"{k}={'|'.join(v)}" for k, v in self.common.items()]
        parts += [f"baseline.{k}={'|'.join(v)}" for k, v in self.baseline.items()]
        parts += [f"variant.{k}={'|'.join(v)}" for k, v in self.variant.items()]
        return "; ".join(parts)


def parse_match(text: str) -> Match:
    """'experiment=x; baseline=union; variant=separate; seq_len=8192; baseline.dtype=bf16'."""
    m = Match()
    for term in filter(None, (t.strip() for t in (text or "").split(";"))):
        key, sep, value = term.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise ClaimsFileError(f"match term {term!r} is not key=value")
        alternatives = tuple(v.strip() for v in value.split("|"))
        if key in ("baseline", "variant"):
            getattr(m, key)["variant"] = alternatives
        elif key.startswith(("baseline.", "variant.")):
            side, _, column = key.partition(".")
            getattr(m, side)[column] = alternatives
        else:
            m.common[key] = alternatives
    return m


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    hardware: str
    setting: str
    metric: str
    unit: str
    baseline_value: float | None
    variant_value: float | None
    direction: str
    tolerance: float
    reduce: str
    match: Match
    applicability: str
    note: str
    evidence: str = "measured"

    @property
    def is_change(self) -> bool:
        return self.baseline_value is not None


def _number(text: str, what: str, where: str) -> float | None:
    text = (text or "").strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError as e:
        raise ClaimsFileError(f"{where}: {what} {text!r} is not a number") from e


def load_claims(path: Path | str = CLAIMS_FILE) -> list[Claim]:
    """Read and check the claims file; errors name the file and the claim."""
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        missing = set(REQUIRED_COLUMNS) - set(reader.fieldnames or [])
        if missing:
            raise ClaimsFileError(f"{path}: missing columns {sorted(missing)}")
        rows = list(reader)
    claims, seen = [], set()
    for n, row in enumerate(rows, start=2):
        cid = (row["id"] or "").strip()
        where = f"{path}:{n} ({cid or 'no id'})"
        if not cid or cid in seen:
            raise ClaimsFileError(f"{where}: id missing or repeated")
        seen.add(cid)
        applicability = row["applicability"].strip()
        if applicability not in APPLICABILITY:
            raise ClaimsFileError(f"{where}: applicability must be one of {APPLICABILITY}")
        evidence = (row.get("evidence") or "").strip() or "measured"
        if evidence not in EVIDENCE:
            raise ClaimsFileError(f"{where}: evidence must be one of {EVIDENCE}")
        try:
            match = parse_match(row["match"])
        except ClaimsFileError as e:
            raise ClaimsFileError(f"{where}: {e}") from e
        claim = Claim(id=cid, source=row["source"].strip(), hardware=row["hardware"].strip(),
                      setting=row["setting"].strip(), metric=row["metric"].strip(), unit=row["unit"].strip(),
                      baseline_value=_number(row["baseline_value"], "baseline_value", where),
                      variant_value=_number(row["variant_value"], "variant_value", where),
                      direction=row["direction"].strip(), tolerance=_number(row["tolerance"], "tolerance", where) or 0.0,
                      reduce=row["reduce"].strip() or "single", match=match, applicability=applicability,
                      note=row["note"].strip(), evidence=evidence)
        if applicability != "not_applicable":
            _check(claim, where)
        claims.append(claim)
    return claims


def _check(c: Claim, where: str) -> None:
    if c.metric not in BENCHMARK_METRICS and not (c.metric.startswith(STATIC_PREFIX) and
                                                  len(c.metric) > len(STATIC_PREFIX)):
        raise ClaimsFileError(f"{where}: unknown metric {c.metric!r} (one of {sorted(BENCHMARK_METRICS)} "
                              f"or {STATIC_PREFIX}<resources.json column>)")
    if c.variant_value is None:
        raise ClaimsFileError(f"{where}: variant_value is required")
    if c.direction not in DIRECTIONS:
        raise ClaimsFileError(f"{where}: direction must be one of {DIRECTIONS}")
    if c.reduce not in REDUCERS:
        raise ClaimsFileError(f"{where}: reduce must be one of {REDUCERS}")
    if not c.is_change and c.applicability == "direction_only":
        raise ClaimsFileError(f"{where}: a level claim (no baseline_value) has no direction to compare")
    if c.is_change and not (c.match.baseline or c.match.variant):
        raise ClaimsFileError(f"{where}: a change claim needs baseline=/variant= (or side-specific) terms")


# ------------------------------------------------------------------------------ measuring

def _value_matches(value: object, patterns: tuple[str, ...]) -> bool:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    for p in patterns:
        try:
            if float(value) == float(p):
                return True
            continue
        except (TypeError, ValueError):
            pass
        if fnmatch.fnmatchcase(str(value), p):
            return True
    return False


def select(table: pd.DataFrame, filters: dict[str, tuple[str, ...]]) -> pd.DataFrame:
    """Rows of ``table`` that satisfy every filter (a column the table lacks matches nothing)."""
    keep = pd.Series(True, index=table.index)
    for column, patterns in filters.items():
        if column not in table.columns:
            return table.iloc[0:0]
        keep &= table[column].map(lambda v, p=patterns: _value_matches(v, p)).astype(bool)
    return table[keep]


def _reduce(values: list[float], how: str) -> float | None:
    values = [v for v in values if v is not None and np.isfinite(v)]
    if not values or (how == "single" and len(values) != 1):
        return None
    if how == "max":
        return max(values)
    if how == "min":
        return min(values)
    if how == "geomean":
        if any(v < 0 for v in values):
            return None
        return 0.0 if min(values) == 0 else float(np.exp(np.mean(np.log(values))))
    return values[0]


def _ratio(base: float, var: float) -> float:
    if base == 0:
        return 1.0 if var == 0 else math.inf
    return var / base


@dataclass
class Measurement:
    our_base: float | None = None     # change claims: our baseline value (reduced)
    our_variant: float | None = None  # our variant value (level claims: the value)
    our_ratio: float | None = None    # change claims: variant / baseline (speedup: the speedup)
    n: int = 0                        # configurations (pairs) or kernels behind the number
    devices: str = ""
    problem: str = ""                 # why there is no number
    failed_gate: str = ""             # an accuracy-gate failure among the matching runs
    ci: tuple[float, float] | None = None  # change claims on timing: 95% bootstrap CI of our_ratio
    band: float = stats.PRACTICAL_BAND     # 1%, or the A/A floor of the runs when larger
    runs: str = ""                         # the run(s) the numbers come from


def _benchmark_table(claim: Claim, data: Dataset) -> pd.DataFrame:
    ok = data.summary[data.summary["status"] == "ok"].copy()
    if claim.metric == "memwait_share":
        stalls = data.stalls
        if stalls.empty or "memwait_share" not in stalls:
            return ok.iloc[0:0].assign(value=pd.Series(dtype=float))
        # Only the stall records of the same run (and binary) as the harness row.
        mw = stalls.groupby(["device_slug", "experiment", "run", "benchmark"])["memwait_share"].mean()
        ok["value"] = [mw.get((d, e, r, b), np.nan) for d, e, r, b in
                       zip(ok["device_slug"], ok["experiment"], ok["run"], ok["benchmark"])]
    else:
        ok["value"] = ok["time_us" if claim.metric == "speedup" else claim.metric]
    return ok[ok["value"].notna()]


def measure(claim: Claim, data: Dataset) -> Measurement:
    if claim.metric.startswith(STATIC_PREFIX):
        return _measure_static(claim, data)
    table = _benchmark_table(claim, data)
    if not claim.is_change:
        if claim.metric == "mismatch_pct":
            # A run that failed its accuracy gate has no counters, but it answers an accuracy claim.
            s = data.summary
            gate = select(s[(s["status"] == "failed") & s["error_message"].astype(str).str.startswith(ACCURACY_GATE)],
                          claim.match.side("variant"))
            if len(gate):
                return Measurement(n=len(gate), devices=_devices(gate), failed_gate=(
                    f"{len(gate)} run(s) failed the accuracy gate, e.g. {gate['benchmark'].iloc[0]}: "
                    f"{gate['error_message'].iloc[0]}"))
        rows = select(table, claim.match.side("variant"))
        value = _reduce(list(rows["value"]), claim.reduce)
        return Measurement(our_variant=value, n=len(rows), devices=_devices(rows),
                           problem=_problem(len(rows), claim.reduce, value),
                           runs=", ".join(run_name(str(r)) for r in sorted(set(rows["run"]))))
    base = select(table, claim.match.side("baseline"))
    var = select(table, claim.match.side("variant"))
    if base.empty or var.empty:
        side = "baseline" if base.empty else "variant"
        elsewhere = select(data.results, claim.match.side(side))
        why = (f"; {side} rows exist only in other runs, and a run is never paired with another"
               if len(elsewhere) else "")
        return Measurement(problem=f"no results match ({side} side) in the run shown{why}")
    side_keys = set(claim.match.baseline) | set(claim.match.variant)
    ccols = [c for c in config_columns(pd.concat([base, var])) if c not in side_keys]
    pair_cols = [c for c in ["device_slug", "experiment", "run"] + ccols
                 if c not in side_keys and c in base and c in var]
    merged = base.merge(var, on=pair_cols, suffixes=("_b", "_v"))
    if merged.empty:
        return Measurement(problem="baseline and variant rows exist but none share a run and a configuration "
                                   f"(paired on {', '.join(pair_cols)}); nothing compared across runs")
    b_rows = [{**{c: r[c] for c in pair_cols}, **{k[:-2]: r[k] for k in r.index if k.endswith("_b")}}
              for _, r in merged.iterrows()]
    v_rows = [{**{c: r[c] for c in pair_cols}, **{k[:-2]: r[k] for k in r.index if k.endswith("_v")}}
              for _, r in merged.iterrows()]
    for b, v in zip(b_rows, v_rows):
        stats.check_comparable(b, v, ccols)
    ratios = [_pair_ratio(claim.metric, b, v) for b, v in zip(b_rows, v_rows)]
    ratio = _reduce(ratios, claim.reduce)
    ci = _bootstrap_ci(claim, data, b_rows, v_rows) if claim.metric in TIMING_METRICS else None
    runs = sorted({str(r) for r in merged["run"]})
    return Measurement(our_base=_reduce([float(b["value"]) for b in b_rows], "geomean"),
                       our_variant=_reduce([float(v["value"]) for v in v_rows], "geomean"),
                       our_ratio=ratio, n=len(b_rows), devices=_devices(pd.concat([base, var])),
                       problem=_problem(len(b_rows), claim.reduce, ratio, paired=True), ci=ci,
                       band=max([stats.PRACTICAL_BAND] + [data.noise_floor(d, e, r) for d, e, r in
                                                          set(zip(merged["device_slug"], merged["experiment"],
                                                                  merged["run"]))]),
                       runs=", ".join(run_name(r) for r in runs))


def run_name(run: str) -> str:
    """A run as a reader finds it: its run id, or (older files) the results file's name."""
    return Path(run).name if run.endswith((".json", ".json.gz")) else run


def _pair_ratio(metric: str, b: dict, v: dict) -> float:
    if metric == "speedup":
        return float(b["value"]) / float(v["value"])
    return _ratio(float(b["value"]), float(v["value"]))


def _bootstrap_ci(claim: Claim, data: Dataset, b_rows: list[dict], v_rows: list[dict],
                  n_boot: int = 2000) -> tuple[float, float] | None:
    """95% percentile-bootstrap interval of the reduced ratio: each pair's medians resampled
    from its repetitions (seeded), the claim's reduction applied per resample."""
    samp = data.samples
    rng = np.random.default_rng(data.seed)
    reps = []
    for b, v in zip(b_rows, v_rows):
        tb = samp.get((b["source_file"], b["benchmark"]))
        tv = samp.get((v["source_file"], v["benchmark"]))
        if tb is None or tv is None or tb.size < 2 or tv.size < 2:
            return None
        mb = np.median(tb[rng.integers(0, tb.size, size=(n_boot, tb.size))], axis=1)
        mv = np.median(tv[rng.integers(0, tv.size, size=(n_boot, tv.size))], axis=1)
        if claim.metric == "time_us":
            r = mv / mb
        elif claim.metric == "speedup":
            r = mb / mv
        else:  # a rate: work over time, the work of each side as declared
            work = "flops" if claim.metric == "tflops" else "bytes"
            r = (float(v[work]) / mv) / (float(b[work]) / mb)
        reps.append(r)
    stack = np.vstack(reps)
    how = claim.reduce
    if how == "max":
        red = stack.max(axis=0)
    elif how == "min":
        red = stack.min(axis=0)
    elif how == "geomean":
        red = np.exp(np.log(stack).mean(axis=0))
    else:
        if stack.shape[0] != 1:
            return None
        red = stack[0]
    lo, hi = np.percentile(red, [2.5, 97.5])
    return float(lo), float(hi)


def _measure_static(claim: Claim, data: Dataset) -> Measurement:
    res = data.resources
    column = claim.metric[len(STATIC_PREFIX):]
    if res.empty or column not in res.columns:
        return Measurement(problem=f"no static resource report with '{column}'")
    sides = {}
    for which in ("baseline", "variant") if claim.is_change else ("variant",):
        rows = select(res, claim.match.side(which))
        values = pd.to_numeric(rows[column], errors="coerce").dropna()
        sides[which] = (_reduce([float(v) for v in values], claim.reduce), len(rows))
    value, n = sides["variant"]
    if not claim.is_change:
        return Measurement(our_variant=value, n=n, devices="static report",
                           problem=_problem(n, claim.reduce, value), runs="static report")
    base, nb = sides["baseline"]
    if base is None or value is None:
        return Measurement(problem=f"no static report rows match (baseline {nb}, variant {n} kernels)")
    return Measurement(our_base=base, our_variant=value, our_ratio=_ratio(base, value), n=n,
                       devices="static report", runs="static report")


def _devices(rows: pd.DataFrame) -> str:
    return ", ".join(sorted({str(d) for d in rows.get("device_slug", pd.Series(dtype=object)).dropna()}))


def _problem(n: int, how: str, value: float | None, paired: bool = False) -> str:
    if value is not None:
        return ""
    what = "configuration pairs" if paired else "configurations"
    if n == 0:
        return f"no results match ({what}: 0)"
    if how == "single":
        return f"{n} {what} match but reduce=single; narrow the match"
    return f"{n} {what} match but give no finite number"


# ------------------------------------------------------------------------------ verdicts

@dataclass
class Outcome:
    claim: Claim
    verdict: str            # one of the four verdicts (without the reason)
    text: str               # the verdict line as printed
    published: str
    ours: str
    published_change: float | None = None   # change claims: relative change (ratio - 1)
    our_change: float | None = None


def _direction_class(change: float, tol: float) -> int:
    return 0 if abs(change) <= tol else (1 if change > 0 else -1)


def _fmt(x: float | None, unit: str = "") -> str:
    if x is None or not np.isfinite(x):
        return "n/a"
    text = f"{x:.4g}"
    return f"{text} {unit}".rstrip()


def _pct(change: float | None) -> str:
    return "n/a" if change is None or not np.isfinite(change) else f"{change:+.1%}"


def _word(cls: int, metric: str) -> str:
    return {0: "unchanged", 1: "up", -1: "down"}[cls] + (" (speedup)" if metric == "speedup" else "")


def judge(claim: Claim, m: Measurement | None) -> Outcome:
    if claim.applicability == "not_applicable":
        return Outcome(claim, NOT_APPLICABLE, f"{NOT_APPLICABLE} ({claim.note})", _published(claim), "n/a")
    published = _published(claim)
    if claim.evidence == "by_construction":
        return Outcome(claim, BY_CONSTRUCTION, f"{BY_CONSTRUCTION} ({claim.note}); not counted as reproduced",
                       published, "n/a")
    if m is not None and m.failed_gate:
        return Outcome(claim, NOT_REPRODUCED, f"{NOT_REPRODUCED} ({m.failed_gate})", published, "accuracy gate failed")
    if m is None or m.problem:
        why = m.problem if m else "not measured"
        return Outcome(claim, NOT_MEASURED, f"{NOT_MEASURED} ({why}; match: {claim.match.describe()})",
                       published, "n/a")
    tol = claim.tolerance
    if not claim.is_change:
        pub = claim.variant_value
        ours = m.our_variant
        diff = abs(ours - pub) / abs(pub) if pub else abs(ours - pub)
        ok = diff <= tol
        rel = f"{(ours / pub - 1):+.1%} vs published" if pub else f"{ours - pub:+.3g} vs published"
        verdict = REPRODUCED if ok else NOT_REPRODUCED
        text = (f"{verdict} (ours {_fmt(ours, claim.unit)}, {rel}; "
                f"tolerance {tol:.0%}; {m.n} config(s) on {m.devices}, reduce={claim.reduce}; run {m.runs or '?'})")
        if claim.evidence == "proxy":
            text, verdict = f"{PROXY} (a stand-in, not the claimed quantity; {text})", PROXY
        return Outcome(claim, verdict, text, published, _fmt(ours, claim.unit))
    pub_change = _published_ratio(claim) - 1
    our_change = m.our_ratio - 1
    # The published change is read with the same band as ours (it has no interval to test).
    pub_class = _direction_class(pub_change, m.band if m.ci is not None else tol)
    if m.ci is not None:
        word = stats.classify(our_change, m.ci[0] - 1, m.ci[1] - 1, m.band)
        our_class = {stats.FASTER: 1, stats.SLOWER: -1}.get(word, 0)  # "faster" here = the ratio rose
        interval = f" [95% CI {_pct(m.ci[0] - 1)}, {_pct(m.ci[1] - 1)}; band +-{m.band:.1%}]"
    else:
        our_class = _direction_class(our_change, tol)
        interval = " (no interval: a single measurement per side)" if claim.metric not in TIMING_METRICS else \
            " (no interval: no repetitions)"
    same = pub_class == our_class
    ours = (f"{_fmt(m.our_base, claim.unit)} -> {_fmt(m.our_variant, claim.unit)} ({_pct(our_change)})"
            if claim.metric != "speedup" else f"{m.our_ratio:.3f}x")
    detail = (f"published {_word(pub_class, claim.metric)} {_pct(pub_change)}, "
              f"ours {_word(our_class, claim.metric)} {_pct(our_change)}{interval}; "
              f"{m.n} pair(s) on {m.devices}, reduce={claim.reduce}; run {m.runs or '?'}")
    if claim.applicability == "direction_only":
        verdict = REPRODUCED if same else NOT_REPRODUCED
        text = f"{verdict} (direction only, {claim.note}: {detail})"
    else:
        close = abs(our_change - pub_change) <= tol
        verdict = REPRODUCED if same and close else NOT_REPRODUCED
        size = "" if close else f"; size differs by more than {tol:.0%}"
        text = f"{verdict} ({detail}; tolerance {tol:.0%}{size})"
    if claim.evidence == "proxy":
        moved = "moves as the claim does" if verdict == REPRODUCED else "does not move as the claim does"
        text = f"{PROXY} (a stand-in, not the claimed change: it {moved}; {text})"
        verdict = PROXY
    return Outcome(claim, verdict, text, published, ours, pub_change, our_change)


def _published_ratio(claim: Claim) -> float:
    if claim.metric == "speedup":
        return claim.variant_value / claim.baseline_value
    return _ratio(claim.baseline_value, claim.variant_value)


def _published(claim: Claim) -> str:
    if claim.variant_value is None:
        return "no figure"
    if not claim.is_change:
        return _fmt(claim.variant_value, claim.unit)
    if claim.metric == "speedup":
        return f"{claim.variant_value / claim.baseline_value:.3g}x"
    return (f"{_fmt(claim.baseline_value, claim.unit)} -> {_fmt(claim.variant_value, claim.unit)} "
            f"({_pct(_published_ratio(claim) - 1)})")


def evaluate(claims: list[Claim], data: Dataset) -> list[Outcome]:
    return [judge(c, None if c.applicability == "not_applicable" else measure(c, data)) for c in claims]


def outcome_table(outcomes: list[Outcome]) -> pd.DataFrame:
    return pd.DataFrame([{"id": o.claim.id, "metric": o.claim.metric, "hardware": o.claim.hardware,
                          "published": o.published, "ours": o.ours, "verdict": o.verdict, "detail": o.text}
                         for o in outcomes])


def plot_outcomes(outcomes: list[Outcome], path: Path) -> Path:
    """Published vs our relative change for every change claim we could measure."""
    from matplotlib.figure import Figure
    shown = [o for o in outcomes if o.our_change is not None and o.published_change is not None
             and np.isfinite(o.our_change) and np.isfinite(o.published_change)]
    fig = Figure(figsize=(8, 1.2 + 0.35 * max(len(shown), 1)))
    ax = fig.subplots()
    if shown:
        y = np.arange(len(shown))
        ax.barh(y - 0.2, [o.published_change * 100 for o in shown], 0.4, label="published", color="gray")
        ax.barh(y + 0.2, [o.our_change * 100 for o in shown], 0.4, label="ours",
                color=[{REPRODUCED: "tab:green", PROXY: "tab:orange"}.get(o.verdict, "tab:red") for o in shown])
        ax.set_yticks(y)
        ax.set_yticklabels([f"{o.claim.id} ({o.claim.metric})" for o in shown], fontsize=7)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.legend(fontsize=7)
    else:
        ax.text(0.5, 0.5, "no change claim measured yet", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("relative change, % (speedup claims: speedup - 1)")
    ax.set_title("published claims vs our measurements (green: reproduced, orange: proxy, red: not reproduced)", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="schedlab-published", description=__doc__.split("\n")[0])
    p.add_argument("results_dir", nargs="?", type=Path, default=DEFAULT_RESULTS,
                   help=f"results directory (default {DEFAULT_RESULTS}); may be missing or empty")
    p.add_argument("--claims", type=Path, default=CLAIMS_FILE)
    p.add_argument("--plot", type=Path, help="write a PNG of published vs our changes here")
    args = p.parse_args(argv)
    try:
        claims = load_claims(args.claims)
        data = Dataset.load(args.results_dir)
    except (ClaimsFileError, ResultsFileError, OSError) as e:
        print(f"published: error: {e}", file=sys.stderr)
        return 2
    if data.empty:
        print(f"published: no benchmark results under {args.results_dir} yet; "
              "claims that need measurements are 'not measured yet'")
    outcomes = evaluate(claims, data)
    for o in outcomes:
        c = o.claim
        print(f"[{c.id}] {c.source}; {c.hardware}")
        print(f"    setting:   {c.setting}")
        if c.applicability != "not_applicable":
            print(f"    published: {o.published} ({c.metric}, {c.direction.replace('_', ' ')})")
            print(f"    ours:      {o.ours}")
        print(f"    verdict:   {o.text}")
    counts = pd.Series([o.verdict for o in outcomes]).value_counts()
    print("published: " + ", ".join(f"{n} {v}" for v, n in counts.items()) + f" ({len(outcomes)} claims)")
    if args.plot:
        print(f"published: wrote {plot_outcomes(outcomes, args.plot)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
