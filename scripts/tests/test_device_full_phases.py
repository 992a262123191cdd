"""scripts/device_full.sh refuses a PHASE it does not know before it runs anything (a typo
would otherwise run the whole call, or nothing, and look like a pass)."""
from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_an_unknown_phase_is_an_error(tmp_path):
    r = subprocess.run(["bash", "scripts/device_full.sh"], cwd=REPO, capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin", "PHASE": "sanitise", "OUT": str(tmp_path)})
    assert r.returncode == 2
    assert "unknown PHASE=sanitise (all, bench, ncu, tests, sanitize, seeds)" in r.stderr
    assert not (tmp_path / "results.tgz").exists()
