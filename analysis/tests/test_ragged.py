"""schedlab_analysis.ragged on committed decode results (the run the work-partition README
cites): every ragged batch of the work-partition experiment finds its uniform twin (same KV
dtype, page and heads, nearest total keys), the share is the bandwidth ratio, and the peer ratio
compares times on the same batch. On a constructed view: twins of other heads are not taken, and
a large GQA group (MQA) is set beside the GQA 32/8 batch of its KV bytes."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from schedlab_analysis import ragged, readme


def test_total_keys_of_lists_repeats_and_uniform_batches():
    assert ragged._total_keys(pd.Series({"lengths": "31x1024+1x51200", "batch": 32, "context": 51200})) == 82944
    assert ragged._total_keys(pd.Series({"lengths": "1+16+256", "batch": 3, "context": 256})) == 273
    assert ragged._total_keys(pd.Series({"lengths": math.nan, "batch": 32, "context": 2592})) == 82944


@pytest.fixture(scope="module")
def view():
    """The run (and the peers of its device call) that the work-partition README's shares section
    cites: the ragged batches and their twins of one run, without reading the whole results tree.
    The same files the README test regenerates that section from, loaded once for both."""
    path = readme.REPO / "experiments" / "decode_work_partition" / "README.md"
    files = next((s.files for s in readme.sections(path) if s.args[:1] == ["shares"]), None) if path.is_file() else None
    if not files:
        pytest.skip("no shares section in the decode_work_partition README")
    return readme._dataset(tuple(files)).view("h200", "decode_work_partition")


def test_a_list_of_equal_lengths_is_no_ragged_batch():
    assert ragged.is_ragged("31x1024+1x51200") and ragged.is_ragged("1+16+256")
    assert not ragged.is_ragged("8x2048") and not ragged.is_ragged("2048+2048") and not ragged.is_ragged(math.nan)


def test_every_ragged_batch_has_its_twin(view):
    shares = ragged.ragged_shares(view, "token_balanced")
    ragged_configs = {c for c, l in zip(view.ok["config"], view.ok["lengths"]) if ragged.is_ragged(l)}
    assert ragged_configs and set(shares["config"]) == ragged_configs
    assert not any("8x2048" in c for c in shares["config"])  # a uniform batch written as a list
    for _, r in shares.iterrows():
        assert r["dtype"] in r["twin"] and "lengths" not in r["twin"]
        assert r["share"] == pytest.approx(r["gbps"] / r["twin_gbps"])
        if isinstance(r["peer"], str):
            assert r["vs_peer"] > 0


def test_unknown_variant_gives_no_rows(view):
    assert ragged.ragged_shares(view, "no_such_variant").empty


class _View:
    """The part of an ExperimentView the functions read: ``ok`` and ``peers``."""

    def __init__(self, rows):
        self.ok = pd.DataFrame(rows)
        self.peers = pd.DataFrame()


def _row(config, variant, gbps, q_heads, kv_heads, batch, context, lengths=math.nan, dtype="bf16", page=16):
    return {"config": config, "variant": variant, "gbps": gbps, "time_us": 1e6 / gbps, "q_heads": q_heads,
            "kv_heads": kv_heads, "batch": batch, "context": context, "lengths": lengths, "dtype": dtype, "page": page}


@pytest.fixture()
def heads_view():
    return _View([
        _row("gqa headline", "split", 4300.0, 32, 8, 16, 16384),
        _row("gqa headline", "token_balanced", 4250.0, 32, 8, 16, 16384),
        _row("mqa", "split", 3900.0, 64, 1, 128, 16384),
        _row("mqa", "persistent", 1100.0, 64, 1, 128, 16384),
        _row("mqa fp8", "split", 3000.0, 64, 1, 128, 16384, dtype="fp8_e4m3"),
        _row("one long 32/8", "token_balanced", 3500.0, 32, 8, 32, 51200, "31x1024+1x51200"),
        _row("twin 32/8", "split", 4000.0, 32, 8, 32, 2592),
        _row("one long 64/2", "token_balanced", 3000.0, 64, 2, 32, 51200, "31x1024+1x51200"),
        _row("twin 64/2", "split", 3600.0, 64, 2, 32, 2592),
        _row("gqa of 64/2 bytes", "split", 4100.0, 32, 8, 8, 2592),
    ])


def test_a_twin_reads_the_same_bytes():
    view = _View([
        _row("8x2048 list", "token_balanced", 3000.0, 32, 8, 8, 2048, "8x2048"),
        _row("short list", "token_balanced", 3000.0, 32, 8, 3, 2048, "1024+2048+2048"),
        _row("twin of more bytes", "split", 4000.0, 32, 8, 8, 2592),
        _row("twin short by a key a sequence", "split", 3900.0, 32, 8, 3, 1706),
    ])
    shares = ragged.ragged_shares(view, "token_balanced").set_index("config")
    # The uniform list is no ragged batch; 5120 keys take the twin of 5118 (one key short per
    # sequence), never the one of 20736.
    assert list(shares.index) == ["short list"]
    assert shares.loc["short list", "twin"] == "twin short by a key a sequence"
    lone = _View([_row("one long", "token_balanced", 3000.0, 32, 8, 32, 51200, "31x1024+1x51200"),
                  _row("twin of other bytes", "split", 4000.0, 32, 8, 32, 2048)])
    assert ragged.ragged_shares(lone, "token_balanced").empty


def test_twins_have_the_same_heads(heads_view):
    shares = ragged.ragged_shares(heads_view, "token_balanced").set_index("config")
    assert shares.loc["one long 32/8", "twin"] == "twin 32/8"
    assert shares.loc["one long 64/2", "twin"] == "twin 64/2"
    assert shares.loc["one long 64/2", "share"] == pytest.approx(3000.0 / 3600.0)


def test_large_groups_beside_the_gqa_batch_of_their_kv_bytes(heads_view):
    split = ragged.group_shares(heads_view, "split").set_index("config")
    assert set(split.index) == {"mqa", "twin 64/2"}  # fp8 MQA has no fp8 GQA batch here
    assert split.loc["mqa", "gqa"] == "gqa headline"
    assert split.loc["mqa", "gqa_variant"] == "split"
    assert split.loc["mqa", "share"] == pytest.approx(3900.0 / 4300.0)
    assert split.loc["mqa", "group"] == 64
    assert split.loc["twin 64/2", "gqa"] == "gqa of 64/2 bytes"
    balanced = ragged.group_shares(heads_view, "token_balanced").set_index("config")
    assert balanced.loc["one long 64/2", "gqa"] == "gqa of 64/2 bytes"
    assert ragged.group_shares(heads_view, "persistent").loc[0, "share"] == pytest.approx(1100.0 / 4300.0)
    assert ragged.group_shares(_View([]), "split").empty


def test_the_peers_rate_on_the_twin_comes_beside_its_rate_on_the_batch():
    view = _View([
        _row("one long", "token_balanced", 3000.0, 32, 8, 32, 51200, "31x1024+1x51200"),
        _row("twin", "split", 4000.0, 32, 8, 32, 2592),
    ])
    view.peers = pd.DataFrame([
        {"config": "one long", "variant": "peer_a", "gbps": 900.0, "time_us": 1e6 / 900.0},
        {"config": "one long", "variant": "peer_b", "gbps": 2500.0, "time_us": 1e6 / 2500.0},
        {"config": "twin", "variant": "peer_a", "gbps": 3800.0, "time_us": 1e6 / 3800.0},
        {"config": "twin", "variant": "peer_b", "gbps": 2600.0, "time_us": 1e6 / 2600.0},
    ])
    r = ragged.ragged_shares(view, "token_balanced").iloc[0]
    assert r["peer"] == "peer_b" and r["peer_gbps"] == 2500.0
    assert r["peer_twin_gbps"] == 3800.0  # the peer's fastest path on the twin, whichever it is
    assert r["vs_peer"] == pytest.approx(3000.0 / 2500.0)


def test_status_states_a_batch_where_the_peer_is_off_its_own_rate_apart():
    from dataclasses import dataclass

    from schedlab_analysis import readme_status

    @dataclass
    class View:
        ok: pd.DataFrame
        peers: pd.DataFrame
        run: str = "r1"

    variant = readme_status.SERVING_VARIANT
    ok = pd.DataFrame([
        _row("one long", variant, 3000.0, 32, 8, 32, 51200, "31x1024+1x51200"),
        _row("twin", "split", 4000.0, 32, 8, 32, 2592),
        _row("span", variant, 3500.0, 32, 8, 8, 15650, "1+16+256+2048+8192+16384+32768+65536", page=32),
        _row("span twin", "split", 3600.0, 32, 8, 8, 15650, page=32),
    ])

    def peer(config, gbps):
        return {"config": config, "variant": "flashinfer_tc", "gbps": gbps, "time_us": 1e6 / gbps, "run": "r1",
                "source_file": "peers.json"}

    # On the one-long batch the peer runs at 900 against 3800 on its twin: apart, not in the range.
    view = View(ok, pd.DataFrame([peer("one long", 900.0), peer("twin", 3800.0), peer("span", 3400.0),
                                  peer("span twin", 3500.0)]))
    text, _ = readme_status.ragged_against(readme_status.FLASHINFER)(view)
    assert text.startswith("bf16 1.03x to 1.03x over 1 batches")
    assert "apart" in text and "one long (0.24 of it) 3.33x" in text


def test_named_distributions_are_read_as_the_harness_draws_them():
    from schedlab_analysis.lengths import parse_lengths
    spec = "lognormal:8:1536:0.5:256-8192+2x32768"
    assert ragged.is_ragged(spec) and not ragged.is_ragged("8x2048") and not ragged.is_ragged(float("nan"))
    assert ragged._total_keys(pd.Series({"lengths": spec})) == sum(parse_lengths(spec))
    assert ragged._total_keys(pd.Series({"lengths": "", "batch": 4, "context": 10})) == 40
