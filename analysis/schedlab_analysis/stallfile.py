"""Write profiler records next to the run they describe:
``results/<device>/<experiment>/<kind>-<UTC stamp>-<sha>.json`` with the run's context
(commit, device, toolkit, ...) plus how the records were made."""
from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

from .load import read_json, file_kind, ResultsFileError

RECORD_KINDS = ("stalls", "probes")


def utc_stamp(now: datetime | None = None) -> str:
    """Same format as the harness's results files (%Y%m%dT%H%M%SZ)."""
    return (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")


def commit_tag(context: dict) -> str:
    commit = str(context.get("schedlab_commit", "unknown"))[:10]
    return commit + ("-dirty" if str(context.get("schedlab_dirty")) == "true" else "")


def run_context(results_file: Path | str) -> dict:
    """The context of a benchmark results file, so the records carry the run's provenance."""
    data = read_json(Path(results_file))
    if file_kind(Path(results_file), data) != "benchmarks":
        raise ResultsFileError(results_file, "not a benchmark results file")
    return dict(data.get("context", {}))


def _clean(value):
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN
    return value


def write_stall_file(records: Iterable[dict], context: dict, out_dir: Path | str, *,
                     kind: str = "stalls", extra_context: dict | None = None,
                     now: datetime | None = None) -> Path:
    """Write ``records`` as ``<out_dir>/<kind>-<stamp>-<sha>.json`` and return the path.

    ``out_dir`` is the run's directory (``results/<device>/<experiment>``); ``context`` is
    the run's context (``run_context``), extended with ``extra_context`` (the profiler, its
    metrics, ...). Never overwrites: a clash gets a ``-N`` suffix, as results files do.
    """
    if kind not in RECORD_KINDS:
        raise ValueError(f"kind must be one of {RECORD_KINDS}, not {kind!r}")
    records = [{k: _clean(v) for k, v in r.items()} for r in records]
    for i, r in enumerate(records):
        if "benchmark" not in r:
            raise ValueError(f"record {i} has no 'benchmark'")
    ctx = dict(context)
    ctx.update(extra_context or {})
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{kind}-{utc_stamp(now)}-{commit_tag(ctx)}"
    path = out_dir / f"{stem}.json"
    n = 1
    while path.exists():
        path = out_dir / f"{stem}-{n}.json"
        n += 1
    tmp = out_dir / f".{path.name}.partial"
    tmp.write_text(json.dumps({"context": ctx, "records": records}, indent=1, sort_keys=True) + "\n",
                   encoding="utf-8")
    tmp.rename(path)
    return path
