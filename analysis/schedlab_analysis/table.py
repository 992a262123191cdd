"""Markdown table of one experiment from its newest results: a row per configuration, a
column per variant (median TFLOP/s for prefill, TB/s for decode), each variant's change
against the baseline, and the results file it came from. The experiment READMEs quote it.

    python -m schedlab_analysis.table results decode_kv_streaming [--device h200]
"""
from __future__ import annotations

import argparse

from .dataset import Dataset


def render(ds: Dataset, device: str, experiment: str) -> str:
    view = ds.view(device, experiment)
    ok = view.ok
    if ok.empty:
        return f"no timed results for {device}/{experiment}"
    decode = view.family == "decode"
    # The view's rates are medians over repetitions already (GB/s for decode, TFLOP/s else).
    column, unit, scale = ("gbps", "TB/s", 1e3) if decode else ("tflops", "TFLOP/s", 1.0)
    baseline = ok["baseline"].iloc[0]
    variants = [baseline] + sorted(v for v in ok["variant"].unique() if v != baseline)
    ok = ok.assign(rate=ok[column] / scale)
    lines = [f"| configuration | " + " | ".join(f"{v} ({unit})" for v in variants) + " |",
             "|---|" + "---|" * len(variants)]
    for config, rows in ok.groupby("config", sort=False):
        by_variant = {v: rows[rows["variant"] == v]["rate"].median() for v in variants}
        base = by_variant.get(baseline)
        cells = []
        for v in variants:
            r = by_variant.get(v)
            if r != r or r is None:
                cells.append("-")
            elif v == baseline or not base:
                cells.append(f"{r:.3g}" if decode else f"{r:.0f}")
            else:
                cells.append((f"{r:.3g}" if decode else f"{r:.0f}") + f" ({(r / base - 1) * 100:+.1f}%)")
        lines.append(f"| {config} | " + " | ".join(cells) + " |")
    files = sorted(set(ok["source_file"].map(lambda p: str(p)))) if "source_file" in ok else []
    lines.append("")
    lines.append("Median over repetitions of " + ", ".join(f"`{f}`" for f in files) + ".")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("experiment")
    ap.add_argument("--device", default="h200")
    args = ap.parse_args(argv)
    print(render(Dataset.load([args.results]), args.device, args.experiment))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
