"""In-kernel wait-point probes -> ``probes-*.json`` records.

A build with ``-DSCHEDLAB_STALL_PROBES=ON`` adds ``probe_wait_<point>`` (cycles warps spent
at that wait point over all warp cycles) and ``probe_total_cycles`` to each benchmark record.
This turns one such results file into a probes file beside it, whose records the plots show
next to the ncu stall breakdown: ``wait_<point>`` is in cycles, ``wait_cycles_share`` the
sum of the shares over wait points, the profiler-free memwait estimate.

    python -m schedlab_analysis.probes RESULTS.json [--out-dir DIR]
"""
from __future__ import annotations

import argparse
from pathlib import Path

from .load import read_json
from .stallfile import run_context, write_stall_file

PROBE_PREFIX = "probe_wait_"


def probe_records(results: dict) -> list[dict]:
    """One record per benchmark iteration row that carries probe counters (the first
    repetition of each benchmark: the counters are ratios over every launch already)."""
    out, seen = [], set()
    for b in results.get("benchmarks", []):
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        waits = {k[len(PROBE_PREFIX):]: v for k, v in b.items() if k.startswith(PROBE_PREFIX)}
        if not waits:
            continue
        name = b["name"].removesuffix("/manual_time")
        if name in seen:
            continue
        seen.add(name)
        total = b.get("probe_total_cycles")
        # wait_<point> in cycles (as the plots read them), wait_cycles_share their sum over total.
        rec = {"benchmark": name, "total_cycles": total, "wait_cycles_share": sum(waits.values())}
        rec.update({f"wait_{k}": share * total for k, share in waits.items()})
        out.append(rec)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path)
    ap.add_argument("--out-dir", type=Path, help="default: the results file's directory")
    args = ap.parse_args(argv)
    records = probe_records(read_json(args.results))
    if not records:
        print(f"{args.results}: no probe counters (was it built with -DSCHEDLAB_STALL_PROBES=ON?)")
        return 1
    path = write_stall_file(records, run_context(args.results), args.out_dir or args.results.parent,
                            kind="probes", extra_context={"probes": "in-kernel cycle counter at wait points"})
    print(f"wrote {len(records)} probe records to {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
