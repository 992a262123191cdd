"""Execute the notebooks headless (nbclient) with no results and with a synthetic results tree."""
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import synth
from schedlab_analysis.notebook import RESULTS_ENV

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def run_notebook(name: str) -> nbformat.NotebookNode:
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    NotebookClient(nb, timeout=180, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return nb


def outputs(nb) -> tuple[str, int]:
    text, images = [], 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.output_type != "error", out
            if out.output_type == "stream":
                text.append(out.text)
            elif "image/png" in out.get("data", {}):
                images += 1
    return "".join(text), images


@pytest.fixture(scope="module")
def synthetic_results(tmp_path_factory):
    return synth.full_tree(tmp_path_factory.mktemp("nb") / "results")


@pytest.mark.parametrize("family", ["decode", "prefill"])
def test_notebook_runs_without_results(family, tmp_path, monkeypatch):
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path / "empty"))
    text, images = outputs(run_notebook(family))
    assert f"No {family} results under" in text
    assert images == 0


@pytest.mark.parametrize("family, experiment", [("decode", "decode_kv_streaming"), ("prefill", "prefill_kv_tiles")])
def test_notebook_runs_with_results(family, experiment, synthetic_results, monkeypatch):
    monkeypatch.setenv(RESULTS_ENV, str(synthetic_results))
    text, images = outputs(run_notebook(family))
    assert f"{experiment} (h200)" in text
    assert " vs " in text and "95% CI" in text
    assert images >= 5
