"""Small helpers for notebooks/*.ipynb: where the results are, showing a figure as a PNG
(works with any matplotlib backend, also headless), and the claims of one family."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from . import published
from .dataset import Dataset

RESULTS_ENV = "SCHEDLAB_RESULTS_DIR"  # overrides <repo>/results (the tests point it elsewhere)


def repo_root() -> Path:
    return Path(__file__).resolve().parents[2]


def results_dir() -> Path:
    return Path(os.environ.get(RESULTS_ENV) or repo_root() / "results")


def load(family: str) -> tuple[Dataset, list[tuple[str, str]]]:
    """The dataset and the (device, experiment) pairs of ``family``, peers last. Prints what
    was found, or that there is nothing yet."""
    where = results_dir()
    data = Dataset.load(where)
    pairs = data.experiments(family)
    if not pairs:
        print(f"No {family} results under {where} yet: run the {family} benchmarks (see the experiment "
              f"READMEs) and commit results/<device>/<experiment>/*.json; the cells below then fill in.")
    else:
        print(f"{family} results under {where}: " + ", ".join(f"{e} ({d})" for d, e in pairs))
    return data, pairs


def show(fig) -> None:
    """Display a matplotlib Figure as a PNG image (or say there is nothing to show)."""
    from IPython.display import Image, display

    from .plots import figure_png
    if fig is None:
        print("(no figure: the data has nothing for it)")
        return
    display(Image(data=figure_png(fig)))


def family_claims(data: Dataset, experiments: list[str]) -> pd.DataFrame:
    """Verdicts of the published claims whose match names one of ``experiments``."""
    claims = [c for c in published.load_claims()
              if any(e in experiments for e in c.match.common.get("experiment", ()))]
    return published.outcome_table(published.evaluate(claims, data))
