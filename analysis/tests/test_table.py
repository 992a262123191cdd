"""The README table of an experiment comes from its results: one row per configuration,
the variant's change against the baseline, the results file named."""
import pytest

import synth
from schedlab_analysis import table
from schedlab_analysis.dataset import Dataset


def test_table_rows_changes_and_source(tmp_path):
    root = tmp_path / "results"
    synth.experiment_run(root, "prefill_kv_tiles", "prefill", "union", {"union": 1.0, "separate": 0.8},
                         synth.PREFILL_CONFIGS, noise=0.0)
    text = table.render(Dataset.load([root]), "h200", "prefill_kv_tiles")
    lines = text.splitlines()
    assert lines[0].startswith("| configuration | union (TFLOP/s) | separate (TFLOP/s) |")
    rows = [l for l in lines if l.startswith("| ") and "configuration" not in l]
    assert len(rows) == len(synth.PREFILL_CONFIGS)
    assert all("(+25.0%, faster)" in r for r in rows)  # 1 / 0.8 of the baseline's rate
    assert "20261120T120000Z-0123456789.json" in text


def test_decode_rates_in_tb_per_s(tmp_path):
    root = tmp_path / "results"
    synth.experiment_run(root, "decode_x", "decode", "a", {"a": 1.0, "b": 1.0}, synth.DECODE_CONFIGS, noise=0.0)
    assert "a (TB/s)" in table.render(Dataset.load([root]), "h200", "decode_x")


@pytest.fixture()
def two_experiments(tmp_path):
    root = tmp_path / "results"
    synth.experiment_run(root, "decode_x", "decode", "a", {"a": 1.0, "b": 1.0}, synth.DECODE_CONFIGS, noise=0.0)
    synth.experiment_run(root, "prefill_y", "prefill", "a", {"a": 1.0, "b": 1.0}, synth.PREFILL_CONFIGS, noise=0.0)
    return root


@pytest.mark.parametrize("args, message", [
    (["nosuch"], "no results of experiment 'nosuch' on h200; its experiments: decode_x, prefill_y"),
    (["decode_x", "--device", "mi300x"], "no results on device 'mi300x' (--device); devices with results: h200"),
    (["nosuch", "--device", "mi300x"], "devices with results: h200; experiment 'nosuch' is on none"),
])
def test_unknown_experiment_or_device_exits_2_naming_what_there_is(two_experiments, capsys, args, message):
    assert table.main([str(two_experiments), *args]) == 2
    out = capsys.readouterr()
    assert out.out == "" and message in out.err


def test_missing_or_empty_results_exit_2(tmp_path, capsys):
    assert table.main([str(tmp_path / "nowhere"), "decode_x"]) == 2
    assert f"no such results file or folder: {tmp_path / 'nowhere'}" in capsys.readouterr().err
    assert table.main([str(tmp_path), "decode_x"]) == 2
    assert f"no benchmark results under {tmp_path}" in capsys.readouterr().err


def test_known_experiment_prints_its_table(two_experiments, capsys):
    assert table.main([str(two_experiments), "prefill_y"]) == 0
    assert capsys.readouterr().out.startswith("| configuration | a (TFLOP/s) | b (TFLOP/s) |")
