"""The Python reading of the ``lengths`` axis draws what the C++ harness draws (the same pinned
values as common/tests/test_axes.cpp), and names its faults."""
import pytest

from schedlab_analysis.lengths import LengthsError, parse_lengths


def test_lists_and_repeats():
    assert parse_lengths("1+65536+300") == [1, 65536, 300]
    assert parse_lengths("3x7+1x9+2") == [7, 7, 7, 9, 2]


def test_lognormal_is_the_harness_draw():
    lengths = parse_lengths("lognormal:8:1536:0.5:256-8192")
    assert lengths == [1514, 1371, 1617, 1193, 1906, 903, 829, 2117]
    assert parse_lengths("lognormal:8:1536:0.5:256-8192+2x32768") == lengths + [32768, 32768]
    assert all(500 <= n <= 600 for n in parse_lengths("lognormal:50:1000:3:500-600"))


def test_uniform_and_one_long_are_the_harness_draws():
    assert parse_lengths("uniform:3:9-9") == [9, 9, 9]
    assert parse_lengths("one_long:1:5000:1-2") == [5000]
    u = parse_lengths("uniform:100:256-4096")
    assert len(u) == 100 and all(256 <= n <= 4096 for n in u)


@pytest.mark.parametrize("spec, words", [
    ("zipf:4:1-9", "unknown distribution 'zipf'"),
    ("lognormal:4:100:1-9", "lognormal:BATCH:MEDIAN:SIGMA:MIN-MAX"),
    ("lognormal:4:100:0:1-9", "not a number in (0, 10]"),
    ("uniform:4:9-1", "MIN > MAX"),
    ("1++3", "not a whole number"),
    ("70000x1", "more than 65536"),
])
def test_malformed_specs_name_their_fault(spec, words):
    with pytest.raises(LengthsError, match=None) as e:
        parse_lengths(spec)
    assert words in str(e.value)
