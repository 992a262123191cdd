"""schedlab_analysis.ragged on the committed decode results: every ragged batch of the
work-partition experiment finds its uniform twin (same KV dtype and page, nearest total keys),
the share is the bandwidth ratio, and the peer ratio compares times on the same batch."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from schedlab_analysis import notebook, ragged


def test_total_keys_of_lists_repeats_and_uniform_batches():
    assert ragged._total_keys(pd.Series({"lengths": "31x1024+1x51200", "batch": 32, "context": 51200})) == 82944
    assert ragged._total_keys(pd.Series({"lengths": "1+16+256", "batch": 3, "context": 256})) == 273
    assert ragged._total_keys(pd.Series({"lengths": math.nan, "batch": 32, "context": 2592})) == 82944


@pytest.fixture(scope="module")
def view():
    data, pairs = notebook.load("decode")
    if ("h200", "decode_work_partition") not in pairs:
        pytest.skip("no committed decode_work_partition results")
    return data.view("h200", "decode_work_partition")


def test_every_ragged_batch_has_its_twin(view):
    shares = ragged.ragged_shares(view, "token_balanced")
    ragged_configs = {c for c, l in zip(view.ok["config"], view.ok["lengths"]) if isinstance(l, str) and l}
    assert set(shares["config"]) == ragged_configs
    for _, r in shares.iterrows():
        assert r["dtype"] in r["twin"] and "lengths" not in r["twin"]
        assert r["share"] == pytest.approx(r["gbps"] / r["twin_gbps"])
        if isinstance(r["peer"], str):
            assert r["vs_peer"] > 0


def test_unknown_variant_gives_no_rows(view):
    assert ragged.ragged_shares(view, "no_such_variant").empty
