"""Puts scripts/ on the import path and serves the saved compiler output."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

COMPILER_OUTPUT = Path(__file__).resolve().parent / "fixtures" / "compiler_output"


@pytest.fixture
def compiler_output():
    """Reads a file of real compiler output saved in fixtures/compiler_output."""
    return lambda name: (COMPILER_OUTPUT / name).read_text()
