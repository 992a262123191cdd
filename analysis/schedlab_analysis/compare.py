"""Compare two benchmark runs configuration by configuration, each with a verdict (faster,
slower, no difference), as nvbench's ``nvbench_compare`` does for nvbench's JSON.

    schedlab-compare A B [--results ROOT] [--threshold PCT] [--fail-above PCT]
                         [--format table|markdown|csv] [--out FILE]

A and B are each a results file, a folder of results files (every experiment of one run), or
a run id looked up under ``--results`` (default ``results``): a context ``run_id``
(``SCHEDLAB_RUN_ID``, e.g. ``20261125T145416Z-b081333a``), a results file's stem
(``20261125T145856Z-84ac4b9f18``), or a prefix that names one of them alone. Each side holds
one run of each (device, experiment).

Records are matched on (experiment, variant, configuration axes, dtype) (``load.config_columns``
over both sides). Per configuration: the median time of A's and of B's repetitions; the change
of B against A in speed (A's time / B's time - 1: +5% means B is 5% faster) with its 95%
percentile-bootstrap interval (``stats.bootstrap_ratio_ci``); and the verdict of the one rule
(``stats.classify``): faster or slower only when the whole interval lies beyond the band, which
is ``--threshold`` (1% by default) or the A/A noise floor of either run's experiment when that
is larger (``stats.noise_floor``: the baseline registered twice, ``<baseline>_aa``; the control
itself is not listed). A record the harness failed (an accuracy gate, a launch error) in either
run is an error, never a time; a ``skipped: `` record (an unsupported combination) is skipped.

Exit status: 0; 1 when a record of B failed, or, with ``--fail-above PCT``, when a configuration
is slower (by the rule above) by more than PCT percent; 2 for a usage error (a file or run id
not found, several runs on one side, nothing in common).
"""
from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import load, stats
from .table import SHORT_VERDICT, display_path, run_label

ERROR, SKIPPED = "error", "skipped"
ONLY_IN = {"A": "only in A", "B": "only in B"}
TIMED = (stats.FASTER, stats.SLOWER, stats.NO_DIFFERENCE, stats.NO_CI)
# Context keys that change what a time means: two runs that differ in one are compared, with a warning.
PROVENANCE_KEYS = ("device", "arch", "driver_version", "toolkit_version", "compiler", "compiler_flags",
                   "build_type", "timing")
# Files beside the results that carry a context but no benchmarks (load.file_kind).
_RECORD_PREFIXES = ("stalls-", "probes-")
_CONTEXT_HEAD = re.compile(r'^\s*\{\s*"context"\s*:\s*')

COLUMNS = ["experiment", "variant", "config", "a_us", "b_us", "n_a", "n_b", "change", "ci_low", "ci_high",
           "band", "verdict", "message", "rel_l2_err_a", "rel_l2_err_b", "failed_in"]


class UsageError(ValueError):
    """What the command line named cannot be compared; the message says why (exit status 2)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse would exit; main() reports it like any usage error
        raise UsageError(message)


# ------------------------------------------------------------------------------ finding the runs

def read_context(path: Path) -> dict:
    """A results file's context, read from the head of the file where the harness writes it
    first (a run id lookup reads hundreds of files); the whole file otherwise."""
    opener = gzip.open if str(path).endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            head = f.read(1 << 16)
    except (OSError, UnicodeDecodeError, EOFError) as e:
        raise load.ResultsFileError(path, f"cannot read: {e}") from e
    m = _CONTEXT_HEAD.match(head)
    if m:
        try:
            context, _ = json.JSONDecoder().raw_decode(head, m.end())
            if isinstance(context, dict):
                return context
        except json.JSONDecodeError:
            pass  # a context longer than the head
    data = load.read_json(path)
    return data.get("context", {}) if isinstance(data, dict) else {}


def run_index(root: Path) -> list[tuple[Path, str, str]]:
    """(file, context run id or '', file stem) of every results file under ``root``."""
    out = []
    for path in load.iter_json_files(root):
        if path.name.startswith(_RECORD_PREFIXES) or path.name == "resources.json":
            continue
        out.append((path, str(read_context(path).get("run_id") or ""), load.results_stem(path.name)))
    return out


def resolve(spec: str, root: Path) -> list[Path]:
    """The results files ``spec`` names: a file, a folder, or a run id under ``root``."""
    path = Path(spec)
    if path.exists():
        files = load.iter_json_files(path)
        if not files:
            raise UsageError(f"{spec}: no results files in this folder")
        return files
    if "/" in spec or load.is_results_name(spec):
        raise UsageError(f"{spec}: no such file or folder")
    if not root.is_dir():
        raise UsageError(f"{spec} is not a file or folder, and the results root {root} where a run id "
                         "is looked up does not exist (--results)")
    index = run_index(root)
    for exact in ([f for f, run, _ in index if run == spec], [f for f, _, stem in index if stem == spec]):
        if exact:
            return exact
    runs = sorted({run for _, run, _ in index if run.startswith(spec)})
    stems = sorted({stem for _, run, stem in index if stem.startswith(spec)})
    candidates = runs or stems
    if len(candidates) == 1:
        return [f for f, run, stem in index if candidates[0] in (run, stem)]
    if not candidates:
        raise UsageError(f"{spec}: no results file under {root} has this run id or file name")
    shown = ", ".join(candidates[:8]) + (f" and {len(candidates) - 8} more" if len(candidates) > 8 else "")
    raise UsageError(f"{spec} names {len(candidates)} runs under {root}: {shown}; give more of it")


def load_side(spec: str, root: Path) -> pd.DataFrame:
    """The records ``spec`` names, checked to hold one run of each (device, experiment)."""
    rows = load.load_results(resolve(spec, root))
    if rows.empty:
        raise UsageError(f"{spec}: no benchmark records")
    for (device, experiment), g in rows.groupby(["device_slug", "experiment"]):
        runs = sorted(set(g["run"]))
        if len(runs) > 1:
            raise UsageError(f"{spec} holds {len(runs)} runs of {device}/{experiment} "
                             f"({', '.join(map(run_label, runs[:4]))}{', ...' if len(runs) > 4 else ''}); "
                             "name one results file or run id")
    return rows


# ------------------------------------------------------------------------------ comparing

@dataclass
class _Entry:
    """One configuration of one side: its records pooled (one run may time it in two files)."""
    row: pd.Series
    status: str = "ok"
    message: str = ""
    times: list = field(default_factory=list)
    interval: bool = True   # every sample a repetition (not a median aggregate)

    def add(self, row: pd.Series, samples: pd.DataFrame | None) -> None:
        if row["status"] == "failed" or (row["status"] == "skipped" and self.status == "ok"):
            self.status, self.message = row["status"], str(row["error_message"])
        if samples is not None:
            self.times += list(samples["time_us"].to_numpy(float))
            self.interval &= not bool(samples["from_aggregate"].any())

    @property
    def median(self) -> float:
        return float(np.median(self.times)) if self.times and self.status == "ok" else float("nan")


def _entries(rows: pd.DataFrame, summary: pd.DataFrame, ccols: list[str]) -> dict[tuple, _Entry]:
    samp = load.samples(rows)
    by_record = {k: g for k, g in samp.groupby(["source_file", "benchmark"])}
    out: dict[tuple, _Entry] = {}
    for _, r in summary.iterrows():
        if stats.is_control(r["variant"]):
            continue  # the A/A control gives the noise floor; its configurations are the baseline's
        name = r["variant"] if isinstance(r["variant"], str) else r["benchmark"]
        entry = out.setdefault((name, stats.config_key(r, ccols)), _Entry(r))
        entry.add(r, by_record.get((r["source_file"], r["benchmark"])))
    return out


def noise_floor(summary: pd.DataFrame, rows: pd.DataFrame, *, seed: int = stats.DEFAULT_SEED) -> float:
    """The A/A floor of one run of an experiment (0 without the control)."""
    pair = summary[[v == b or v == f"{b}{stats.AA_SUFFIX}" for v, b in zip(summary["variant"], summary["baseline"])]]
    if not any(stats.is_control(v) for v in pair["variant"]):
        return 0.0
    return stats.noise_floor(stats.speedups(pair, rows, seed=seed))


def _verdict_row(a: _Entry, b: _Entry, band: float, seed: int) -> dict:
    row = dict(a_us=a.median, b_us=b.median, n_a=len(a.times), n_b=len(b.times), band=band,
               rel_l2_err_a=a.row.get("rel_l2_err", np.nan), rel_l2_err_b=b.row.get("rel_l2_err", np.nan),
               change=np.nan, ci_low=np.nan, ci_high=np.nan, message="", failed_in="")
    failed = [(side, e) for side, e in (("A", a), ("B", b)) if e.status == "failed" or (e.status == "ok" and not e.times)]
    if failed:
        row["failed_in"] = ",".join(side for side, _ in failed)
        row["message"] = "; ".join(f"{side}: {e.message or 'no time recorded'}" for side, e in failed)
        return dict(row, verdict=ERROR)
    skipped = [(side, e) for side, e in (("A", a), ("B", b)) if e.status == "skipped"]
    if len(skipped) == 2 and a.message == b.message:
        return dict(row, verdict=SKIPPED, message=f"A and B: {a.message}")
    if skipped:
        return dict(row, verdict=SKIPPED, message="; ".join(f"{side}: {e.message}" for side, e in skipped))
    ta, tb = np.asarray(a.times), np.asarray(b.times)
    if a.interval and b.interval and ta.size >= 2 and tb.size >= 2:
        point, low, high = stats.bootstrap_ratio_ci(ta, tb, seed=seed)
    else:
        point, low, high = a.median / b.median, np.nan, np.nan
    row.update(change=point - 1, ci_low=low - 1, ci_high=high - 1)
    return dict(row, verdict=stats.classify(point - 1, low - 1, high - 1, band))


@dataclass
class Comparison:
    rows: pd.DataFrame                      # COLUMNS: one row per configuration (both sides or one)
    floors: dict[str, tuple[float, float]]  # experiment -> A/A floor of A's run, of B's run
    threshold: float
    warnings: list[str]
    sides: dict[str, str]                   # "A"/"B" -> what it is (runs, commits, device)

    @property
    def both(self) -> pd.DataFrame:
        return self.rows[~self.rows["verdict"].isin(ONLY_IN.values())]

    def count(self, *verdicts: str) -> int:
        return int(self.rows["verdict"].isin(verdicts).sum())

    def geomean_change(self) -> float:
        timed = self.both[self.both["verdict"].isin(TIMED)]["change"].to_numpy(float)
        timed = timed[np.isfinite(timed)]
        return float(np.exp(np.mean(np.log1p(timed))) - 1) if timed.size else float("nan")

    def slower_beyond(self, pct: float) -> pd.DataFrame:
        rows = self.both
        return rows[(rows["verdict"] == stats.SLOWER) & (rows["change"] < -pct / 100)]

    def failed_in_b(self) -> pd.DataFrame:
        rows = self.rows
        return rows[rows["failed_in"].str.contains("B")]


def compare(a: pd.DataFrame, b: pd.DataFrame, *, threshold: float = stats.PRACTICAL_BAND,
            seed: int = stats.DEFAULT_SEED) -> Comparison:
    """Every configuration of the records ``a`` and ``b`` (one run per experiment on each side)."""
    out, floors, warnings = [], {}, []
    for experiment in sorted(set(a["experiment"]) | set(b["experiment"])):
        full_a, full_b = a[a["experiment"] == experiment], b[b["experiment"] == experiment]
        ra, rb = _measurements(full_a), _measurements(full_b)
        both = pd.concat([ra, rb], ignore_index=True)
        ccols = load.config_columns(both)
        sa, sb = stats.summarize(ra), stats.summarize(rb)
        lcols = stats.varying_columns(pd.concat([sa, sb], ignore_index=True), ccols)
        ea, eb = _entries(ra, sa, ccols), _entries(rb, sb, ccols)
        if ea and eb:
            floors[experiment] = (noise_floor(sa, ra, seed=seed), noise_floor(sb, rb, seed=seed))
            warnings += _provenance_warnings(full_a, full_b)
        band = max([threshold, *floors.get(experiment, ())])
        for key in sorted(set(ea) | set(eb), key=_sort_key):
            one = ea.get(key) or eb.get(key)
            ident = dict(experiment=experiment, variant=key[0], config=stats.config_label(one.row, lcols))
            if key in ea and key in eb:
                out.append(dict(ident, **_verdict_row(ea[key], eb[key], band, seed)))
            else:
                side = "A" if key in ea else "B"
                t = one.median
                out.append(dict(ident, verdict=ONLY_IN[side], band=band, message=one.message,
                                failed_in=side if one.status == "failed" else "",
                                **{f"{s.lower()}_us": (t if s == side else np.nan) for s in "AB"},
                                **{f"n_{s.lower()}": (len(one.times) if s == side else 0) for s in "AB"}))
    rows = pd.DataFrame(out, columns=COLUMNS)
    rows["failed_in"] = rows["failed_in"].fillna("")
    rows["message"] = rows["message"].fillna("")
    warnings = _dedupe(warnings) + _dirty_warnings("A", a) + _dirty_warnings("B", b)
    if set(a["run"]) == set(b["run"]):
        warnings.append("A and B are the same run")
    return Comparison(rows, floors, threshold, warnings, {"A": describe(a), "B": describe(b)})


def _measurements(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` without the context (provenance is read from the full rows) and without the
    counters only other experiments fill: summarizing a run's frame at full width (every
    experiment's counters) is most of the time a comparison takes."""
    keep = [c for c in rows.columns
            if c in load.BASE_COLUMNS or (not c.startswith("ctx_") and rows[c].notna().any())]
    return rows[keep]


def _sort_key(key: tuple) -> tuple:
    """Variants by name, then configurations by their axes, numbers in numeric order."""
    return (str(key[0]),) + tuple((0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v)) for v in key[1])


def _values(rows: pd.DataFrame, key: str) -> tuple[str, ...]:
    col = f"ctx_{key}"
    if col not in rows:
        return ()
    return tuple(sorted({str(v) for v in rows.drop_duplicates("source_file")[col].dropna()}))


def _provenance_warnings(a: pd.DataFrame, b: pd.DataFrame) -> list[str]:
    out = []
    for key in PROVENANCE_KEYS:
        va, vb = _values(a, key), _values(b, key)
        if va != vb:
            shown = [" or ".join(f'"{v.strip()}"' for v in values) or "(not recorded)" for values in (va, vb)]
            out.append(f"{key} differs: A {shown[0]}, B {shown[1]}")
    return out


def _dirty_warnings(side: str, rows: pd.DataFrame) -> list[str]:
    files = rows.drop_duplicates("source_file")
    dirty = files.get("ctx_schedlab_dirty", pd.Series("", index=files.index)).astype(str) == "true"
    commits = files.get("ctx_schedlab_commit", pd.Series("unknown", index=files.index)).astype(str)
    out = []
    if dirty.any():
        out.append(f"{side} was built from a dirty tree (commit {', '.join(sorted(set(commits[dirty].str[:10])))}): "
                   "its commit does not say what was timed")
    if commits.isin(["unknown", "", "nan"]).any():
        out.append(f"{side} has results of an unknown commit")
    return out


def _dedupe(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def describe(rows: pd.DataFrame) -> str:
    """'run R (commit C, NVIDIA H200), 3 files'."""
    files = rows.drop_duplicates("source_file")
    runs = sorted({run_label(r) for r in files["run"]})
    dirty = files.get("ctx_schedlab_dirty", pd.Series("", index=files.index)).astype(str) == "true"
    commits = sorted({str(c)[:10] + ("-dirty" if d else "") for c, d in
                      zip(files.get("ctx_schedlab_commit", pd.Series("unknown", index=files.index)), dirty)})
    devices = _values(rows, "device")
    return (f"run {', '.join(runs)} (commit {', '.join(commits)}; {', '.join(devices) or 'device not recorded'}), "
            f"{len(files)} file{'s' if len(files) != 1 else ''}")


# ------------------------------------------------------------------------------ rendering

def _pct(x: float) -> str:
    return f"{x * 100:+.1f}%" if np.isfinite(x) else "-"


def _us(t: float) -> str:
    if not np.isfinite(t):
        return "-"
    return f"{t:.1f}" if t >= 100 else f"{t:.2f}"


MESSAGE_CHARS = 100  # of an error or skip message in a table (the csv keeps it whole)


def _verdict_cell(r: pd.Series) -> str:
    text = SHORT_VERDICT.get(r["verdict"], r["verdict"])
    if r["verdict"] not in (ERROR, SKIPPED) or not r["message"]:
        return text
    message = r["message"] if len(r["message"]) <= MESSAGE_CHARS else r["message"][:MESSAGE_CHARS - 3] + "..."
    return f"{text} ({message})"


TABLE_HEADER = ["experiment", "variant", "configuration", "A (us)", "B (us)", "change", "95% CI", "verdict"]


def _table_cells(rows: pd.DataFrame) -> list[list[str]]:
    return [[r["experiment"], str(r["variant"]), r["config"], _us(r["a_us"]), _us(r["b_us"]), _pct(r["change"]),
             f"{_pct(r['ci_low'])} to {_pct(r['ci_high'])}" if np.isfinite(r["ci_low"]) else "-", _verdict_cell(r)]
            for _, r in rows.iterrows()]


def _aligned(header: list[str], cells: list[list[str]]) -> list[str]:
    widths = [max(len(x) for x in col) for col in zip(header, *cells)]
    numeric = {"A (us)", "B (us)", "change"}
    def line(values):
        return "  ".join(v.rjust(w) if h in numeric else v.ljust(w)
                         for h, v, w in zip(header, values, widths)).rstrip()
    return [line(header), line(["-" * w for w in widths])] + [line(c) for c in cells]


def _markdown(header: list[str], cells: list[list[str]]) -> list[str]:
    def line(values):
        return "| " + " | ".join(v.replace("|", "\\|") for v in values) + " |"
    return [line(header), "|" + "---|" * len(header)] + [line(c) for c in cells]


def summary_line(c: Comparison) -> str:
    both = c.both
    parts = [f"{c.count(stats.FASTER)} faster", f"{c.count(stats.SLOWER)} slower",
             f"{c.count(stats.NO_DIFFERENCE, stats.NO_CI)} no difference"
             + (f" ({c.count(stats.NO_CI)} without an interval: a side has no repetitions)" if c.count(stats.NO_CI) else ""),
             f"{c.count(ERROR)} errors"]
    if c.count(SKIPPED):
        parts.append(f"{c.count(SKIPPED)} skipped")
    return (f"{len(both)} configurations in both: " + ", ".join(parts)
            + f"; geometric-mean change of B against A {_pct(c.geomean_change())}; "
            f"{c.count(ONLY_IN['A'])} only in A, {c.count(ONLY_IN['B'])} only in B.")


def _band_lines(c: Comparison) -> list[str]:
    out = []
    for experiment, (fa, fb) in c.floors.items():
        band = max(c.threshold, fa, fb)
        floors = ", ".join(f"{side} {f:.2%}" if f else f"{side} no control" for side, f in (("A", fa), ("B", fb)))
        out.append(f"{experiment}: band +-{band:.1%} (A/A noise floor {floors}; threshold {c.threshold:.1%})")
    return out


def _only_lines(c: Comparison, only: pd.DataFrame) -> list[str]:
    """Configurations of one side alone: an experiment the other side did not run at all in
    one line, the others each in its own."""
    out = []
    for experiment, rows in only.groupby("experiment", sort=False):
        if experiment not in c.floors:
            failed = int((rows["failed_in"] != "").sum())
            out.append(f"{experiment}: all {len(rows)} configurations (not run on the other side"
                       + (f"; {failed} failed)" if failed else ")"))
            continue
        out += [f"{experiment} {r['variant']} {r['config']}" + (f" (failed: {r['message']})" if r["failed_in"] else "")
                for _, r in rows.iterrows()]
    return out


def render(c: Comparison, fmt: str = "table") -> str:
    if fmt == "csv":
        return c.rows.to_csv(index=False)
    md = fmt == "markdown"
    table = _markdown if md else _aligned
    bullet = "- " if md else "  "
    lines = [f"A: {c.sides['A']}", f"B: {c.sides['B']}"]
    if md:
        lines = [f"- {l}" for l in lines]
    if c.warnings:
        lines += ["", "Warnings:"] + [f"{bullet}{w}" for w in c.warnings]
    both = c.both
    if len(both):
        lines += [""] + table(TABLE_HEADER, _table_cells(both))
    for side in "AB":
        only = c.rows[c.rows["verdict"] == ONLY_IN[side]]
        if len(only):
            lines += ["", f"Only in {side} ({len(only)}):"] + [f"{bullet}{l}" for l in _only_lines(c, only)]
    lines += ["", "Change: B's speed against A's (A's time / B's time - 1; + is faster), 95% bootstrap interval "
              "over the repetitions. Faster or slower only when the whole interval lies beyond the band:"]
    lines += [f"{bullet}{l}" for l in _band_lines(c)]
    lines += ["", summary_line(c)]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ command line

def _percent(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}")
    if not np.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"a percentage at or above 0, not {text}")
    return value


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="schedlab-compare", description=__doc__.split("\n\n")[0].replace("\n", " "),
                 epilog="A and B: a results file, a folder of one run's results files, or a run id "
                 "(context run_id, a file's <stamp>-<commit> stem, or a unique prefix) found under --results.")
    ap.add_argument("a", metavar="A", help="the run compared against (the reference)")
    ap.add_argument("b", metavar="B", help="the run compared with A")
    ap.add_argument("--results", type=Path, default=Path("results"), help="where run ids are looked up (default: results)")
    ap.add_argument("--threshold", type=_percent, default=stats.PRACTICAL_BAND * 100, metavar="PCT",
                    help="smallest change called faster or slower, in percent (default 1; a run's A/A noise "
                    "floor raises it)")
    ap.add_argument("--fail-above", type=_percent, metavar="PCT",
                    help="exit 1 when a configuration is slower by more than PCT percent")
    ap.add_argument("--format", choices=("table", "markdown", "csv"), default="table")
    ap.add_argument("--out", type=Path, metavar="FILE", help="write the report here instead of stdout")
    return ap


def _gate(c: Comparison, fail_above: float | None) -> list[str]:
    """Why the exit status is 1 (nothing: 0)."""
    reasons = []
    if fail_above is not None and len(slow := c.slower_beyond(fail_above)):
        reasons.append(f"{len(slow)} configuration(s) slower than A by more than {fail_above:g}% "
                       f"(e.g. {slow['experiment'].iloc[0]} {slow['variant'].iloc[0]} {slow['config'].iloc[0]} "
                       f"{_pct(slow['change'].iloc[0])})")
    if len(failed := c.failed_in_b()):
        reasons.append(f"{len(failed)} record(s) of B failed (e.g. {failed['experiment'].iloc[0]} "
                       f"{failed['variant'].iloc[0]} {failed['config'].iloc[0]}: {failed['message'].iloc[0]})")
    return reasons


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        a, b = load_side(args.a, args.results), load_side(args.b, args.results)
        c = compare(a, b, threshold=args.threshold / 100)
        if c.both.empty:
            raise UsageError(f"A and B have no configuration in common (A: {', '.join(sorted(set(a['experiment'])))}; "
                             f"B: {', '.join(sorted(set(b['experiment'])))})")
    except (UsageError, load.ResultsFileError) as e:
        print(f"schedlab-compare: error: {e}", file=sys.stderr)
        return 2
    text = render(c, args.format)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {display_path(args.out)}: {summary_line(c)}")
    else:
        sys.stdout.write(text)
    if args.format == "csv" or args.out:
        for w in c.warnings:  # the csv has no place for them
            print(f"schedlab-compare: warning: {w}", file=sys.stderr)
    reasons = _gate(c, args.fail_above)
    for reason in reasons:
        print(f"schedlab-compare: {reason}", file=sys.stderr)
    return 1 if reasons else 0


if __name__ == "__main__":
    raise SystemExit(main())
