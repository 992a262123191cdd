"""scripts/device_repeat_processes.sh without a device: N processes with repetitions in sequence,
then one interleaved, each into its own results folder; a failing run shows its own exit status
and makes the script fail."""
from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# Records its arguments; exits with $FAKE_RC.
FAKE_BENCH = """#!/usr/bin/env bash
for a in "$@"; do case $a in --schedlab_out_dir=*) d=${a#*=}; mkdir -p "$d"; printf '%s\\n' "$@" > "$d/args" ;; esac; done
exit ${FAKE_RC:-0}
"""


def _run(tmp_path: Path, rc: int) -> subprocess.CompletedProcess:
    bench = tmp_path / "bench"
    bench.write_text(FAKE_BENCH)
    bench.chmod(0o755)
    return subprocess.run(["bash", str(REPO / "scripts" / "device_repeat_processes.sh"), str(bench), "^x/", "2",
                           str(tmp_path / "out"), "--schedlab_tier=default"],
                          env={"PATH": "/usr/bin:/bin", "FAKE_RC": str(rc)}, capture_output=True, text=True, timeout=60)


def test_processes_then_interleaved(tmp_path):
    r = _run(tmp_path, 0)
    assert r.returncode == 0, r.stderr
    out = tmp_path / "out"
    for name, interleave in (("process-1", "false"), ("process-2", "false"), ("interleaved", "true")):
        args = (out / name / "args").read_text().split()
        assert f"--benchmark_enable_random_interleaving={interleave}" in args
        assert "--benchmark_filter=^x/" in args and "--schedlab_tier=default" in args
        assert f"{name} rc=0" in r.stdout


def test_a_failing_run_is_reported(tmp_path):
    r = _run(tmp_path, 3)
    assert r.returncode == 1
    assert "process-1 rc=3" in r.stdout and "interleaved rc=3" in r.stdout


def test_bad_arguments(tmp_path):
    r = subprocess.run(["bash", str(REPO / "scripts" / "device_repeat_processes.sh"), "x", "y", "two", "z"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "whole number" in r.stderr
