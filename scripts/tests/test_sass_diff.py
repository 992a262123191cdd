"""scripts/sass_diff.py's pairing of functions across trees (no compiler needed)."""
import argparse
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import sass_diff  # noqa: E402


def test_rename_pairs_a_variant_that_moved_to_another_experiment():
    before = {"_ZN8schedlab11experiments21decode_work_partition14token_balancedE": ["A"],
              "_ZN8schedlab11experiments21decode_work_partition5splitE": ["B"]}
    moved = sass_diff.renamed(before, [sass_diff.parse_rename("21decode_work_partition14token=20decode_partial_merge14token")])
    assert set(moved) == {"_ZN8schedlab11experiments20decode_partial_merge14token_balancedE",
                          "_ZN8schedlab11experiments21decode_work_partition5splitE"}
    assert sass_diff.renamed(before, []) == before


def test_rename_refuses_a_malformed_pair():
    for bad in ("no_equals_sign", "=NEW"):
        with pytest.raises(argparse.ArgumentTypeError):
            sass_diff.parse_rename(bad)
