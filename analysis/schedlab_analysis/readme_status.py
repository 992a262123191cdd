"""The top README's "Where things stand" table (the ``status`` kind of ``schedlab_analysis.readme``).

One row per figure, each from one run: the newest run among the cited files that measured it
(by the run's stamp), named in the row. No figure appears twice and older runs are not listed
(their history is in the experiments' logs). A section must cite only the files its rows use,
so that the marker says what the table rests on; ``newest_files`` finds them under results/.

What each figure measures is fixed here (``FIGURES``); every number comes from the files. A row
against a peer sets ours beside that peer timed in the same run (same device call), at each
dtype both have, taking the best of the peer's paths at each configuration and naming it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd

from . import load, stats
from .dataset import ExperimentView
from .readme import REPO, ReadmeError, _dataset, _hvn_rows, match_shape
from .table import display_path, fmt_rate, run_label

# What each peer is, by its variant names (results/<device>/peers_*): a peer with several paths
# (FlashInfer's tensor-core and CUDA-core decode) lists each.
PEER_LABELS = {
    "flashinfer_tc": "FlashInfer (paged KV)",
    "flashinfer_cuda_core": "FlashInfer (paged KV)",
    "sdpa_cudnn": "SDPA cuDNN (contiguous KV)",
    "sdpa_flash": "SDPA flash (contiguous KV)",
    "fa4": "FlashAttention-4",
    "cudnn_paged": "cuDNN paged decode",
}
FLASHINFER, CUDNN, FA4, CUDNN_PAGED = ("FlashInfer (paged KV)", "SDPA cuDNN (contiguous KV)", "FlashAttention-4",
                                       "cuDNN paged decode")

DECODE_HEADLINE = "batch=16 context=16384 page=16"
DECODE_LONG = "batch=1 context=65536 page=16"
DECODE_PAGE1 = "batch=16 context=16384 page=1"
PREFILL_HEADLINE = "seq=8192 head_dim=128"
# The decode variant whose serving figures the table states: the token-balanced plan with the
# row-list combine and slots filled where the even cut runs in waves.
SERVING_VARIANT = "token_balanced_filled"
# The Hopper prefill family's default policy, as prefill_pingpong registers it.
HOPPER_DEFAULT = "pingpong"
GATE = "the gate (`accuracy_rule` of the run's context)"


@dataclass(frozen=True)
class Row:
    family: str
    figure: str
    measured: str
    run: str
    target: str
    files: frozenset[Path]   # the cited files the row rests on (resolved)

    def markdown(self) -> str:
        return f"| {self.family} | {self.figure} | {self.measured} | `{self.run}` | {self.target} |"


# A measure reads one run of the figure's source and gives (what was measured, the peer files it
# used), or None when that run did not measure the figure.
Measure = Callable[[ExperimentView], "tuple[str, set[str]] | None"]


@dataclass(frozen=True)
class Figure:
    family: str
    name: str
    source: str                 # an experiment, "gpu_tests:<suite>" or "harness_vs_ncu"
    target: str
    measure: Measure | None = None


# ------------------------------------------------------------------------------ measures

def _match(ok: pd.DataFrame, shape: str) -> pd.DataFrame:
    """match_shape, with ``seq`` read as ``seq_len`` in runs that named the axis so."""
    if "seq=" in shape and "seq" not in ok and "seq_len" in ok:
        shape = shape.replace("seq=", "seq_len=")
    return match_shape(ok, shape)


def _rate(view: ExperimentView) -> tuple[str, str, float, bool]:
    decode = view.family == "decode"
    return ("gbps", "TB/s", 1e3, True) if decode else ("tflops", "TFLOP/s", 1.0, False)


def _ours(view: ExperimentView, shape: str, variant: str | None = None) -> pd.DataFrame:
    ok = view.ok[~view.ok["variant"].map(stats.is_control)]
    if variant is not None:
        ok = ok[ok["variant"] == variant]
    return _match(ok, shape)


def _best(view: ExperimentView, shape: str, variant: str | None = None) -> pd.Series | None:
    rows = _ours(view, shape, variant)
    column = _rate(view)[0]
    return None if rows.empty else rows.loc[rows[column].idxmax()]


def _same_run_peers(view: ExperimentView, label: str) -> pd.DataFrame:
    p = view.peers
    if p.empty:
        return p
    return p[(p["run"] == view.run) & p["variant"].map(lambda v: PEER_LABELS.get(v) == label)]


def _files(frame: pd.DataFrame) -> set[str]:
    return {str(f) for f in frame["source_file"]}


def best_variant(shape: str) -> Measure:
    def measure(view):
        best = _best(view, f"{shape} bf16")
        if best is None:
            return None
        column, unit, scale, decode = _rate(view)
        copy = view.ceilings.copy_gbps
        text = f"{fmt_rate(best[column] / scale, decode)} {unit} (`{best['variant']}`)"
        if copy and decode:
            text += f"; copy bandwidth in the same run {copy / 1e3:.3g} TB/s"
        return text, set()
    return measure


def fp8_over_bf16_time(shape: str) -> Measure:
    def measure(view):
        best = _best(view, f"{shape} bf16")
        fp8 = _ours(view, f"{shape} fp8_e4m3", best["variant"]) if best is not None else ()
        if not len(fp8):
            return None
        return f"{float(fp8['time_us'].iloc[0]) / float(best['time_us']):.3f} (`{best['variant']}`)", set()
    return measure


def fp8_over_bf16_rate(shape: str, variant: str) -> Measure:
    def measure(view):
        fp8, bf16 = _best(view, f"{shape} fp8_e4m3", variant), _best(view, f"{shape} bf16", variant)
        if fp8 is None or bf16 is None:
            return None
        return (f"{fp8['tflops']:.0f} against {bf16['tflops']:.0f} TFLOP/s = {fp8['tflops'] / bf16['tflops']:.2f}x "
                f"(`{variant}`)"), set()
    return measure


def against(label: str, shapes: dict[str, str], variant: str | None = None) -> Measure:
    """Ours (the best variant of the run, or ``variant``) over the peer ``label`` in the same run,
    rate / rate, per named shape and dtype; the peer's best path at each configuration."""
    def measure(view):
        peers = _same_run_peers(view, label)
        if peers.empty:
            return None
        column, unit, scale, decode = _rate(view)
        parts, used = [], set()
        for name, shape in shapes.items():
            cells = []
            for dtype in sorted(set(_ours(view, shape, variant)["dtype"])):
                ours = _best(view, f"{shape} {dtype}", variant)
                theirs = peers[peers["config"] == ours["config"]]
                if theirs.empty:
                    continue
                path = theirs.loc[theirs[column].idxmax()]
                used |= _files(theirs)
                cells.append(f"{dtype} {ours[column] / path[column]:.2f}x (`{ours['variant']}` "
                             f"{fmt_rate(ours[column] / scale, decode)} against `{path['variant']}` "
                             f"{fmt_rate(path[column] / scale, decode)} {unit})")
            if cells:
                parts.append((f"{name}: " if name else "") + ", ".join(cells))
        return ("; ".join(parts), used) if parts else None
    return measure


def ragged_share(view):
    from . import ragged

    batches = ragged.ragged_shares(view, SERVING_VARIANT)
    if batches.empty:
        return None
    kinds = ", ".join(sorted(batches["dtype"].unique()))
    return (f"{batches['share'].min():.2f} to {batches['share'].max():.2f} over {len(batches)} batches ({kinds}) "
            f"(`{SERVING_VARIANT}`)"), set()


# A ragged batch on which the peer's fastest path runs below this share of its own rate on the
# batch's uniform twin is stated apart from the range: there the peer is off its usual rate,
# and the ratio says more about that than about our kernel.
PEER_OFF_RATE = 0.5


def _brief(config: str) -> str:
    """A ragged batch's label without the batch and context its lengths imply."""
    return " ".join(t for t in config.split() if not t.startswith(("batch=", "context=")))


def ragged_against(label: str) -> Measure:
    """The peer's time over ours on each ragged batch (>1: ours takes less), per dtype, with the
    faster of the peer's paths on each batch; batches where the peer runs below PEER_OFF_RATE of
    its own rate on the twin are listed apart."""
    def measure(view):
        from . import ragged

        peers = _same_run_peers(view, label)
        if peers.empty:
            return None
        batches = ragged.ragged_shares(replace(view, peers=peers), SERVING_VARIANT).dropna(subset=["vs_peer"])
        if batches.empty:
            return None
        off = batches["peer_gbps"] < PEER_OFF_RATE * batches["peer_twin_gbps"]
        apart, batches = batches[off], batches[~off]
        cells = []
        for dtype, g in batches.groupby("dtype"):
            paths = ", ".join(f"`{p}` at {n}" for p, n in g["peer"].value_counts().sort_index().items())
            cells.append(f"{dtype} {g['vs_peer'].min():.2f}x to {g['vs_peer'].max():.2f}x over {len(g)} batches "
                         f"(faster path: {paths})")
        below = batches[batches["vs_peer"] < 1.0]
        note = ("; below 1.0x: " + ", ".join(f"{_brief(c)} {x:.2f}x" for c, x in zip(below["config"], below["vs_peer"]))
                if len(below) else "")
        if len(apart):
            note += (f"; apart (the peer below {PEER_OFF_RATE:g} of its own rate on the twin): "
                     + ", ".join(f"{_brief(c)} ({r['peer_gbps'] / r['peer_twin_gbps']:.2f} of it) {r['vs_peer']:.2f}x"
                                 for c, (_, r) in zip(apart["config"], apart.iterrows())))
        return "; ".join(cells) + note + f" (`{SERVING_VARIANT}`)", _files(peers)
    return measure


def mqa_share(view):
    from . import ragged

    groups = ragged.group_shares(view, SERVING_VARIANT)
    mqa = groups[groups["group"] == 64] if len(groups) else groups
    if mqa.empty:
        return None
    cells = ", ".join(f"{d} {x:.2f}" for d, x in sorted(zip(mqa["dtype"], mqa["share"])))
    return f"{cells} (`{SERVING_VARIANT}`)", set()


def accuracy(view):
    ok = view.ok
    if ok.empty:
        return None
    failed = int((view.summary["status"] == "failed").sum())
    worst = ", ".join(f"{g['rel_l2_err'].max():.1e} ({d})" for d, g in ok.groupby("dtype"))
    return f"{len(ok)} records timed, {failed} failed the gate; largest relative L2 error {worst}", set()


# ------------------------------------------------------------------------------ the figures

_PREFILL_BOTH = {"non-causal": f"{PREFILL_HEADLINE} causal=0", "causal": f"{PREFILL_HEADLINE} causal=1"}
_DECODE_PEER = "best variant of `decode_tile_schedule` over {} in the same run, " + DECODE_HEADLINE
_PREFILL_PEER = "best variant of `prefill_tuning` over {} in the same run, D=128, seq 8192"

FIGURES: list[Figure] = [
    Figure("decode", f"best variant of `decode_tile_schedule`, bf16, {DECODE_HEADLINE}", "decode_tile_schedule",
           "4.3 TB/s", best_variant(DECODE_HEADLINE)),
    Figure("decode", f"fp8 e4m3 time over bf16 time, that variant, {DECODE_HEADLINE}", "decode_tile_schedule",
           "<= 0.55", fp8_over_bf16_time(DECODE_HEADLINE)),
    Figure("decode", f"best variant of `decode_tile_schedule`, bf16, {DECODE_LONG}", "decode_tile_schedule",
           "3.5 TB/s", best_variant(DECODE_LONG)),
    Figure("decode", _DECODE_PEER.format(FLASHINFER), "decode_tile_schedule", "-",
           against(FLASHINFER, {"": DECODE_HEADLINE})),
    Figure("decode (serving)", "each ragged batch's bandwidth over its uniform twin's (same bytes, same run)",
           "decode_work_partition", ">= 0.85", ragged_share),
    Figure("decode (serving)", f"{FLASHINFER}'s time over ours on the same ragged batch, same run",
           "decode_work_partition", ">= 1.0x", ragged_against(FLASHINFER)),
    Figure("decode (serving)", f"ours (`{SERVING_VARIANT}`) over {CUDNN_PAGED} in the same run, {DECODE_HEADLINE}",
           "decode_work_partition", "1.0x", against(CUDNN_PAGED, {"": DECODE_HEADLINE}, SERVING_VARIANT)),
    Figure("decode (serving)", f"{CUDNN_PAGED}'s time over ours on the same ragged batch, same run",
           "decode_work_partition", ">= 1.0x", ragged_against(CUDNN_PAGED)),
    Figure("decode (serving)", "MQA 64/1 bandwidth over the GQA 32/8 batch of the same KV bytes, same run",
           "decode_work_partition", ">= 0.80", mqa_share),
    Figure("decode (serving)", f"one key a page: ours (`{SERVING_VARIANT}`) over {FLASHINFER} in the same run, "
           f"{DECODE_PAGE1}", "decode_work_partition", "1.0x", against(FLASHINFER, {"": DECODE_PAGE1}, SERVING_VARIANT)),
    Figure("decode", "accuracy, every variant and shape of a `decode_work_partition` run", "decode_work_partition",
           GATE, accuracy),
    Figure("decode", "GPU tests (`schedlab_gpu_tests_decode`)", "gpu_tests:decode", "all pass"),
    *(Figure("prefill", f"best variant of `prefill_tuning`, bf16, D=128, seq 8192, {name}", "prefill_tuning",
             target, best_variant(shape))
      for (name, shape), target in zip(_PREFILL_BOTH.items(), ("360 TFLOP/s", "320 TFLOP/s"))),
    Figure("prefill", _PREFILL_PEER.format(CUDNN), "prefill_tuning", "-", against(CUDNN, _PREFILL_BOTH)),
    Figure("prefill", "accuracy, every variant and shape of a `prefill_tuning` run", "prefill_tuning", GATE, accuracy),
    Figure("prefill", "GPU tests (`schedlab_gpu_tests_prefill`)", "gpu_tests:prefill", "all pass"),
    *(Figure("prefill (Hopper)", f"the family default (`{HOPPER_DEFAULT}`) over {CUDNN} in the same run, D={dim}, "
             f"seq 8192, {'causal' if causal else 'non-causal'}", "prefill_pingpong", target,
             against(CUDNN, {"": f"seq=8192 head_dim={dim} causal={causal}"}, HOPPER_DEFAULT))
      for dim, causal, target in ((128, 0, "1.0x"), (128, 1, "1.0x"), (64, 0, "0.95x"))),
    Figure("prefill (Hopper)", f"the family default (`{HOPPER_DEFAULT}`) over {FA4} in the same run, D=128, seq 8192",
           "prefill_pingpong", "-", against(FA4, _PREFILL_BOTH, HOPPER_DEFAULT)),
    Figure("prefill (Hopper)", "fp8 e4m3 over bf16, the family default, D=128, seq 8192, non-causal, same run",
           "prefill_pingpong", "1.4x", fp8_over_bf16_rate(_PREFILL_BOTH["non-causal"], HOPPER_DEFAULT)),
    Figure("prefill (Hopper)", "accuracy, every variant and shape of a `prefill_pingpong` run", "prefill_pingpong",
           GATE, accuracy),
    Figure("prefill (Hopper)", "GPU tests (`schedlab_gpu_tests_hopper_prefill`)", "gpu_tests:hopper_prefill",
           "all pass"),
    Figure("harness", "median time against Nsight Compute's kernel time, profile and harness from the same run "
           "and binary", "harness_vs_ncu", "3%"),
]


# ------------------------------------------------------------------------------ choosing runs

_STAMP = re.compile(r"(\d{8}T\d{6}Z)")


def _stamp(path: Path) -> str:
    m = _STAMP.match(path.name)
    return m.group(1) if m else ""


def _gpu_suite(source: str, path: Path) -> bool:
    return path.name.endswith(f"-{source.split(':', 1)[1]}.xml")


def _gpu_tests_row(fig: Figure, files: list[Path]) -> Row | None:
    import xml.etree.ElementTree as ET

    for f in sorted((p for p in files if _gpu_suite(fig.source, p)), key=_stamp, reverse=True):
        root = ET.parse(f).getroot()
        tests = int(root.get("tests", 0))
        bad = int(root.get("failures", 0)) + int(root.get("errors", 0))
        # A skipped test (GTEST_SKIP: a policy that refuses the dtype) did not pass; gtest counts
        # skips per suite only.
        skipped = sum(int(s.get("skipped", 0)) for s in root.iter("testsuite"))
        measured = f"{tests - bad - skipped} of {tests} passed" + (f", {skipped} skipped" if skipped else "")
        return Row(fig.family, fig.name, measured, _stamp(f), fig.target, frozenset({f}))
    return None


def _harness_row(fig: Figure, files: list[Path]) -> Row | None:
    for f in sorted((p for p in files if p.parent.name == "harness_vs_ncu"), key=_stamp, reverse=True):
        rows, _ = _hvn_rows([str(f)])
        if len(rows):
            agree = int(rows["agrees"].sum())
            return Row(fig.family, fig.name, f"{agree} of {len(rows)} rows within 3%", _stamp(f), fig.target,
                       frozenset({f}))
    return None


_VIEWS: dict[tuple, ExperimentView] = {}


def _experiment_row(fig: Figure, files: list[Path]) -> Row | None:
    ds = _dataset(tuple(str(f) for f in files))
    pairs = [(d, e) for d, e in ds.experiments() if e == fig.source]
    if not pairs:
        return None
    runs = ds.runs(*pairs[0]).sort_values(["run_time", "run"], ascending=False)
    for run, own_files in zip(runs["run"], runs["files"]):
        key = (tuple(files), *pairs[0], run)
        if key not in _VIEWS:
            _VIEWS[key] = ds.view(*pairs[0], run)
        measured = fig.measure(_VIEWS[key])
        if measured is not None:
            text, peer_files = measured
            used = frozenset(Path(f).resolve() for f in (*own_files, *peer_files))
            return Row(fig.family, fig.name, text, run_label(run), fig.target, used)
    return None


def figure_row(fig: Figure, files: Iterable[Path | str]) -> Row | None:
    """The figure from the newest run among ``files`` that measured it (None: none did)."""
    files = sorted({(REPO / f).resolve() for f in files})
    if fig.source.startswith("gpu_tests:"):
        return _gpu_tests_row(fig, files)
    if fig.source == "harness_vs_ncu":
        return _harness_row(fig, files)
    return _experiment_row(fig, [f for f in files if load.is_results_name(f.name)])


def rows(files: Iterable[Path | str], figures: list[Figure] = FIGURES) -> list[Row]:
    files = list(files)
    return [r for r in (figure_row(fig, files) for fig in figures) if r is not None]


def render_status(args: list[str], files: list[str]) -> str:
    """The status table from the cited files; every cited file must be used by a row."""
    if args:
        raise ReadmeError("status takes no arguments, only its files")
    table = rows(files)
    used = set().union(*(r.files for r in table)) if table else set()
    unused = [f for f in files if (REPO / f).resolve() not in used]
    if unused:
        raise ReadmeError("status: no row uses " + ", ".join(unused) + " (a newer run of its figures is cited, "
                          "or it measures none of them); cite only the files the rows use")
    lines = ["| family | figure | measured | run | target |", "|---|---|---|---|---|"]
    return "\n".join(lines + [r.markdown() for r in table])


# ------------------------------------------------------------------------------ the newest files

def _runs_of(folder: Path) -> list[list[Path]]:
    """The results files of ``folder``, one list per file, newest first."""
    files = [p for p in folder.glob("*.json*") if load.is_results_name(p.name) and _stamp(p)]
    return [[p] for p in sorted(files, key=lambda p: (_stamp(p), p.name), reverse=True)]


def newest_files(root: Path = REPO / "results" / "h200") -> list[str]:
    """The files a status section should cite: for each figure, the newest run under ``root``
    that measured it (with the peer files of the same run), as READMEs cite them, sorted."""
    peer_runs: dict[str, list[Path]] = {}
    for folder in sorted(root.glob("peers_*")):
        for (f,) in _runs_of(folder):
            peer_runs.setdefault(load.run_of(f, load.read_json(f).get("context", {})), []).append(f)
    chosen: set[Path] = set()
    for fig in FIGURES:
        if fig.source.startswith("gpu_tests:") or fig.source == "harness_vs_ncu":
            folder = root / ("gpu_tests" if fig.source.startswith("gpu_tests:") else "harness_vs_ncu")
            row = figure_row(fig, sorted(folder.glob("*")))
            chosen |= row.files if row else set()
            continue
        for (f,) in _runs_of(root / fig.source):
            run = load.run_of(f, load.read_json(f).get("context", {}))
            row = figure_row(fig, [f, *peer_runs.get(run, [])])
            if row is not None:
                chosen |= row.files
                break
    return sorted(display_path(p) for p in chosen)


if __name__ == "__main__":
    print(" ".join(newest_files()))
