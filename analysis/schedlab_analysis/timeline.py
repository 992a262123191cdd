"""Per-CTA timelines of a launch, as a ``-DSCHEDLAB_CTA_TIMELINE=ON`` build records them: each CTA's
start, end and SM, summarized by the harness into ``tl_*`` counters of the last timed launch
(``common/harness/timeline.hpp``): times in microseconds from the first CTA's start, for the
main kernel (``tl_k0_*``) and the kernel launched after it (``tl_k1_*``, the split combine).

Such a build perturbs its timings (one atomic per warp at each CTA's end, the buffer cleared
before each launch), so its files live under ``results/<device>/timelines/<experiment>/<run>/``,
out of the directory scans that find an experiment's runs.

- ``timeline_rows(files)``: one row per benchmark (the repetitions' median record): variant,
  configuration, time (us) and the counters.
- ``markdown(files, configs)``: a table of the rows whose configuration contains one of
  ``configs`` (all rows when none is given), and what its columns mean.

Raw spans (``SCHEDLAB_TIMELINE_CSV``: every summarized launch's CTAs, ``launch,kernel,cta,sm,
start_ns,end_ns``, a file per process):

- ``read_spans(files)``: the spans of every file, with its ``process`` (the file's position) and
  times in microseconds from its launch's first CTA start.
- ``launch_table(spans, kernel_ctas, tail)``: one row per launch of the main kernel with that
  many CTAs: its span and the SMs that ran the grid's last ``tail`` CTAs.
- ``pair_spread(spans, kernel_ctas)``: per SM and the pair of grid CTAs it ran, how far apart
  the SM's last end falls over the launches that gave it that same pair.

CLI: python -m schedlab_analysis.timeline FILE... [--config TEXT]...
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pandas as pd

from .load import is_results_name, read_json

COUNTERS = ("tl_k0_ctas", "tl_k0_start_last", "tl_k0_end_p10", "tl_k0_end_p50", "tl_k0_end_p90", "tl_k0_end",
            "tl_k0_cta_p50", "tl_k0_tail_idle", "tl_gap", "tl_k1_end", "tl_span")


def timeline_rows(files: list[Path | str]) -> pd.DataFrame:
    rows = []
    for f in map(Path, files):
        if not is_results_name(f.name):
            raise ValueError(f"{f}: not a results file")
        data = read_json(f)
        if not isinstance(data, dict) or "benchmarks" not in data:
            raise ValueError(f"{f}: no benchmarks")
        if not str(data.get("context", {}).get("cta_timeline", "")).startswith("on"):
            raise ValueError(f"{f}: not from a build with per-CTA timelines (context cta_timeline)")
        for b in data["benchmarks"]:
            if b.get("aggregate_name") != "median" or b.get("error_occurred") or "tl_k0_ctas" not in b:
                continue
            parts = re.sub(r"(/iterations:\d+)?/manual_time(_median)?$", "", b["name"]).split("/")
            row = {"variant": parts[1], "config": "/".join(parts[2:]), "time_us": float(b["real_time"])}
            row.update({k: float(b[k]) for k in COUNTERS if k in b})
            rows.append(row)
    if not rows:
        raise ValueError("no benchmark with per-CTA timeline counters (medians of repetitions) in " +
                         ", ".join(map(str, files)))
    return pd.DataFrame(rows)


def _us(x: float) -> str:
    return "" if pd.isna(x) else f"{x:.1f}"


def markdown(files: list[Path | str], configs: list[str] | None = None) -> str:
    t = timeline_rows(files)
    if configs:
        t = t[t["config"].map(lambda c: any(s in c for s in configs))]
        if t.empty:
            raise ValueError(f"no configuration containing any of {configs}")
    t = t.sort_values(["config", "time_us"])
    lines = ["| configuration | variant | time (us) | CTAs | last CTA start | CTA ends p10 / p50 / p90 / last | "
             "SMs idle at the end | combine ends |",
             "|---|---|---|---|---|---|---|---|"]
    for _, r in t.iterrows():
        ends = " / ".join(_us(r.get(k)) for k in ("tl_k0_end_p10", "tl_k0_end_p50", "tl_k0_end_p90", "tl_k0_end"))
        lines.append(f"| {r['config']} | {r['variant']} | {r['time_us']:.1f} | {int(r['tl_k0_ctas'])} | "
                     f"{_us(r['tl_k0_start_last'])} | {ends} | {100 * r['tl_k0_tail_idle']:.0f}% | "
                     f"{_us(r.get('tl_k1_end', float('nan')))} |")
    lines.append("")
    lines.append("Times in us from the first CTA's start, of the last timed launch (the median repetition); "
                 "\"SMs idle at the end\": the share of the SMs' time, over the decode kernel's span, after "
                 "an SM's last CTA ended and before the kernel's did.")
    return "\n".join(lines)


SPAN_COLUMNS = ("launch", "kernel", "cta", "sm", "start_ns", "end_ns")


def read_spans(files: list[Path | str]) -> pd.DataFrame:
    frames = []
    for process, f in enumerate(map(Path, files)):
        frame = pd.read_csv(f)
        if tuple(frame.columns) != SPAN_COLUMNS:
            raise ValueError(f"{f}: not a CTA span file (columns {list(frame.columns)}, want {list(SPAN_COLUMNS)})")
        if (frame["end_ns"] < frame["start_ns"]).any():
            raise ValueError(f"{f}: a span ends before it starts")
        first = frame.groupby("launch")["start_ns"].transform("min")
        frame = frame.assign(process=process, start_us=(frame["start_ns"] - first) / 1e3,
                             end_us=(frame["end_ns"] - first) / 1e3)
        frames.append(frame)
    if not frames:
        raise ValueError("no span files")
    return pd.concat(frames, ignore_index=True)


def _main_launches(spans: pd.DataFrame, kernel_ctas: int) -> pd.DataFrame:
    main = spans[spans["kernel"] == 0]
    sizes = main.groupby(["process", "launch"])["cta"].transform("size")
    return main[sizes == kernel_ctas]


def launch_table(spans: pd.DataFrame, kernel_ctas: int, tail: int) -> pd.DataFrame:
    rows = []
    for (process, launch), g in _main_launches(spans, kernel_ctas).groupby(["process", "launch"]):
        last = g[g["cta"] >= kernel_ctas - tail]
        rows.append({"process": process, "launch": launch, "span_us": g["end_us"].max(),
                     "tail_sms": tuple(sorted(int(s) for s in last["sm"]))})
    if not rows:
        return pd.DataFrame(columns=["process", "launch", "span_us", "tail_sms"])
    return pd.DataFrame(rows).sort_values("span_us").reset_index(drop=True)


def pair_spread(spans: pd.DataFrame, kernel_ctas: int) -> pd.DataFrame:
    main = _main_launches(spans, kernel_ctas)
    per = main.groupby(["process", "launch", "sm"]).agg(ctas=("cta", lambda c: tuple(sorted(c))), end_us=("end_us", "max"))
    out = per.reset_index().groupby(["sm", "ctas"])["end_us"].agg(["count", "min", "max"]).reset_index()
    out = out[out["count"] > 1]
    return out.assign(spread_us=out["max"] - out["min"]).sort_values("spread_us", ascending=False).reset_index(drop=True)


def tail_on_sms(spans: pd.DataFrame, kernel_ctas: int, tail: int, from_sm: int) -> pd.DataFrame:
    """The main kernel's launches grouped by how many of the grid's last ``tail`` CTAs landed on
    SMs numbered ``from_sm`` and above: per count, the launches and their span's range (us)."""
    rows = []
    for _, g in _main_launches(spans, kernel_ctas).groupby(["process", "launch"]):
        last = g[g["cta"] >= kernel_ctas - tail]
        rows.append({"on_top": int((last["sm"] >= from_sm).sum()), "span_us": g["end_us"].max()})
    if not rows:
        return pd.DataFrame(columns=["on_top", "launches", "min_us", "max_us"])
    out = pd.DataFrame(rows).groupby("on_top")["span_us"].agg(launches="count", min_us="min", max_us="max")
    return out.reset_index()


def sm_block_ends(spans: pd.DataFrame, kernel_ctas: int, tail: int, block: int = 8) -> pd.DataFrame:
    """How fast each SM streams, whatever the placement: over the main kernel's launches, the
    mean end (us) of the SMs that ran two CTAs from outside the grid's last ``tail``, by block of
    ``block`` SM numbers (``first_sm``, ``sms_seen``: SM-launch pairs averaged, ``mean_end_us``)."""
    main = _main_launches(spans, kernel_ctas)
    head = main[main["cta"] < kernel_ctas - tail]
    per = head.groupby(["process", "launch", "sm"])["end_us"].agg(["count", "max"]).reset_index()
    two = per[per["count"] == 2]
    out = two.assign(first_sm=two["sm"] // block * block).groupby("first_sm")["max"].agg(["count", "mean"])
    return out.reset_index().rename(columns={"count": "sms_seen", "mean": "mean_end_us"})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--config", action="append", default=[], help="keep configurations containing this text")
    args = ap.parse_args(argv)
    try:
        print(markdown(args.files, args.config))
    except (ValueError, OSError) as e:
        print(f"timeline: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
