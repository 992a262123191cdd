"""scripts/bench_names.sh: a benchmark name becomes a filter that matches that name alone."""
import re
import subprocess
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "bench_names.sh"
NAMES = [
    "decode_work_partition/token_balanced/bf16/batch:32/lengths:31x1024+1x51200/page:16/q_heads:64/kv_heads:2/"
    "iterations:1/manual_time",
    "decode_work_partition/split/fp8_e4m3/batch:8/lengths:1+16+256+2048+8192+16384+32768+65536/page:32/"
    "iterations:1/manual_time",
    "prefill_pingpong/pingpong/bf16/seq:8192/head_dim:128/causal:1/iterations:1/manual_time",
]


def literal_regex(name: str) -> str:
    out = subprocess.run(["bash", "-c", f'source "{SCRIPT}"; literal_regex "$1"', "_", name],
                         capture_output=True, text=True, check=True)
    return out.stdout


def test_each_name_matches_itself_alone():
    for name in NAMES:
        pattern = re.compile("^" + literal_regex(name) + "$")
        assert pattern.match(name), name
        assert [n for n in NAMES if pattern.match(n)] == [name]
        # Unescaped, the ragged names do not match themselves ('+' is a quantifier).
        if "+" in name:
            assert not re.match("^" + name + "$", name)


def test_metacharacters_are_literal():
    assert literal_regex("a.b*c[d](e)|f?g{2}^$\\") == "a\\.b\\*c\\[d\\]\\(e\\)\\|f\\?g\\{2\\}\\^\\$\\\\"


def shape_of(tag: str) -> str:
    out = subprocess.run(["bash", "-c", f'source "{SCRIPT}"; shape_of "$1"', "_", tag],
                         capture_output=True, text=True, check=True)
    return out.stdout


def test_the_shape_part_of_a_name_holds_no_colon_slash_or_plus():
    tags = [n.removesuffix("/manual_time") for n in NAMES]
    assert shape_of(tags[2]) == "seq8192-head_dim128-causal1"
    assert shape_of(tags[0]) == "batch32-lengths31x1024_1x51200-page16-q_heads64-kv_heads2"
    for tag in tags:
        assert not set(shape_of(tag)) & set(":/+"), tag
