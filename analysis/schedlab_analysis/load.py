"""Read schedlab results files (Google Benchmark JSON written by common/harness) into pandas.

A results tree looks like ``results/<device_slug>/<experiment>/<UTC stamp>-<sha>.json``;
next to a run there may be ``stalls-*.json`` / ``probes-*.json`` (profiler records) and
``results/static/resources.json`` (per-kernel registers, spills, shared memory).

``load_results`` gives one row per benchmark record with
  * the record's own fields (``name``, ``run_type``, ``real_time``, counters, ...),
  * the label's keys (``family``, ``experiment``, ``variant``, ``baseline``, ``dtype``, ``peer``),
  * the file's context, each key prefixed ``ctx_``,
  * ``source_file``, ``device_slug``, ``run_time`` (when the run happened),
  * ``run``: the device call the record was measured in (the context's ``run_id``; a file
    without one, written before the harness recorded it, is a run of its own) and
    ``binary_sha256`` (the hash of the benchmark binary, empty when not recorded),
  * derived: ``benchmark`` (run name without ``/manual_time``), ``status``
    (ok / failed / skipped), ``time_us``, ``axes`` (names of the problem-axis columns) and
    ``name_axes`` (the axes spelled ``key:value`` in the benchmark name).

Paths: every loader raises FileNotFoundError (naming the path) for a path that does not exist:
a typo is never an empty result. An existing folder (or list of files) holding no benchmark
results file is not an error, since an empty results tree is a normal state (a fresh clone, a
machine before its first sweep): ``load_results`` returns an empty frame and warns
(``NoResultsWarning``, naming the path). ``load_records`` and ``load_resources`` return an empty
frame without a warning, since profiles and the static report are optional beside the results.
``dataset.Dataset.load`` treats a missing results folder as empty and reports an empty one through
``Dataset.empty``, without the warning: its command-line callers say so in their own words.
"""
from __future__ import annotations

import errno
import gzip
import json
import math
import re
import sys
import warnings
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

MANUAL_TIME_SUFFIX = "/manual_time"
# common/harness/bench.hpp kSkippedPrefix: an unsupported combination, not a failure.
SKIPPED_PREFIX = "skipped: "
TIME_UNIT_TO_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}

# Numeric record fields that are bookkeeping or measurements, never problem axes. Every other
# numeric counter of a record (batch, context, seq_len, head_dim, causal, page_size, ...) is an
# axis of the problem, as are "key:value" segments of the benchmark name.
GBENCH_FIELDS = frozenset({
    "family_index", "per_family_instance_index", "repetitions", "repetition_index", "threads",
    "iterations", "real_time", "cpu_time",
})
HARNESS_COUNTERS = frozenset({
    "flops", "bytes", "FLOP_per_s", "bytes_per_s", "rel_l2_err", "max_abs_err", "mismatch_pct",
    "input_sets",
    # measurements of a case's launch (experiments/hopper_unit_overlap): its SM clock, and when
    # each warpgroup's role ended
    "sm_clock_ghz", "wg0_end_us", "wg1_end_us",
})
NON_AXIS_FIELDS = GBENCH_FIELDS | HARNESS_COUNTERS

# Columns every results frame has, even an empty one.
BASE_COLUMNS = [
    "source_file", "device_slug", "run_time", "run", "binary_sha256", "experiment", "family", "variant", "baseline",
    "peer", "benchmark", "name", "run_type", "aggregate_name", "repetition_index", "status",
    "error_message", "time_us", "axes", "name_axes",
]

_STAMP_RE = re.compile(r"^(\d{8}T\d{6}Z)")


class NoResultsWarning(UserWarning):
    """An existing path that holds no benchmark results file."""


class ResultsFileError(ValueError):
    """A results file that cannot be read; the message starts with the file's path."""

    def __init__(self, path: Path | str, reason: str):
        super().__init__(f"{path}: {reason}")
        self.path = Path(path)


# Benchmark results files are committed gzip-compressed (``<stamp>-<commit>.json.gz``): Google
# Benchmark's JSON compresses about twentyfold, and the whole tree travels to the device with
# every call under a size limit. Profile records, summaries and reports stay plain ``.json``.
RESULTS_SUFFIXES = (".json", ".json.gz")


def is_results_name(name: str) -> bool:
    return name.endswith(RESULTS_SUFFIXES)


def results_stem(name: str) -> str:
    """``20261123T200856Z-1b36d12dba.json.gz`` -> ``20261123T200856Z-1b36d12dba``."""
    for suffix in sorted(RESULTS_SUFFIXES, key=len, reverse=True):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


# results/<device>/builds/<experiment>/: the older build of a comparison of builds, timed in
# the same device call as the newer one (readme's ``builds`` section names its files). A
# directory scan leaves them out, so the call's run holds one build of each experiment.
OLDER_BUILDS_DIR = "builds"
# results/<device>/allocations/<experiment>/<run>/: one configuration timed in several processes
# (scripts/device_repeat_processes.sh, schedlab_analysis.allocations); not runs of the sweep.
ALLOCATIONS_DIR = "allocations"
# results/<device>/timelines/<experiment>/<run>/: runs of a -DSCHEDLAB_CTA_TIMELINE=ON build (per-CTA
# timelines in the tl_* counters, schedlab_analysis.timeline); its timings are not the sweep's.
TIMELINES_DIR = "timelines"
# results/<device>/side/<experiment>/: configurations outside the tier timed by hand in a
# sweep's device call (its run id): evidence a LOG cites, not rows of that run's tables.
SIDE_DIR = "side"


def as_paths(paths: Iterable[Path | str] | Path | str) -> list[Path]:
    return [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]


def json_files_of(path: Path) -> set[Path]:
    """The JSON files (plain or gzip-compressed) of one path: itself when it is a file, else those
    below it but not in an ``OLDER_BUILDS_DIR``, ``ALLOCATIONS_DIR``, ``TIMELINES_DIR`` or ``SIDE_DIR``
    below it.
    FileNotFoundError when the path does not exist."""
    if path.is_file():
        return {path}
    if not path.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no such results file or folder", str(path))
    return {f for f in path.rglob("*.json*") if f.is_file() and is_results_name(f.name)
            and not f.name.startswith(".")
            and not {OLDER_BUILDS_DIR, ALLOCATIONS_DIR, TIMELINES_DIR, SIDE_DIR} & set(f.relative_to(path).parts[:-1])}


def iter_json_files(paths: Iterable[Path | str] | Path | str) -> list[Path]:
    """JSON files named directly or found below the given directories (``json_files_of``),
    sorted; FileNotFoundError for a path that does not exist."""
    return sorted(set().union(*map(json_files_of, as_paths(paths))))


def read_json(path: Path) -> object:
    try:
        if str(path).endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                text = f.read()
        else:
            text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, EOFError) as e:
        raise ResultsFileError(path, f"cannot read: {e}") from e
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ResultsFileError(path, f"malformed JSON: {e}") from e


def file_kind(path: Path, data: object) -> str:
    """'benchmarks', 'stalls', 'probes', 'resources' or 'other' (anything else: skipped)."""
    name = Path(path).name
    if isinstance(data, dict) and "benchmarks" in data:
        return "benchmarks"
    if isinstance(data, dict) and "records" in data:
        for kind in ("stalls", "probes"):
            if name.startswith(kind + "-"):
                return kind
    if isinstance(data, list) and name == "resources.json":
        return "resources"
    return "other"


def parse_value(text: str) -> object:
    """'16' -> 16, '0.5' -> 0.5, anything else stays a string."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return text
    return value if math.isfinite(value) else text


def parse_label(label: str | None) -> dict[str, object]:
    """'family=decode;variant=streaming;peer=0' -> {'family': 'decode', ..., 'peer': 0}."""
    return dict(_parsed_label(label))


# Every repetition of a benchmark repeats its label and name: parsed once per text (the callers
# below read the cached dicts and never change them).
@lru_cache(maxsize=1 << 16)
def _parsed_label(label: str | None) -> dict[str, object]:
    out: dict[str, object] = {}
    for part in (label or "").split(";"):
        key, sep, value = part.partition("=")
        if sep and key.strip():
            out[key.strip()] = parse_value(value.strip())
    return out


def name_axes(name: str) -> dict[str, object]:
    """Google Benchmark ArgNames segments: 'x/batch:16/context:1024' -> {'batch': 16, ...}."""
    return dict(_name_axes(name))


@lru_cache(maxsize=1 << 16)
def _name_axes(name: str) -> dict[str, object]:
    out: dict[str, object] = {}
    for seg in name.split("/"):
        key, sep, value = seg.partition(":")
        if sep and key and value:
            out[key] = parse_value(value)
    return out


def strip_manual_time(name: str) -> str:
    return name[: -len(MANUAL_TIME_SUFFIX)] if name.endswith(MANUAL_TIME_SUFFIX) else name


def _context_value(value: object) -> object:
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value


def _run_time(path: Path, context: dict) -> pd.Timestamp:
    """When the run happened: the UTC stamp the harness puts in the file name, else the
    context's date, else the file's modification time."""
    m = _STAMP_RE.match(path.name)
    if m:
        return pd.Timestamp(datetime.strptime(m.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc))
    stamp = pd.to_datetime(context.get("date"), utc=True, errors="coerce")
    if not pd.isna(stamp):
        return stamp
    return pd.Timestamp(path.stat().st_mtime, unit="s", tz="UTC")


def slugify(text: str) -> str:
    """Same rule as the harness's device_slug(): 'NVIDIA H200' -> 'h200'."""
    for vendor in ("NVIDIA ", "AMD "):
        if text.startswith(vendor):
            text = text[len(vendor):]
    slug = re.sub(r"[^0-9a-z]+", "-", text.lower()).strip("-")
    return slug or "unknown"


def _device_slug(path: Path, experiment: object, context: dict) -> str:
    # results/<device_slug>/<experiment>/<file>: trust the layout when it is there (also below
    # results/<device_slug>/builds/ or side/).
    if experiment and path.parent.name == experiment and path.parent.parent.name:
        above = path.parent.parent
        if above.name in (OLDER_BUILDS_DIR, SIDE_DIR) and above.parent.name:
            return above.parent.name
        return above.name
    return slugify(str(context.get("device", "unknown")))


def _status(record: dict) -> tuple[str, str]:
    if not record.get("error_occurred") and not record.get("skipped"):
        return "ok", ""
    message = str(record.get("error_message") or record.get("skip_message") or "error")
    return ("skipped" if message.startswith(SKIPPED_PREFIX) else "failed"), message


def _time_us(record: dict, status: str, path: Path) -> float:
    if status != "ok" or record.get("aggregate_unit", "time") != "time":
        return float("nan")  # failed runs and cv aggregates carry no time
    unit = record.get("time_unit", "ns")  # Google Benchmark's default unit is ns
    if unit not in TIME_UNIT_TO_US:
        raise ResultsFileError(path, f"benchmark {record.get('name')!r}: unknown time_unit {unit!r}")
    return float(record.get("real_time", float("nan"))) * TIME_UNIT_TO_US[unit]


def benchmark_rows(path: Path, data: dict) -> list[dict]:
    """Rows of one Google Benchmark JSON file (validated; errors name the file)."""
    context = data.get("context", {})
    benchmarks = data.get("benchmarks")
    if not isinstance(context, dict):
        raise ResultsFileError(path, "'context' is not an object")
    if not isinstance(benchmarks, list):
        raise ResultsFileError(path, "'benchmarks' is not a list")
    ctx = {f"ctx_{k}": _context_value(v) for k, v in context.items()}
    # The same for every record of the file (the device slug for each experiment named).
    run_time, source_file, run = _run_time(path, context), str(path), run_of(path, context)
    binary_sha256 = str(context.get("binary_sha256") or "")
    device_slugs: dict[object, str] = {}
    rows = []
    for i, record in enumerate(benchmarks):
        if not isinstance(record, dict) or not isinstance(record.get("name"), str):
            raise ResultsFileError(path, f"benchmarks[{i}] is not a record with a 'name'")
        row: dict[str, object] = dict(ctx)
        label = _parsed_label(record.get("label"))
        row.update(label)
        row.update(record)  # a record field wins over a label key of the same name
        axes = _name_axes(record["name"])
        for key, value in axes.items():
            row.setdefault(key, value)
        # JSON numbers are exactly int or float (a bool is no number here).
        numeric = {k for k, v in record.items() if type(v) in _JSON_NUMBERS}
        row["axes"] = ",".join(sorted((numeric - NON_AXIS_FIELDS) | set(axes)))
        row["name_axes"] = ",".join(sorted(axes))
        experiment = row["experiment"] = label.get("experiment") or context.get("experiment") or path.parent.name
        row["peer"] = int(label.get("peer", 0) or 0)
        row["benchmark"] = strip_manual_time(str(record.get("run_name") or record["name"]))
        row["status"], row["error_message"] = _status(record)
        row["time_us"] = _time_us(record, row["status"], path)
        row["source_file"] = source_file
        if experiment not in device_slugs:
            device_slugs[experiment] = _device_slug(path, experiment, context)
        row["device_slug"] = device_slugs[experiment]
        row["run_time"] = run_time
        row["run"] = run
        row["binary_sha256"] = binary_sha256
        rows.append(row)
    return rows


_JSON_NUMBERS = (int, float)


def run_of(path: Path | str, context: dict) -> str:
    """The run (device call) a file belongs to: its context's ``run_id``, else the file."""
    run_id = str(context.get("run_id") or "").strip()
    return run_id or str(path)


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    df = pd.DataFrame(rows)
    for col in columns:
        if col not in df.columns:
            df[col] = pd.Series(dtype=object)
    return df


def load_results(paths: Iterable[Path | str] | Path | str) -> pd.DataFrame:
    """Every benchmark record of every results file under ``paths`` (files or directories).

    JSON files that are not Google Benchmark output (stall/probe files, resources.json,
    anything else) are skipped; a malformed file raises ResultsFileError naming it. A path
    that does not exist raises FileNotFoundError; one that holds no benchmark results file
    gives NoResultsWarning (and, when none does, an empty frame with the base columns).
    """
    roots = as_paths(paths)
    per_root = [json_files_of(r) for r in roots]  # every path checked before any file is read
    rows: list[dict] = []
    benchmark_files: set[Path] = set()
    for path in sorted(set().union(*per_root)):
        data = read_json(path)
        if file_kind(path, data) == "benchmarks":
            benchmark_files.add(path)
            rows.extend(benchmark_rows(path, data))
    empty = [str(r) for r, files in zip(roots, per_root) if not files & benchmark_files]
    if empty or not roots:
        warnings.warn(f"no benchmark results files (Google Benchmark JSON with 'benchmarks') in "
                      f"{', '.join(empty) or 'no path given'}", NoResultsWarning, stacklevel=2)
    return _frame(rows, BASE_COLUMNS)


def run_table(df: pd.DataFrame) -> pd.DataFrame:
    """One row per (device, experiment, run): ``configs`` (successful benchmarks), ``run_time``
    (the newest of its files), ``files`` (its results files, sorted)."""
    cols = ["device_slug", "experiment", "run", "clean", "configs", "run_time", "files"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    commits = df.get("ctx_schedlab_commit", pd.Series("unknown", index=df.index)).astype(str)
    dirty = df.get("ctx_schedlab_dirty", pd.Series("", index=df.index)).astype(str)
    # Whole-column operations grouped once: a results tree holds a thousand runs.
    g = pd.DataFrame({
        "clean": (dirty == "false") & ~commits.isin(["unknown", "", "nan"]),
        "ok_benchmark": df["benchmark"].where(df["status"] == "ok"),
        "run_time": df["run_time"], "source_file": df["source_file"],
    }).groupby([df["device_slug"], df["experiment"], df["run"]], dropna=False, sort=True)
    out = pd.DataFrame({"clean": g["clean"].all(), "configs": g["ok_benchmark"].nunique(),
                        "run_time": g["run_time"].max(),
                        "files": g["source_file"].agg(lambda f: tuple(sorted(set(f))))}).reset_index()
    return out[cols]


def select_runs(df: pd.DataFrame) -> pd.DataFrame:
    """For each (device, experiment), the rows of one run: a run from a clean commit before one
    from a dirty tree or an unknown commit, then the run that measured the most
    configurations successfully, then the newest.

    Every comparison (a variant against its baseline, a peer beside them) is then made within
    one device call: a later call that re-timed a few shapes does not replace those shapes in
    an older, complete run (the older run is chosen whole, or the newer one is). Other runs
    stay in ``load_results``; pick one with ``rows_of_run``.
    """
    if df.empty:
        return df
    runs = run_table(df).sort_values(["clean", "configs", "run_time", "run"])
    chosen = runs.groupby(["device_slug", "experiment"], dropna=False).tail(1)
    keep = set(zip(chosen["device_slug"], chosen["experiment"], chosen["run"]))
    mask = [k in keep for k in zip(df["device_slug"], df["experiment"], df["run"])]
    return df[np.array(mask, dtype=bool)].reset_index(drop=True)


latest_runs = select_runs  # the older name


def rows_of_run(df: pd.DataFrame, run: str) -> pd.DataFrame:
    """The rows of one run, named by its ``run_id`` or (older files) its results file path."""
    return df[df["run"] == run].reset_index(drop=True)


def axis_columns(df: pd.DataFrame, source: str = "axes") -> list[str]:
    """Problem-axis columns used by any row of ``df``: from counters and name segments
    (``source='axes'``) or from name segments only (``source='name_axes'``)."""
    names: set[str] = set()
    for axes in df.get(source, pd.Series(dtype=object)).dropna():
        names.update(a for a in str(axes).split(",") if a)
    return sorted(n for n in names if n in df.columns)


def config_columns(df: pd.DataFrame) -> list[str]:
    """Columns that identify a configuration within an experiment: the axes and the dtype.

    When every benchmark name spells its axes (``.../batch:16/context:4096/page:16``) those
    are the configuration: counters such as a kernel's chosen ``num_splits`` describe the
    run, not the problem, and may differ between the variants of one configuration.
    Otherwise every axis counter counts."""
    named = df.get("name_axes", pd.Series(dtype=object))
    use_names = len(df) > 0 and named.notna().all() and (named.astype(str) != "").all()
    cols = axis_columns(df, "name_axes" if use_names else "axes")
    if "dtype" in df.columns and df["dtype"].notna().any():
        cols.append("dtype")
    return cols


def samples(df: pd.DataFrame) -> pd.DataFrame:
    """Per-repetition samples of the successful runs: one row per sample with ``time_us``.

    Iteration rows (``--benchmark_repetitions`` with aggregates not suppressed) are the
    samples. Where a benchmark has only aggregates, its median (else mean) aggregate is its
    one sample and ``from_aggregate`` is True: enough for a point, not for a spread or CI.
    """
    ok = df[(df["status"] == "ok") & df["time_us"].notna()]
    iteration = ok[ok["run_type"].fillna("iteration") == "iteration"]
    have = set(zip(iteration["source_file"], iteration["benchmark"]))
    agg = ok[ok["run_type"] == "aggregate"]
    agg = agg[np.array([(s, b) not in have for s, b in zip(agg["source_file"], agg["benchmark"])], dtype=bool)]
    rank = agg["aggregate_name"].map({"median": 0, "mean": 1})
    agg = agg[rank.notna()].assign(_rank=rank).sort_values("_rank")
    agg = agg.drop_duplicates(["source_file", "benchmark"]).drop(columns="_rank")
    out = pd.concat([iteration.assign(from_aggregate=False), agg.assign(from_aggregate=True)],
                    ignore_index=True)
    return out


RECORD_KEY = ["source_file", "benchmark"]


def times_by_record(samp: pd.DataFrame) -> dict[tuple[str, str], np.ndarray]:
    """(source_file, benchmark) -> the ``time_us`` of ``samp``'s rows of that record, in row
    order. Positions from ``groupby.indices``: a frame per group (iterating the groupby) costs
    milliseconds each, and a results tree has thousands of records."""
    if samp.empty:
        return {}
    times = samp["time_us"].to_numpy(float)
    return {k: times[i] for k, i in samp.groupby(RECORD_KEY, sort=False).indices.items()}


def aggregate_stddev(df: pd.DataFrame) -> dict[tuple[str, str], float]:
    """(source_file, benchmark) -> the stddev aggregate in us, where the run reported one."""
    sd = df[(df["run_type"] == "aggregate") & (df["aggregate_name"] == "stddev")]
    return {(s, b): t for s, b, t in zip(sd["source_file"], sd["benchmark"], sd["time_us"])}


def context_number(df: pd.DataFrame, key: str) -> float | None:
    """A numeric context value (e.g. copy_bandwidth_GBps) shared by ``df``'s files: the
    median over files when runs differ, None when no file has it."""
    col = f"ctx_{key}"
    if col not in df.columns:
        return None
    per_file = df.drop_duplicates("source_file")[col]
    values = pd.to_numeric(per_file, errors="coerce").dropna()
    return float(np.median(values)) if len(values) else None


def load_records(paths: Iterable[Path | str] | Path | str, kind: str) -> pd.DataFrame:
    """Records of every ``stalls-*.json`` (kind='stalls') or ``probes-*.json`` (kind='probes')
    file, one row per record, with the file's context (``ctx_``), ``source_file``,
    ``experiment``, ``device_slug`` and ``run_time``. ``wait_points`` dicts become
    ``wait_<point>`` columns."""
    rows = []
    # file_kind names a records file by its name's prefix: other files are not read.
    for path in (p for p in iter_json_files(paths) if p.name.startswith(kind + "-")):
        data = read_json(path)
        if file_kind(path, data) != kind:
            continue
        context = data.get("context", {})
        records = data.get("records")
        if not isinstance(context, dict) or not isinstance(records, list):
            raise ResultsFileError(path, "expected {'context': {...}, 'records': [...]}")
        experiment = context.get("experiment") or path.parent.name
        base = {f"ctx_{k}": _context_value(v) for k, v in context.items()}
        base.update(source_file=str(path), experiment=experiment,
                    device_slug=_device_slug(path, experiment, context), run_time=_run_time(path, context),
                    run_id=str(context.get("run_id") or ""),
                    binary_sha256=str(context.get("binary_sha256") or ""),
                    context_key=_context_key(context), made_time=_made_time(path))
        for i, rec in enumerate(records):
            if not isinstance(rec, dict) or "benchmark" not in rec:
                raise ResultsFileError(path, f"records[{i}] has no 'benchmark'")
            row = dict(base)
            for key, value in rec.items():
                if key == "wait_points" and isinstance(value, dict):
                    row.update({f"wait_{p}": c for p, c in value.items()})
                else:
                    row[key] = value
            row["benchmark"] = strip_manual_time(str(rec["benchmark"]))
            rows.append(row)
    return _frame(rows, ["source_file", "experiment", "device_slug", "run_time", "benchmark", "run_id",
                         "binary_sha256", "context_key", "made_time"])


def _made_time(path: Path) -> pd.Timestamp:
    """When a record file was written: the UTC stamp in its name (``stalls-<stamp>-...``)."""
    m = re.search(r"(\d{8}T\d{6}Z)", path.name)
    if m:
        return pd.Timestamp(datetime.strptime(m.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc))
    return pd.Timestamp(path.stat().st_mtime, unit="s", tz="UTC")


def _context_key(context: dict) -> str:
    """What a profile file copies from the results file of the run it profiled (older files,
    without a run id): the run's date, executable and commit."""
    return json.dumps([str(context.get(k, "")) for k in ("date", "executable", "schedlab_commit")])


def attach_records(records: pd.DataFrame, results: pd.DataFrame) -> pd.DataFrame:
    """Stall / probe records that belong to a run of ``results``, each given that run (``run``).

    A record file belongs to a run when it was made from the same binary in the same device
    call as the harness rows it describes:
      * with a ``run_id`` in its context: the results rows of that run and experiment, and,
        where both record it, the same ``binary_sha256``;
      * older files (no run id): the results file whose context it copies (date, executable,
        commit), unless its context names a ``profiled_build`` other than that commit (a
        different binary), or harness results of another commit on the device were written
        between that run and the record file (the profile then came from a later device call).
    Records that belong to no run are left out (``unattached_records`` lists them).
    """
    cols = list(records.columns) + ["run"]
    if records.empty or results.empty:
        return records.iloc[0:0].assign(run=pd.Series(dtype=object))
    files = results.drop_duplicates("source_file")
    by_run = {(r, e): g for (r, e), g in files.groupby(["run", "experiment"])}
    legacy = {}
    for _, f in files.iterrows():
        ctx = {k[4:]: f[k] for k in ("ctx_date", "ctx_executable", "ctx_schedlab_commit") if k in f}
        legacy.setdefault((f["device_slug"], f["experiment"], _context_key(ctx)), []).append(f)
    out = []
    for path, g in records.groupby("source_file", sort=True):
        first = g.iloc[0]
        run = None
        if first["run_id"]:
            match = by_run.get((first["run_id"], first["experiment"]))
            if match is not None:
                shas = {s for s in match["binary_sha256"] if s}
                if not (first["binary_sha256"] and shas and first["binary_sha256"] not in shas):
                    run = first["run_id"]
        else:
            candidates = legacy.get((first["device_slug"], first["experiment"], first["context_key"]), [])
            if len(candidates) == 1 and _legacy_same_call(first, candidates[0], files):
                run = candidates[0]["run"]
        if run is not None:
            out.append(g.assign(run=run))
    return pd.concat(out, ignore_index=True) if out else records.iloc[0:0].assign(run=pd.Series(dtype=object))


def results_files_of_runs(root: Path, run_ids: set[str]) -> list[Path]:
    """The benchmark results files below ``root`` (``json_files_of``) whose context's run id is
    one of ``run_ids``: what ``attach_records`` compares a record file with a run id against.
    A file's text is searched for each id before its JSON is parsed (a tree holds hundreds of
    files, and reading each whole into rows took half a minute)."""
    out = []
    for path in iter_json_files(root):
        if path.name.startswith(("stalls-", "probes-")) or path.name == "resources.json":
            continue
        try:
            with (gzip.open(path, "rt", encoding="utf-8") if str(path).endswith(".gz") else open(path, encoding="utf-8")) as f:
                text = f.read()
        except (OSError, UnicodeDecodeError, EOFError) as e:
            raise ResultsFileError(path, f"cannot read: {e}") from e
        if any(run_id in text for run_id in run_ids):
            data = read_json(path)
            if file_kind(path, data) == "benchmarks" and run_of(path, data.get("context", {})) in run_ids:
                out.append(path)
    return out


def _legacy_same_call(record: pd.Series, result: pd.Series, files: pd.DataFrame) -> bool:
    commit = str(result.get("ctx_schedlab_commit", ""))
    built = str(record.get("ctx_profiled_build", "") or "")
    if built and built != "nan" and not commit.startswith(built.split()[0]):
        return False
    harness = files[(files["peer"].fillna(0).astype(int) == 0)  # peers run from their own script
                    & (files["device_slug"] == result["device_slug"])]
    between = harness[(harness["run_time"] > result["run_time"]) & (harness["run_time"] < record["made_time"])]
    return bool((between.get("ctx_schedlab_commit", pd.Series(dtype=object)).astype(str) == commit).all())


def unattached_records(records: pd.DataFrame, results: pd.DataFrame, attached: pd.DataFrame | None = None) -> list[str]:
    """The record files that belong to no run of ``results`` (see ``attach_records``; pass its
    answer as ``attached`` where it is at hand)."""
    if records.empty:
        return []
    attached = attach_records(records, results) if attached is None else attached
    return sorted(set(records["source_file"]) - set(attached["source_file"]))


def load_resources(paths: Iterable[Path | str] | Path | str) -> pd.DataFrame:
    """The static resource report(s) (``resources.json``): one row per (kernel, target)."""
    rows = []
    for path in (p for p in iter_json_files(paths) if p.name == "resources.json"):  # file_kind's name rule
        data = read_json(path)
        if file_kind(path, data) != "resources":
            continue
        for i, rec in enumerate(data):
            if not isinstance(rec, dict):
                raise ResultsFileError(path, f"entry {i} is not an object")
            rows.append(dict(rec, source_file=str(path)))
    return _frame(rows, ["kernel", "target", "experiment", "variant", "source_file"])


class _CallableModule(type(sys.modules[__name__])):
    """``schedlab_analysis.load("results")``: the module called as a function returns
    ``load_results`` of the given paths, the whole results frame in one call."""

    def __call__(self, *paths: Path | str) -> pd.DataFrame:
        return load_results(list(paths) if len(paths) != 1 else paths[0])


sys.modules[__name__].__class__ = _CallableModule
