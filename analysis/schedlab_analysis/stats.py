"""Statistics over repetitions: medians with spread, bootstrap CIs, speedups over a baseline.

Conventions (also in analysis/README.md):
  * the centre is the median over repetitions;
  * the spread shown is the interquartile range (25th-75th percentile) over repetitions, or
    +/- the stddev aggregate when a run kept only aggregates;
  * a speedup is median(baseline time) / median(variant time); its 95% CI is a percentile
    bootstrap that resamples each side's repetitions independently, with a seeded
    numpy Generator (same seed, same interval);
  * a variant is compared only with its baseline from the same run (device call) and the
    same configuration (axes and dtype); anything else raises ``ComparisonError``;
  * a difference is called "faster" or "slower" only when its whole 95% interval lies
    outside the practical band (so it excludes zero, too): +-1%, or the run's A/A noise
    floor when that is larger. Otherwise: "no difference detected". The A/A floor is the
    median, over the run's configurations, of |change| between the baseline and its second
    registration ``<baseline>_aa`` (label ``control=aa``): the same kernel measured twice.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import load
from .load import aggregate_stddev, config_columns, samples as repetition_samples

DEFAULT_SEED = 20241120
DEFAULT_BOOTSTRAP = 10_000
SPREAD_IQR = "IQR over repetitions"
SPREAD_STDDEV = "+/- stddev aggregate (no per-repetition rows)"
SPREAD_NONE = "single sample"

PRACTICAL_BAND = 0.01          # +-1%: smaller changes are not called faster or slower
AA_SUFFIX = "_aa"              # the A/A control: the baseline registered a second time
FASTER, SLOWER, NO_DIFFERENCE = "faster", "slower", "no difference detected"
NO_CI = "no difference detected (no repetitions, no interval)"


class ComparisonError(ValueError):
    """A comparison of rows from different runs or different configurations."""


def classify(change: float, low: float, high: float, band: float = PRACTICAL_BAND) -> str:
    """'faster' / 'slower' / 'no difference detected' for a relative change (speedup - 1,
    > 0 = faster) with its 95% interval [low, high]: a direction only when the whole interval
    lies beyond +-band."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return NO_CI
    if low > band:
        return FASTER
    if high < -band:
        return SLOWER
    return NO_DIFFERENCE


def is_control(variant: object) -> bool:
    return isinstance(variant, str) and variant.endswith(AA_SUFFIX)


def check_comparable(base: pd.Series | dict, var: pd.Series | dict, columns: list[str]) -> None:
    """Raise ComparisonError unless ``base`` and ``var`` come from one run and configuration."""
    if base.get("run") != var.get("run"):
        raise ComparisonError(f"{var.get('benchmark')} (run {var.get('run')}) compared with "
                              f"{base.get('benchmark')} from another run ({base.get('run')}): a variant is "
                              "compared only with its baseline from the same run")
    differ = [c for c in columns if config_key(base, [c]) != config_key(var, [c])]
    if differ:
        raise ComparisonError(f"{var.get('benchmark')} compared with {base.get('benchmark')}: configurations "
                              f"differ in {', '.join(differ)}")

# Columns summarize() adds (present even when there is nothing to summarize).
SUMMARY_COLUMNS = ["n", "time_lo", "time_hi", "spread_kind", "flops", "bytes", "mismatch_pct", "rel_l2_err",
                   "max_abs_err", "tflops", "tflops_lo", "tflops_hi", "gbps", "gbps_lo", "gbps_hi"]

# Per-row measurement fields that make no sense on a one-row-per-benchmark summary.
_PER_ROW = ["name", "run_type", "aggregate_name", "aggregate_unit", "repetition_index", "real_time",
            "cpu_time", "iterations", "time_us", "FLOP_per_s", "bytes_per_s", "from_aggregate"]


def bootstrap_ratio_ci(numerator, denominator, *, n_boot: int = DEFAULT_BOOTSTRAP,
                       level: float = 0.95, seed: int = DEFAULT_SEED) -> tuple[float, float, float]:
    """median(numerator) / median(denominator) and its percentile-bootstrap CI.

    Each side is resampled with replacement independently (the repetitions of two variants
    are separate runs, not pairs). Returns (point, low, high); low/high are NaN when a side
    has fewer than two samples.
    """
    num = np.asarray(numerator, dtype=float)
    den = np.asarray(denominator, dtype=float)
    if num.size == 0 or den.size == 0:
        raise ValueError("bootstrap_ratio_ci needs at least one sample on each side")
    point = float(np.median(num) / np.median(den))
    if num.size < 2 or den.size < 2:
        return point, float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    boot_num = np.median(num[rng.integers(0, num.size, size=(n_boot, num.size))], axis=1)
    boot_den = np.median(den[rng.integers(0, den.size, size=(n_boot, den.size))], axis=1)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(boot_num / boot_den, [tail, 100 - tail])
    return point, float(low), float(high)


def _centre_and_spread(values: np.ndarray) -> tuple[float, float, float]:
    if values.size == 0:
        return float("nan"), float("nan"), float("nan")
    q25, q50, q75 = np.percentile(values, [25, 50, 75])
    return float(q50), float(q25), float(q75)


_WORK = ("flops", "bytes", "mismatch_pct", "rel_l2_err", "max_abs_err")


def _first_of_each(df: pd.DataFrame, columns: list[str]) -> dict[tuple[str, str], list]:
    """(source_file, benchmark) -> the first non-missing value of each of ``columns`` among
    that record's rows of ``df`` (NaN when it has none)."""
    if df.empty or not columns:
        return {}
    first = df.groupby(load.RECORD_KEY, sort=False)[columns].first()
    return dict(zip(first.index, first.to_numpy(dtype=object).tolist()))


def summarize(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (source_file, benchmark): identity columns, ``status``/``error_message``,
    ``n`` (repetitions), ``time_us`` median with ``time_lo``/``time_hi``, ``spread_kind``,
    and, where the record declares ``flops``/``bytes``, ``tflops`` and ``gbps`` with their
    own lo/hi (rates are computed per repetition from the declared work and the measured
    time, not read from the rate counters).

    The per-record work is done on arrays keyed by record (``groupby`` positions and firsts),
    not on a sub-frame per record: a results tree holds thousands of records."""
    if df.empty:
        extra = [c for c in SUMMARY_COLUMNS if c not in df.columns]
        return pd.DataFrame(columns=list(df.columns) + extra)
    key = load.RECORD_KEY
    df = df[df[key].notna().all(axis=1).to_numpy()]  # groupby leaves out rows with a missing key
    samp = repetition_samples(df)
    times_of = load.times_by_record(samp)
    from_agg = {k: bool(v) for k, v in samp.groupby(key, sort=False)["from_aggregate"].any().items()} \
        if len(samp) else {}
    works = [w for w in _WORK if w in df.columns]
    work_of_samples, work_of_rows = _first_of_each(samp, works), _first_of_each(df, works)
    bad = df[df["status"] != "ok"].drop_duplicates(key)
    bad_status = {k: (s, m) for k, s, m in zip(zip(bad[key[0]], bad[key[1]]), bad["status"], bad["error_message"])}
    stddev = aggregate_stddev(df)
    firsts = df[~df.duplicated(key).to_numpy()]
    firsts = firsts.drop(columns=[c for c in _PER_ROW if c in firsts.columns])
    out = []
    for row in firsts.to_dict("records"):
        k = (row[key[0]], row[key[1]])
        if k in bad_status:
            row["status"], row["error_message"] = bad_status[k]
        in_samples = k in times_of
        times = times_of[k] if in_samples and row["status"] == "ok" else np.array([])
        agg = in_samples and from_agg[k]
        firsts_of_work = (work_of_samples if in_samples else work_of_rows).get(k)
        for work in _WORK:
            row[work] = firsts_of_work[works.index(work)] if work in works else float("nan")
        row["n"] = 0 if agg else int(times.size)
        centre, lo, hi = _centre_and_spread(times)
        kind = SPREAD_IQR if times.size > 1 else (SPREAD_NONE if times.size else "")
        if agg and k in stddev and np.isfinite(stddev[k]):
            lo, hi, kind = centre - stddev[k], centre + stddev[k], SPREAD_STDDEV
        row.update(time_us=centre, time_lo=lo, time_hi=hi, spread_kind=kind)
        for rate, work, scale in (("tflops", "flops", 1e12), ("gbps", "bytes", 1e9)):
            amount = row[work]
            if times.size and np.isfinite(amount) and amount > 0:
                # Rates fall as time rises: the rate interval comes from the time interval.
                row[rate] = float(np.median(amount / (times * 1e-6) / scale))
                row[f"{rate}_lo"] = amount / (hi * 1e-6) / scale
                row[f"{rate}_hi"] = amount / (lo * 1e-6) / scale
            else:
                row[rate] = row[f"{rate}_lo"] = row[f"{rate}_hi"] = float("nan")
        out.append(row)
    return pd.DataFrame(out).reset_index(drop=True)


def config_key(row: pd.Series | dict, columns: list[str]) -> tuple:
    """A hashable configuration key; missing values become None."""
    key = []
    for c in columns:
        v = row.get(c) if hasattr(row, "get") else row[c]
        key.append(None if v is None or (isinstance(v, float) and np.isnan(v)) else v)
    return tuple(key)


def varying_columns(df: pd.DataFrame, columns: list[str]) -> list[str]:
    """The configuration columns that take more than one value in ``df`` (the ones worth
    naming in a label; the rest are fixed for the experiment)."""
    return [c for c in columns if c in df and df[c].nunique(dropna=False) > 1]


def config_label(row: pd.Series | dict, columns: list[str]) -> str:
    parts = []
    for c, v in zip(columns, config_key(row, columns)):
        if v is None:
            continue
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        parts.append(str(v) if c == "dtype" else f"{c}={v}")
    return " ".join(parts) or "(single config)"


def speedups(summary: pd.DataFrame, df: pd.DataFrame, *, seed: int = DEFAULT_SEED,
             n_boot: int = DEFAULT_BOOTSTRAP) -> pd.DataFrame:
    """Speedup of every successful variant over its baseline (the label's ``baseline``),
    per device, experiment and configuration, with a bootstrap 95% CI over repetitions.

    ``summary`` is ``summarize(df)`` (or a subset of it); ``df`` holds the raw rows the
    samples come from. Configurations whose baseline did not run successfully are left out.
    """
    cols = ["device_slug", "experiment", "run", "config", "variant", "baseline", "speedup", "ci_low",
            "ci_high", "n_baseline", "n_variant", "method", "change", "verdict", "band"]
    ok = summary[summary["status"] == "ok"]
    if ok.empty:
        return pd.DataFrame(columns=cols)
    samp = repetition_samples(df)
    times = load.times_by_record(samp[~samp["from_aggregate"]])
    out = []
    for (device, experiment, run), exp in ok.groupby(["device_slug", "experiment", "run"], sort=True):
        ccols = config_columns(exp)
        lcols = varying_columns(exp, ccols)
        index = {(r["variant"], config_key(r, ccols)): r for _, r in exp.iterrows()}
        rows = []
        for _, r in exp.iterrows():
            if r["variant"] == r["baseline"] or pd.isna(r["baseline"]):
                continue
            base = index.get((r["baseline"], config_key(r, ccols)))
            if base is None:
                continue
            check_comparable(base, r, ccols)
            t_base = times.get((base["source_file"], base["benchmark"]), np.array([]))
            t_var = times.get((r["source_file"], r["benchmark"]), np.array([]))
            if t_base.size >= 2 and t_var.size >= 2:
                point, low, high = bootstrap_ratio_ci(t_base, t_var, n_boot=n_boot, seed=seed)
                method = f"bootstrap 95% CI, {n_boot} resamples, seed {seed}"
            else:
                point, low, high = base["time_us"] / r["time_us"], float("nan"), float("nan")
                method = "point estimate only (no per-repetition rows)"
            label = r["config"] if "config" in r and isinstance(r["config"], str) else config_label(r, lcols)
            rows.append(dict(device_slug=device, experiment=experiment, run=run, config=label,
                             variant=r["variant"], baseline=r["baseline"], speedup=point, ci_low=low,
                             ci_high=high, n_baseline=int(t_base.size), n_variant=int(t_var.size),
                             method=method, change=point - 1))
        band = max(PRACTICAL_BAND, noise_floor(pd.DataFrame(rows, columns=cols)))
        for row in rows:
            row["band"] = band
            row["verdict"] = classify(row["change"], row["ci_low"] - 1, row["ci_high"] - 1, band)
        out += rows
    return pd.DataFrame(out, columns=cols)


def noise_floor(speedups: pd.DataFrame) -> float:
    """The A/A noise floor of one run: the median over configurations of |change| of the
    baseline's second registration (``<baseline>_aa``) against the baseline; 0 when the run
    has no A/A control (the practical band alone then applies)."""
    aa = speedups[[is_control(v) and v == f"{b}{AA_SUFFIX}" for v, b in zip(speedups["variant"], speedups["baseline"])]]
    if aa.empty:
        return 0.0
    return float(np.median(np.abs(aa["speedup"].to_numpy(float) - 1)))
