"""The README table of an experiment comes from its results: one row per configuration,
the variant's change against the baseline, the results file named."""
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
