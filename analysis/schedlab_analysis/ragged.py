"""Ragged decode batches against their uniform twins and against the peers of the same run.

A ragged configuration (one whose ``lengths`` hold more than one length; a list of equal
lengths such as ``8x2048`` is a uniform batch written as a list) is paired with the uniform
configuration of the same KV dtype, page size and heads that reads the same bytes: the same
total keys (batch x context), up to one key per sequence of the twin where the total does not
divide. The decode benchmark shapes register each ragged batch beside such a twin, so their
bandwidths compare directly; a ragged batch with no such twin has no share. The share asked of a ragged batch is its bandwidth
over the twin's best (the fastest variant of the twin configuration in the same run); the peer
ratio is our time over the fastest peer's on the same ragged batch, inverted (>1: ours faster);
``peer_twin_gbps`` is the fastest peer path's rate on the twin, so a batch on which every path of
the peer runs far below its own uniform rate can be told apart from the peer's usual rate.

A configuration whose GQA group (query heads per KV head) is above 16, MQA among them, is paired
by ``group_shares`` with the GQA 32/8 configuration of the same KV dtype and page size that reads
the same KV bytes (total keys x KV heads): the share is its bandwidth over that one's best.
"""
from __future__ import annotations

import functools
import math

import pandas as pd

from .dataset import ExperimentView
from .lengths import parse_lengths


@functools.lru_cache(maxsize=256)
def _lengths(spec) -> tuple[int, ...]:
    """Every sequence's length of a ``lengths`` value, as the harness draws it (lists, repeats
    and named distributions: schedlab_analysis.lengths); () if none."""
    if not (isinstance(spec, str) and spec):
        return ()
    return tuple(parse_lengths(spec))


def _total_keys(row: pd.Series) -> int:
    lengths = _lengths(row.get("lengths"))
    if lengths:
        return sum(lengths)
    return int(row["batch"]) * int(row["context"])


def is_ragged(lengths) -> bool:
    """Whether a ``lengths`` value describes sequences of more than one length."""
    return len(set(_lengths(lengths))) > 1


def _same_heads(frame: pd.DataFrame, row: pd.Series) -> pd.Series:
    """Rows of ``frame`` with ``row``'s query and KV heads (all rows where the columns are absent)."""
    keep = pd.Series(True, index=frame.index)
    for col in ("q_heads", "kv_heads"):
        if col in frame.columns and col in row.index:
            keep &= frame[col] == row[col]
    return keep


def ragged_shares(view: ExperimentView, variant: str) -> pd.DataFrame:
    """One row per ragged configuration of ``variant``: its GB/s, its uniform twin's best GB/s
    (any variant of ours in the run), the share, and the fastest peer's GB/s and name."""
    ok = view.ok.copy()
    if ok.empty:
        return pd.DataFrame()
    ok["keys"] = ok.apply(_total_keys, axis=1)
    listed = ok["lengths"].apply(lambda s: isinstance(s, str) and bool(s)) if "lengths" in ok else False
    ragged_mask = ok["lengths"].apply(is_ragged) if "lengths" in ok else False
    ours = ok[ragged_mask & (ok["variant"] == variant)]
    uniform = ok[~listed]
    peers = view.peers
    out = []
    for _, r in ours.iterrows():
        twins = uniform[(uniform["dtype"] == r["dtype"]) & (uniform["page"] == r["page"]) & _same_heads(uniform, r)]
        # The same bytes: the twin's keys at most one per twin sequence short of the batch's.
        gap = r["keys"] - twins["keys"]
        twins = twins[(gap >= 0) & (gap < twins["batch"].astype(int))]
        if twins.empty:
            continue
        twin = twins[gap.loc[twins.index] == gap.loc[twins.index].min()]
        best_twin = twin.loc[twin["gbps"].idxmax()]
        row = {"config": r["config"], "dtype": r["dtype"], "variant": variant, "gbps": r["gbps"],
               "twin": best_twin["config"], "twin_variant": best_twin["variant"], "twin_gbps": best_twin["gbps"],
               "share": r["gbps"] / best_twin["gbps"], "peer": None, "peer_gbps": math.nan, "vs_peer": math.nan,
               "peer_twin_gbps": math.nan}
        if len(peers):
            p = peers[(peers["config"] == r["config"]) & peers["time_us"].notna()]
            if len(p):
                fastest = p.loc[p["time_us"].idxmin()]
                row.update(peer=fastest["variant"], peer_gbps=fastest["gbps"], vs_peer=fastest["time_us"] / r["time_us"])
            on_twin = peers[(peers["config"] == best_twin["config"]) & peers["time_us"].notna()]
            if len(on_twin):
                row.update(peer_twin_gbps=on_twin["gbps"].max())
        out.append(row)
    return pd.DataFrame(out)


def group_shares(view: ExperimentView, variant: str, gqa: tuple[int, int] = (32, 8)) -> pd.DataFrame:
    """One row per configuration of ``variant`` whose GQA group is above 16: its GB/s, the best
    GB/s (any variant of ours in the run) of the ``gqa`` (query heads, KV heads) configuration of
    the same KV dtype and page size and the same KV bytes, and the share."""
    ok = view.ok.copy()
    if ok.empty or "q_heads" not in ok or "kv_heads" not in ok:
        return pd.DataFrame()
    ok["kv_keys"] = ok.apply(_total_keys, axis=1) * ok["kv_heads"].astype(int)
    large = ok[(ok["variant"] == variant) & (ok["q_heads"] / ok["kv_heads"] > 16)]
    base = ok[(ok["q_heads"] == gqa[0]) & (ok["kv_heads"] == gqa[1])]
    out = []
    for _, r in large.iterrows():
        twins = base[(base["dtype"] == r["dtype"]) & (base["page"] == r["page"]) & (base["kv_keys"] == r["kv_keys"])]
        if twins.empty:
            continue
        best = twins.loc[twins["gbps"].idxmax()]
        out.append({"config": r["config"], "dtype": r["dtype"], "variant": variant, "group": r["q_heads"] / r["kv_heads"],
                    "gbps": r["gbps"], "gqa": best["config"], "gqa_variant": best["variant"], "gqa_gbps": best["gbps"],
                    "share": r["gbps"] / best["gbps"]})
    return pd.DataFrame(out)
