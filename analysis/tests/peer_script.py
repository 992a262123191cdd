"""Imports one of analysis/peers/*.py as the module of its name, as the tests of its pure parts
need it: without the GPU libraries it runs (those are imported inside its functions only, which
the import checks)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PEERS = Path(__file__).resolve().parents[1] / "peers"


def import_peer_script(name: str, heavy: tuple[str, ...]):
    """analysis/peers/<name>.py as module `name` (registered first: its dataclasses resolve
    their annotations through sys.modules); fails if importing it imported any of `heavy`."""
    had = {m: m in sys.modules for m in heavy}
    if str(PEERS) not in sys.path:
        sys.path.insert(0, str(PEERS))
    spec = importlib.util.spec_from_file_location(name, PEERS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    for m, was in had.items():
        if not was:
            assert m not in sys.modules, f"importing the script must not import {m}"
    return mod
