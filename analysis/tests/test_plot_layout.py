"""Every kind of figure reads at any number of variants: drawn with Agg, no two tick labels,
titles, axis labels, legends or notes overlap, and none reaches into another panel; every
series has a colour of its own and a legend entry; no axis shows an offset; a summary line
joins one shape only. Checked on a synthetic run of two dozen variants over long-labelled
shapes and on committed runs."""
import weakref
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba_array
from matplotlib.lines import Line2D
from matplotlib.text import Text

import synth
from schedlab_analysis import plots
from schedlab_analysis.dataset import Dataset

RESULTS = Path(__file__).resolve().parents[2] / "results" / "h200"
MANY = ("decode_many_variants", "prefill_many_variants")


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    return Dataset.load(synth.many_variants_tree(tmp_path_factory.mktemp("many") / "results"))


def _newest_run(experiment: str) -> list[Path]:
    """The newest results file of a committed experiment and the stall files beside it."""
    folder = RESULTS / experiment
    runs = sorted(folder.glob("2*.json.gz")) if folder.is_dir() else []
    if not runs:
        pytest.skip(f"no committed results under {folder}")
    return [runs[-1]] + sorted(folder.glob("stalls-*.json"))


@pytest.fixture(scope="module")
def committed():
    """decode_tile_schedule (a few variants) and decode_work_partition (27 variants, 24 shapes)."""
    return Dataset.load(_newest_run("decode_tile_schedule") + _newest_run("decode_work_partition"))


_RENDERERS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _drawn(fig):
    """The Agg renderer the figure was drawn with (drawn once: the checks only read it)."""
    if fig not in _RENDERERS:
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        _RENDERERS[fig] = canvas.get_renderer()
    return _RENDERERS[fig]


def _in_view(axis, loc: float) -> bool:
    lo, hi = sorted(axis.get_view_interval())
    span = abs(hi - lo) or 1.0
    return lo - 1e-9 * span <= loc <= hi + 1e-9 * span


def text_boxes(fig, renderer) -> list[tuple[str, object, object]]:
    """(what, owning axes or None, window extent) of every piece of text drawn: tick labels in
    view, titles, axis labels, legends (each one box) and the figure's own texts."""
    boxes = []
    for ax in fig.axes:
        if not ax.axison:
            continue
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if not _in_view(axis, tick.get_loc()):
                    continue
                for label in (tick.label1, tick.label2):
                    if label.get_visible() and label.get_text():
                        boxes.append((f"tick {label.get_text()!r}", ax, label.get_window_extent(renderer)))
            if axis.label.get_text():
                boxes.append((f"axis label {axis.label.get_text()!r}", ax, axis.label.get_window_extent(renderer)))
        if ax.title.get_text():
            boxes.append((f"title {ax.title.get_text()!r}", ax, ax.title.get_window_extent(renderer)))
        if ax.get_legend() is not None:
            boxes.append(("axes legend", ax, ax.get_legend().get_window_extent(renderer)))
    for legend in fig.legends:
        boxes.append(("figure legend", None, legend.get_window_extent(renderer)))
    for child in fig.get_children():
        if isinstance(child, Text) and child.get_visible() and child.get_text():
            boxes.append((f"figure text {child.get_text()[:40]!r}", None, child.get_window_extent(renderer)))
    return boxes


def _overlap(a, b, slack: float = 0.5) -> bool:
    return (min(a.x1, b.x1) - max(a.x0, b.x0) > slack) and (min(a.y1, b.y1) - max(a.y0, b.y0) > slack)


def overlaps(fig) -> list[str]:
    """Every pair of texts that overlap, and every text inside a panel it does not belong to."""
    renderer = _drawn(fig)
    boxes = text_boxes(fig, renderer)
    found = [f"{a} / {b}" for i, (a, _, ba) in enumerate(boxes) for (b, _, bb) in boxes[i + 1:] if _overlap(ba, bb)]
    frames = [(ax, ax.get_window_extent(renderer)) for ax in fig.axes if ax.axison]
    found += [f"{what} in another panel" for what, owner, box in boxes
              for ax, frame in frames if ax is not owner and _overlap(box, frame)]
    return found


def all_figures(data: Dataset, experiments) -> dict[str, object]:
    out = {}
    for experiment in experiments:
        for name, fig in plots.experiment_figures(data.view("h200", experiment)).items():
            out[f"{experiment}/{name}"] = fig
    for family in ("decode", "prefill"):
        fig = plots.family_summary_figure(data, "h200", family)
        if fig is not None:
            out[f"summary_{family}"] = fig
    return out


@pytest.fixture(scope="module")
def many_figures(many):
    return all_figures(many, MANY)


@pytest.fixture(scope="module")
def committed_figures(committed):
    return all_figures(committed, ("decode_tile_schedule", "decode_work_partition"))


def test_every_kind_of_figure_is_drawn_for_many_variants(many_figures):
    kinds = {name.split("/")[-1] for name in many_figures}
    assert {"bars", "speedup", "scaling", "roofline", "stalls", "summary_decode", "summary_prefill"} <= kinds


def test_no_text_overlaps_with_many_variants(many_figures):
    problems = {name: overlaps(fig) for name, fig in many_figures.items()}
    assert not {name: p[:5] for name, p in problems.items() if p}


def test_no_text_overlaps_on_committed_runs(committed_figures):
    assert "decode_work_partition/speedup" in committed_figures
    problems = {name: overlaps(fig) for name, fig in committed_figures.items()}
    assert not {name: p[:5] for name, p in problems.items() if p}


def test_the_overlap_check_sees_labels_that_collide():
    from matplotlib.figure import Figure
    fig = Figure(figsize=(3, 3))
    ax_top, ax_bottom = fig.subplots(2, 1)
    ax_top.set_xticks(range(4), [f"a long configuration label {i}" for i in range(4)])
    assert any(p.startswith("tick 'a long configuration label 0' / tick") for p in overlaps(fig))
    _RENDERERS.pop(fig)
    ax_top.set_xticks(range(4), [f"{i}" + "\nline" * 12 for i in range(4)])
    assert any(p.startswith("tick '0") and "line" in p and p.endswith("in another panel") for p in overlaps(fig))


def _legend_colours(legend) -> list[tuple]:
    out = []
    for handle in legend.legend_handles:
        if isinstance(handle, Line2D):
            colour = to_rgba_array(handle.get_color())
        else:  # a bar (face), a scatter (face) or an error-bar line (edge, no face)
            colour = to_rgba_array(handle.get_facecolor())
            colour = colour if len(colour) else to_rgba_array(handle.get_edgecolor())
        out.append(tuple(np.round(colour[0], 4)))
    return out


def test_every_series_has_a_colour_of_its_own(many_figures, committed_figures):
    for name, fig in {**many_figures, **committed_figures}.items():
        for legend in fig.legends:
            colours = _legend_colours(legend)
            assert len(set(colours)) == len(colours), name


def test_the_legend_holds_every_series_of_every_panel(many_figures, committed_figures):
    for name, fig in {**many_figures, **committed_figures}.items():
        in_legend = {t.get_text() for legend in fig.legends for t in legend.get_texts()}
        for ax in fig.axes:
            if ax.get_legend() is not None and not fig.legends:
                in_legend |= {t.get_text() for t in ax.get_legend().get_texts()}
            drawn = set(ax.get_legend_handles_labels()[1])
            assert drawn <= in_legend, (name, drawn - in_legend)


def test_a_peer_absent_from_the_first_panel_is_in_the_legend(many):
    # flashinfer ran only the ragged batches, which sort into the last row of panels.
    fig = plots.bars_figure(many.view("h200", "decode_many_variants"))
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    assert "peer: flashinfer" in labels
    assert "peer: flashinfer" not in fig.axes[0].get_legend_handles_labels()[1]


def test_no_axis_has_an_offset(many_figures, committed_figures):
    for name, fig in {**many_figures, **committed_figures}.items():
        _drawn(fig)
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                assert axis.get_offset_text().get_text() == "", (name, axis.get_offset_text().get_text())


def test_a_difference_of_thousandths_does_not_fill_the_axis(many_figures):
    fig = many_figures["summary_prefill"]
    ax = next(a for a in fig.axes if "head_dim=96" in a.get_title())
    lo, hi = ax.get_ylim()
    assert (hi - lo) >= 0.1 * hi


def test_variants_within_the_band_are_counted_not_drawn(many):
    view = many.view("h200", "decode_many_variants")
    selection = plots.select_series(view)
    factors = synth.many_variant_factors(24)
    same = sorted(v for v, f in factors.items() if f == 1.0 and v != "split")
    assert selection.within_band == same
    assert selection.shown[0] == "split" and "peer: flashinfer" in selection.shown
    fig = plots.speedup_figure(view, selection)
    drawn = {t.get_text().split(" / ")[0] for t in fig.legends[0].get_texts()}
    assert drawn.isdisjoint(same) and len(drawn) == len(factors) - 1 - len(same)
    note = "\n".join(t.get_text() for t in fig.texts)
    assert f"{len(same)} of {len(factors) - 1} variants compared" in note and "token_balanced_variant_number_03" in note


def test_summary_lines_join_one_shape_each(many_figures, committed_figures):
    for name in ("summary_decode",):
        for figures in (many_figures, committed_figures):
            for ax in figures[name].axes:
                for line in ax.get_lines():
                    if not line.get_label().startswith("_"):
                        x = np.asarray(line.get_xdata(), float)
                        assert np.all(np.diff(x) > 0), (name, ax.get_title(), line.get_label())
    # batch=32 holds three shapes of the synthetic experiment's best variant: three lines.
    ax = next(a for a in many_figures["summary_decode"].axes if a.get_title() == "batch=32")
    best = [line for line in ax.get_lines() if line.get_label().startswith("decode_many_variants:")]
    assert len(best) == 3 and len({line.get_gid() for line in best}) == 3


def test_a_run_without_differences_draws_the_baseline_and_says_so(tmp_path):
    synth.experiment_run(tmp_path, "decode_same", "decode", "split", {"split": 1.0, "split_aa": 1.0, "same": 1.0},
                         synth.DECODE_CONFIGS, noise=0.002)
    view = Dataset.load(tmp_path).view("h200", "decode_same")
    selection = plots.select_series(view)
    assert selection.shown == ["split"] and selection.within_band == ["same", "split_aa"]
    fig = plots.speedup_figure(view, selection)
    assert not fig.legends and "no variant differs" in fig.axes[0].texts[0].get_text()
    assert "2 of 2 variants compared with the baseline: same, split_aa" in "\n".join(t.get_text() for t in fig.texts)
    bars = plots.bars_figure(view, selection)
    assert [t.get_text().split(" [")[0] for t in bars.legends[0].get_texts()] == ["split"]
