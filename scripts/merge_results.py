#!/usr/bin/env python3
"""Gathers results trees (one per Slurm array task, or per machine) into one results tree, and
the sweep summaries of one sharded sweep into one merged summary.

    python3 scripts/merge_results.py --out results results-slurm/<job id>/task-*

- Every file of every tree is copied to the same relative path under --out. A file is never
  written over: a path that exists with the same bytes is left alone; the same path with
  different content (in --out or in two trees) is an error, and then nothing is copied.
- The sweep summaries (<device>/sweeps/*.json written by scripts/sweep.py --shard K/N) of one
  run id become one summary <device>/sweeps/<stamp>-<commit>.json: every experiment with the
  shard, host and GPU that ran it, the totals summed, and each shard's wall time. Every shard
  0..N-1 must be present (--allow-missing-shards to merge what is there; the summary then names
  the missing ones). A summary without a shard is copied like any other file.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sweep import SCHEMA, sweep_failed, totals, write_summary  # noqa: E402


class MergeError(Exception):
    pass


def tree_files(tree: Path) -> list[Path]:
    """Files of a tree, relative to it; hidden and partial files are not results."""
    return sorted(p.relative_to(tree) for p in tree.rglob("*")
                  if p.is_file() and not any(part.startswith(".") for part in p.relative_to(tree).parts))


def is_shard_summary(tree: Path, rel: Path) -> dict | None:
    if len(rel.parts) != 3 or rel.parts[1] != "sweeps" or rel.suffix != ".json":
        return None
    try:
        doc = json.loads((tree / rel).read_text())
    except (OSError, ValueError):
        return None
    return doc if doc.get("schema") == SCHEMA and doc.get("shard") else None


def plan_copies(trees: list[Path], out: Path) -> tuple[list[tuple[Path, Path]], list[tuple[Path, dict]]]:
    """(source, destination) pairs to copy and the shard summaries found; raises MergeError on a
    clash before anything is copied."""
    copies: dict[Path, Path] = {}
    summaries = []
    for tree in trees:
        if not tree.is_dir():
            raise MergeError(f"{tree}: not a folder")
        for rel in tree_files(tree):
            src = tree / rel
            doc = is_shard_summary(tree, rel)
            if doc is not None:
                summaries.append((src, doc))
                continue
            dest = out / rel
            if rel in copies:
                if copies[rel].read_bytes() != src.read_bytes():
                    raise MergeError(f"{rel}: {copies[rel]} and {src} differ; results are never written over")
                continue
            if dest.exists():
                if dest.read_bytes() != src.read_bytes():
                    raise MergeError(f"{dest} exists and differs from {src}; results are never written over")
                continue
            copies[rel] = src
    return [(src, out / rel) for rel, src in copies.items()], summaries


def merge_summaries(docs: list[dict], allow_missing: bool) -> dict:
    """One summary of a sharded sweep from its shards' summaries (one run id, one tier)."""
    first = docs[0]
    for key in ("run_id", "tier", "device"):
        values = sorted({str(d.get(key)) for d in docs})
        if len(values) > 1:
            raise MergeError(f"shard summaries of one sweep disagree on {key}: {', '.join(values)}")
    counts = {d["shard"]["count"] for d in docs}
    if len(counts) > 1:
        raise MergeError(f"run {first['run_id']}: shard summaries disagree on the shard count: {sorted(counts)}")
    count = counts.pop()
    indices = [d["shard"]["index"] for d in docs]
    dupes = sorted({i for i in indices if indices.count(i) > 1})
    if dupes:
        raise MergeError(f"run {first['run_id']}: shard(s) {dupes} appear more than once")
    missing = sorted(set(range(count)) - set(indices))
    if missing and not allow_missing:
        raise MergeError(f"run {first['run_id']}: shard(s) {missing} of {count} missing "
                         "(their tasks failed or their trees were not given); --allow-missing-shards merges the rest")
    docs = sorted(docs, key=lambda d: d["shard"]["index"])
    experiments = [e for d in docs for e in d.get("experiments", [])]
    commits = sorted({(d.get("schedlab_commit"), d.get("schedlab_dirty")) for d in docs})
    return {
        "schema": SCHEMA, "tier": first["tier"], "run_id": first["run_id"], "device": first["device"],
        "schedlab_commit": commits[0][0], "schedlab_dirty": "true" if any(c[1] == "true" for c in commits)
        else commits[0][1],
        "started": min(d["started"] for d in docs), "wall_s": max(d["wall_s"] for d in docs),
        "shard": None, "shards": [{"index": d["shard"]["index"], "count": count, "host": d.get("host"),
                                   "wall_s": d["wall_s"], "gpus": d.get("gpus", []), "command": d.get("command")}
                                  for d in docs],
        "missing_shards": missing,
        "gpus": [dict(g, shard=d["shard"]["index"], host=d.get("host")) for d in docs for g in d.get("gpus", [])],
        "totals": totals(experiments), "experiments": experiments,
    } | ({"commits_differ": [c[0] for c in commits]} if len(commits) > 1 else {})


def merge(trees: list[Path], out: Path, allow_missing: bool = False) -> tuple[list[Path], list[Path]]:
    """Copies the trees into out and writes the merged summaries; returns (copied, summaries)."""
    copies, shard_docs = plan_copies(trees, out)
    groups: dict[str, list[dict]] = defaultdict(list)
    for _, doc in shard_docs:
        groups[str(doc.get("run_id"))].append(doc)
    merged = [merge_summaries(docs, allow_missing) for _, docs in sorted(groups.items())]  # checks first
    for src, dest in copies:
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
    written = []
    for m in merged:
        same = [p for p in sorted((out / m["device"] / "sweeps").glob("*.json")) if json.loads(p.read_text()) == m]
        if same:  # the same trees merged again
            written.append(same[0])
            continue
        stamp = m["started"].replace("-", "").replace(":", "")
        written.append(write_summary(out, m["device"], stamp, m["schedlab_commit"], m["schedlab_dirty"], None, m))
    return [d for _, d in copies], written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="the results tree to merge into (e.g. results)")
    ap.add_argument("trees", type=Path, nargs="+", help="results trees, e.g. results-slurm/<job id>/task-*")
    ap.add_argument("--allow-missing-shards", action="store_true")
    args = ap.parse_args(argv)
    try:
        copied, summaries = merge(args.trees, args.out, args.allow_missing_shards)
    except MergeError as e:
        print(f"merge_results: {e}; nothing copied", file=sys.stderr)
        return 1
    print(f"merge_results: {len(copied)} files copied into {args.out}")
    failed = False
    for p in summaries:
        doc = json.loads(p.read_text())
        t = doc["totals"]
        failed |= sweep_failed(doc) or bool(doc["missing_shards"])
        print(f"merge_results: sweep {doc['run_id']} ({doc['tier']}, {len(doc['shards'])} shards): "
              f"{t['passed']} passed, {t['skipped']} skipped, {t['failed']} failed configurations; "
              f"{t['experiments_failed']} experiments failed, {t['experiments_not_run']} not run; summary {p}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
