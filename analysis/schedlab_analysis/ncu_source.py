"""Where one kernel's warps wait, by SASS instruction: Nsight Compute's source page as
``scripts/device_ncu_source.sh`` exports it (``ncu -i REP --page source --print-source sass --csv``,
plain or gzipped).

The file: a ``"Kernel Name","<name>",`` line, a header row starting ``"Address","Source"``, then
one row per instruction in address order: its address (hex), its SASS text (``@!P0  BRA
0x7f63ab7a27b0``), warp-state samples (all, and those in which the warp issued nothing), its
executions (one per warp that ran it), the samples of each stall reason (``stall_<reason>``,
and ``stall_<reason> (Not Issued)``), and memory counters. Numbers may carry thousands
separators. The export has no column for the ``gmma`` reason; ``unlisted`` holds the samples of
an instruction that no ``stall_`` column accounts for.

- ``read_source_csv(path)``: one row per instruction (``offset`` from the first instruction,
  ``sass``, ``opcode``, ``op``, ``samples``, ``not_issued``, ``executed``, one column per stall
  reason, ``unlisted``); ``attrs`` holds ``kernel``, ``reasons``, ``path`` and
  ``base`` (the first instruction's address).
- ``loops(df)``: the regions closed by a backward ``BRA``, with their passes, their share of the
  samples and their top stall reasons.
- ``summary(df, top)``: the instructions with the most samples and their top two reasons.

Every share is a percent of the kernel's samples.

CLI: python -m schedlab_analysis.ncu_source FILE [--top N]
"""
from __future__ import annotations

import argparse
import csv
import gzip
import io
import re
import sys
from pathlib import Path

import pandas as pd

from .ncu import parse_number

COL_ADDRESS = "Address"
COL_SOURCE = "Source"
COL_SAMPLES = "Warp Stall Sampling (All Samples)"
COL_NOT_ISSUED = "Warp Stall Sampling (Not-issued Samples)"
COL_EXECUTED = "Instructions Executed"
REQUIRED = (COL_ADDRESS, COL_SOURCE, COL_SAMPLES, COL_NOT_ISSUED, COL_EXECUTED)
UNLISTED = "unlisted"

_HEX = re.compile(r"0x[0-9a-fA-F]+")


class SourceCsvError(ValueError):
    pass


def _text(path: Path) -> str:
    if path.name.endswith(".gz"):
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
            return f.read()
    return path.read_text(encoding="utf-8", errors="replace")


def _opcode(sass: str) -> str:
    """``@!P0  BRA 0x7f..`` -> ``BRA``: the first mnemonic, without the predicate."""
    tokens = sass.split()
    if tokens and tokens[0].startswith("@"):
        tokens = tokens[1:]
    return tokens[0] if tokens else ""


def read_source_csv(path: Path | str) -> pd.DataFrame:
    """One row per SASS instruction of the file's kernel (see the module docstring)."""
    path = Path(path)
    lines = _text(path).splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(f'"{COL_ADDRESS}",')), None)
    if start is None:
        first = next((line for line in lines if line.strip()), "")
        raise SourceCsvError(f"{path}: no source-page header row (\"Address\",\"Source\",...); "
                             f"was it written by ncu --page source --csv? First line: {first[:200]!r}")
    names = [line for line in lines if line.startswith('"Kernel Name",')]
    if len(names) > 1:
        raise SourceCsvError(f"{path}: {len(names)} kernels in one file; this reader takes one")
    kernel = next(csv.reader([names[0]]))[1] if names else ""
    rows = [r for r in csv.reader(io.StringIO("\n".join(lines[start:]))) if r]
    header, body = rows[0], rows[1:]
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise SourceCsvError(f"{path}: header lacks {missing}")
    if not body:
        raise SourceCsvError(f"{path}: no instruction rows")
    bad = next((i for i, r in enumerate(body) if len(r) != len(header)), None)
    if bad is not None:
        raise SourceCsvError(f"{path}: instruction row {bad + 1} has {len(body[bad])} fields, "
                             f"the header {len(header)}")
    raw = pd.DataFrame(body, columns=header)
    try:
        address = raw[COL_ADDRESS].map(lambda s: int(s, 16))
    except ValueError as e:
        raise SourceCsvError(f"{path}: an address that is not hex ({e})") from None

    def number(col: str) -> pd.Series:
        return raw[col].map(parse_number).fillna(0.0).astype(float)

    df = pd.DataFrame({
        "offset": (address - address.iloc[0]).astype(int),
        "sass": raw[COL_SOURCE].str.strip(),
    })
    df["opcode"] = df["sass"].map(_opcode)
    df["op"] = df["opcode"].str.split(".").str[0]
    df["samples"] = number(COL_SAMPLES)
    df["not_issued"] = number(COL_NOT_ISSUED)
    df["executed"] = number(COL_EXECUTED)
    reasons = [c[len("stall_"):] for c in header if c.startswith("stall_") and not c.endswith("(Not Issued)")]
    for reason in reasons:
        df[reason] = number(f"stall_{reason}")
    df[UNLISTED] = (df["samples"] - df[reasons].sum(axis=1)).clip(lower=0.0)
    df.attrs.update(kernel=kernel, reasons=reasons + [UNLISTED], path=str(path), base=int(address.iloc[0]))
    return df


INSTRUCTION_COLUMNS = ("offset", "sass", "opcode", "op", "samples", "not_issued", "executed")


def _reasons(df: pd.DataFrame) -> list[str]:
    """The stall-reason columns (``attrs["reasons"]``; else every column but the instruction's own)."""
    return list(df.attrs.get("reasons") or [c for c in df.columns if c not in INSTRUCTION_COLUMNS])


def _top_reasons(sums: pd.Series, total: float, n: int) -> dict[str, object]:
    """``reason1``, ``reason1_pct``, ...: the n largest nonzero reasons, in percent of ``total``."""
    order = sums[sums > 0].sort_values(ascending=False, kind="stable")
    out: dict[str, object] = {}
    for i in range(n):
        has = i < len(order)
        out[f"reason{i + 1}"] = order.index[i] if has else ""
        out[f"reason{i + 1}_pct"] = 100.0 * order.iloc[i] / total if has and total else 0.0
    return out


def stall_totals(df: pd.DataFrame) -> pd.Series:
    """Each reason's samples in percent of all samples, largest first (zeros dropped)."""
    total = df["samples"].sum()
    sums = df[_reasons(df)].sum()
    return (100.0 * sums[sums > 0] / total).sort_values(ascending=False, kind="stable")


def branch_target(sass: str) -> int | None:
    """The absolute address a ``BRA`` jumps to (its last hex operand), or None for other opcodes."""
    opcode = _opcode(sass)
    if opcode.split(".")[0] != "BRA":
        return None
    operands = sass.split(opcode, 1)[1]
    found = _HEX.findall(operands)
    return int(found[-1], 16) if found else None


LOOP_COLUMNS = ["start", "end", "instructions", "passes", "inst_per_pass", "depth", "samples", "share_pct"]


def loops(df: pd.DataFrame, reasons: int = 3) -> pd.DataFrame:
    """One row per backward branch (a ``BRA`` whose target lies below it): the loop region
    [``start``, ``end``] from its target to the branch, as offsets.

    ``instructions``: SASS instructions in the region; ``passes``: executions of the closing
    branch (one per warp and pass, over the launch); ``inst_per_pass``: the region's executed
    instructions over its passes (those of inner loops' passes included); ``depth``: how many of the
    other regions enclose this one; ``samples``, ``share_pct``: the region's samples;
    ``reason<i>``, ``reason<i>_pct``: its largest stall reasons. Ordered by start, an enclosing
    region before those it holds. A branch to itself (the trailing ``BRA`` after ``EXIT``) or
    to an address outside the file closes nothing.
    """
    if "base" not in df.attrs:
        raise SourceCsvError("loops() needs attrs['base'], the address offsets count from "
                             "(read_source_csv sets it)")
    base = int(df.attrs["base"])
    total = df["samples"].sum()
    offsets = set(df["offset"])
    cols = _reasons(df)
    found = []
    for _, row in df[df["op"] == "BRA"].iterrows():
        target = branch_target(row["sass"])
        if target is None:
            continue
        start, end = target - base, int(row["offset"])
        if start >= end or start not in offsets:
            continue
        inside = df[(df["offset"] >= start) & (df["offset"] <= end)]
        passes = float(row["executed"])
        found.append({
            "start": start, "end": end, "instructions": len(inside), "passes": passes,
            "inst_per_pass": inside["executed"].sum() / passes if passes else float("nan"),
            "samples": inside["samples"].sum(),
            "share_pct": 100.0 * inside["samples"].sum() / total if total else 0.0,
            **_top_reasons(inside[cols].sum(), total, reasons),
        })
    spans = [(loop["start"], loop["end"]) for loop in found]
    for loop in found:
        s, e = loop["start"], loop["end"]
        loop["depth"] = sum(1 for s2, e2 in spans if s2 <= s and e2 >= e and (s2, e2) != (s, e))
    columns = LOOP_COLUMNS + [c for i in range(reasons) for c in (f"reason{i + 1}", f"reason{i + 1}_pct")]
    table = pd.DataFrame(found, columns=columns)
    return table.sort_values(["start", "end"], ascending=[True, False], kind="stable").reset_index(drop=True)


PHASES = ("waits and issue", "QK wait", "to the exponentials", "exponentials", "after the exponentials")


def softmax_phases(df: pd.DataFrame, reasons: int = 3) -> pd.DataFrame:
    """Where an attention consumer's tile loop spends its warps' samples, by phase: the
    innermost loop around the first ``WARPGROUP.DEPBAR.LE gsb0, 0x1`` (the wait for S = Q K^T
    with O += P V still running), cut at that wait, at the first ``MUFU`` after it and at the
    last ``MUFU`` before the first forward branch after it (the masked path's entry; the loop's
    end when there is none). One row per phase of ``PHASES``: its ``instructions``, its
    ``share_pct`` of the loop's samples and its largest stall reasons in percent of the loop's
    samples; ``attrs["loop_share_pct"]`` is the loop's share of the kernel's samples and
    ``attrs["exp2s"]`` the ``MUFU`` instructions of the exponentials phase.
    """
    wait = df[df["sass"].str.contains("DEPBAR.LE gsb0, 0x1", regex=False)]
    if wait.empty:
        raise SourceCsvError(f"{df.attrs.get('path', 'the export')}: no WARPGROUP.DEPBAR.LE gsb0, 0x1 "
                             "(not a wgmma consumer loop with two GEMM groups)")
    d = int(wait["offset"].iloc[0])
    regions = loops(df)
    around = regions[(regions["start"] <= d) & (regions["end"] >= d)]
    if around.empty:
        raise SourceCsvError(f"{df.attrs.get('path', 'the export')}: the QK wait at {d:#x} is in no loop")
    loop = around.assign(size=around["end"] - around["start"]).sort_values("size").iloc[0]
    start, end = int(loop["start"]), int(loop["end"])
    body = df[(df["offset"] >= start) & (df["offset"] <= end)]
    base = int(df.attrs["base"])
    after = body[body["offset"] > d]
    masked = end + 1
    for off, sass in zip(after["offset"], after["sass"]):
        target = branch_target(sass)
        if target is not None and target - base > off:
            masked = target - base
            break
    mufu = after[(after["op"] == "MUFU") & (after["offset"] < masked)]
    if mufu.empty:
        raise SourceCsvError(f"{df.attrs.get('path', 'the export')}: no MUFU between the QK wait and {masked:#x}")
    first, last = int(mufu["offset"].min()), int(mufu["offset"].max())
    cuts = [(start, d - 1), (d, d), (d + 1, first - 1), (first, last), (last + 1, end)]
    total = body["samples"].sum()
    names = _reasons(df)
    rows = []
    for name, (lo, hi) in zip(PHASES, cuts):
        part = body[(body["offset"] >= lo) & (body["offset"] <= hi)]
        rows.append({"phase": name, "instructions": len(part),
                     "share_pct": 100.0 * part["samples"].sum() / total if total else 0.0,
                     **_top_reasons(part[names].sum(), total, reasons)})
    out = pd.DataFrame(rows)
    out.attrs.update(loop_share_pct=100.0 * total / df["samples"].sum() if df["samples"].sum() else 0.0,
                     exp2s=len(mufu), loop=(start, end))
    return out


def summary(df: pd.DataFrame, top: int = 10) -> pd.DataFrame:
    """The ``top`` instructions with the most samples, most first: ``offset`` (hex), ``sass``
    (spaces collapsed), ``samples``, ``share_pct``, ``executed``, and its two largest stall
    reasons (``reason1``, ``reason1_pct``, ``reason2``, ``reason2_pct``)."""
    total = df["samples"].sum()
    cols = _reasons(df)
    rows = []
    for _, r in df.sort_values("samples", ascending=False, kind="stable").head(top).iterrows():
        rows.append({
            "offset": f"0x{int(r['offset']):x}", "sass": " ".join(r["sass"].split()),
            "samples": r["samples"], "share_pct": 100.0 * r["samples"] / total if total else 0.0,
            "executed": r["executed"], **_top_reasons(r[cols].astype(float), total, 2),
        })
    return pd.DataFrame(rows, columns=["offset", "sass", "samples", "share_pct", "executed",
                                       "reason1", "reason1_pct", "reason2", "reason2_pct"])


def _reasons_cell(row: pd.Series, n: int, digits: int = 1) -> str:
    return ", ".join(f"{row[f'reason{i}']} {row[f'reason{i}_pct']:.{digits}f}"
                     for i in range(1, n + 1) if row[f"reason{i}"])


def _markdown(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def report(df: pd.DataFrame, top: int = 10) -> str:
    """The CLI's text: kernel, totals, stall reasons, loops, top instructions."""
    total = df["samples"].sum()
    out = [f"kernel: {df.attrs.get('kernel', '')}",
           f"samples: {total:,.0f} (not issued {df['not_issued'].sum():,.0f}); instructions executed: "
           f"{df['executed'].sum():,.0f} (warp-level); {len(df)} SASS instructions",
           "", "Stall reasons (% of samples):", "",
           _markdown(["reason", "%"], [[k, f"{v:.1f}"] for k, v in stall_totals(df).items()])]
    lp = loops(df)
    rows = []
    for _, r in lp.iterrows():
        per_pass = f"{r['inst_per_pass']:.1f}" if r["passes"] else "-"
        rows.append([f"0x{r['start']:x}", f"0x{r['end']:x}", str(r["instructions"]), f"{r['passes']:,.0f}",
                     per_pass, str(r["depth"]), f"{r['share_pct']:.1f}", _reasons_cell(r, 3)])
    out += ["", f"Loops (backward branches; % of samples): {len(lp)}", "",
            _markdown(["start", "end", "instructions", "passes", "inst/pass", "depth", "samples %",
                       "top stall reasons (%)"], rows)]
    rows = [[r["offset"], r["sass"], f"{r['share_pct']:.2f}", f"{r['executed']:,.0f}",
             _reasons_cell(r, 2, digits=2)] for _, r in summary(df, top).iterrows()]
    out += ["", f"Top {top} instructions by samples:", "",
            _markdown(["offset", "SASS", "samples %", "executed", "top stall reasons (%)"], rows)]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m schedlab_analysis.ncu_source",
                                description=__doc__.split("\n")[0])
    p.add_argument("file", help="sass-stalls-*.csv or .csv.gz")
    p.add_argument("--top", type=int, default=10, help="instructions in the top table (default 10)")
    args = p.parse_args(argv)
    print(report(read_source_csv(args.file), args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
