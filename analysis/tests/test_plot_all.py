import re
from pathlib import Path

import pytest

import synth
from schedlab_analysis import plot_all, plots
from schedlab_analysis.dataset import Dataset


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return synth.full_tree(tmp_path_factory.mktemp("plot") / "results")


@pytest.fixture(scope="module")
def plotted(tree, tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    import io
    from contextlib import redirect_stdout
    buf = io.StringIO()
    with redirect_stdout(buf):
        rc = plot_all.main([str(tree), "--out", str(out)])
    return rc, out, buf.getvalue()


def test_writes_figures_and_index(plotted):
    rc, out, stdout = plotted
    assert rc == 0
    pngs = {p.relative_to(out).as_posix() for p in out.rglob("*.png")}
    for name in ("bars", "speedup", "scaling", "roofline"):
        assert f"h200/decode_kv_streaming/{name}.png" in pngs
        assert f"h200/prefill_kv_tiles/{name}.png" in pngs
    assert "h200/prefill_kv_tiles/stalls.png" in pngs          # stall + probe files exist there
    assert "h200/decode_kv_streaming/stalls.png" not in pngs   # none for decode
    assert all((out / p).stat().st_size > 5_000 for p in pngs)
    index = (out / "index.md").read_text()
    linked = set(re.findall(r"\]\(([^)]+\.png)\)", index))
    assert linked == pngs


def test_one_progress_line_per_experiment(plotted):
    _, _, stdout = plotted
    lines = [line for line in stdout.splitlines() if line.startswith("plot_all: h200/")]
    assert len(lines) == 4
    assert any("decode_kv_streaming" in line and "2 runs without a time" in line for line in lines)


def test_failed_runs_are_listed_not_plotted(plotted, tree):
    _, out, _ = plotted
    index = (out / "index.md").read_text()
    assert "| failed | streaming | batch=16 context=16384 | accuracy gate failed" in index
    assert "| skipped | resident | batch=1 context=4096 | skipped: invalid problem" in index
    view = Dataset.load(tree).view("h200", "decode_kv_streaming")
    rows = plots.plotted_rows(view)
    assert (rows["status"] == "ok").all()
    assert not ((rows["variant"] == "streaming") & (rows["config"] == "batch=16 context=16384")).any()
    assert len(plots.failure_lines(view)) == 2


def test_series_come_from_the_data(tree):
    view = Dataset.load(tree).view("h200", "prefill_kv_tiles")
    assert plots.series_order(view) == ["union", "separate", "peer: sdpa_cudnn", "peer: sdpa_flash"]
    assert view.ceilings.copy_gbps == 4250.0 and view.ceilings.matmul_tflops is None
    fig = plots.roofline_figure(view)
    title = fig.axes[0].get_title()
    assert "copy bandwidth" in title and "matrix peak (no ctx matmul_tflops)" in title
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    assert {"union", "separate", "peer: sdpa_cudnn", "peer: sdpa_flash"} <= {l.split(" [")[0] for l in labels}
    assert not any("matrix peak" in l for l in labels)


def test_matrix_peak_is_drawn_when_the_context_has_it(tmp_path):
    synth.experiment_run(tmp_path, "prefill_kv_tiles", "prefill", "union", {"union": 1.0, "separate": 0.9},
                         synth.PREFILL_CONFIGS, context={"matmul_tflops": "686.0"})
    view = Dataset.load(tmp_path).view("h200", "prefill_kv_tiles")
    fig = plots.roofline_figure(view)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "measured matrix peak 686 TFLOP/s" in labels
    assert "not drawn" not in fig.axes[0].get_title()


def test_empty_directory_is_a_clear_error(tmp_path, capsys):
    assert plot_all.main([str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "no benchmark results" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_malformed_file_is_named(tmp_path, capsys):
    (tmp_path / "h200" / "x").mkdir(parents=True)
    (tmp_path / "h200" / "x" / "bad.json").write_text("{nope")
    assert plot_all.main([str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "bad.json" in capsys.readouterr().err


def test_default_output_is_under_analysis_not_tmp():
    assert plot_all.DEFAULT_OUT == Path(plot_all.__file__).resolve().parents[1] / "out"


def test_family_summary_figures(plotted):
    rc, out, stdout = plotted
    assert (out / "h200" / "summary_decode.png").stat().st_size > 5_000
    assert (out / "h200" / "summary_prefill.png").stat().st_size > 5_000
    assert "decode summary figure" in stdout


def test_summary_shows_the_best_variant_of_each_experiment_and_the_peers(tree):
    fig = plots.family_summary_figure(Dataset.load(tree), "h200", "decode")
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    # streaming takes 0.9x the resident time in the synthetic tree: the best of its experiment.
    assert labels == {"decode_kv_streaming: streaming", "peer: sdpa_cudnn", "peer: sdpa_flash"}


def test_wide_bar_charts_are_split_into_rows():
    configs = [f"c{i}" for i in range(25)]
    rows = plots.config_rows(configs, 5)
    assert sum(len(r) for r in rows) == 25 and [c for r in rows for c in r] == configs
    assert all(len(r) * 5 <= plots.bars._BARS_PER_ROW for r in rows) and len(rows) == 4
    assert plots.config_rows(configs[:4], 2) == [configs[:4]]


def test_scaling_leaves_out_configurations_off_its_axis(tmp_path):
    # A ragged batch (lengths, no seq) beside a sweep over seq: the scaling figure draws the
    # sweep and leaves the batch out (log axes cannot place it), the bars keep it.
    label = "family=prefill;experiment=prefill_x;variant=base;baseline=base;dtype=bf16;peer=0"
    records = []
    for shape, t in (("bf16/seq:512/head_dim:128/causal:0", 10.0), ("bf16/seq:8192/head_dim:128/causal:0", 900.0),
                     ("bf16/lengths:3x100+1x900/head_dim:128/causal:1", 50.0)):
        records += synth.benchmark_records(f"prefill_x/base/{shape}", label, [t, t * 1.01, t * 0.99],
                                           {"FLOP_per_s": 1e14, "bytes_per_s": 1e11})
    synth.write_results_file(tmp_path / "h200" / "prefill_x" / "20261126T000000Z-0123456789.json",
                             synth.DEVICE_CONTEXT, records)
    view = Dataset.load(tmp_path).view("h200", "prefill_x")
    assert plots.scaling_axis(view) == "seq"
    figures = plots.experiment_figures(view)
    for name in ("scaling", "bars"):
        plots.save(figures[name], tmp_path / f"{name}.png")
        assert (tmp_path / f"{name}.png").stat().st_size > 5_000
