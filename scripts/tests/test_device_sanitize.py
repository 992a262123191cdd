"""scripts/device_sanitize.sh without a device: every tool over each binary's *ForSanitizer*
tests in one process; a family without such tests fails the script; a run that is not clean is
followed by each test alone, so one broken context cannot hide another."""
from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# A gtest binary: lists the suites and tests of $TESTS_<binary> ("Suite.Test" words) for
# --gtest_list_tests; a run exits with $FAIL_RC when its filter is in $FAIL_FILTERS, else 0.
FAKE_TESTS = """#!/usr/bin/env bash
name=$(basename "$0")
var=TESTS_$name
for a in "$@"; do
  case $a in
    --gtest_list_tests) for t in ${!var}; do printf '%s.  # TypeParam = x\\n  %s  # GetParam() = y\\n' "${t%%.*}" "${t#*.}"; done; exit 0 ;;
    --gtest_filter=*) filter=${a#*=} ;;
  esac
done
echo "$name $filter" >>"$RUNS"
case " ${FAIL_FILTERS:-} " in *" $filter "*) echo "[  FAILED  ] 1 test"; exit 1 ;; esac
echo "[  PASSED  ] 1 test"
"""
# compute-sanitizer: records the tool, runs the rest of its command line.
FAKE_SANITIZER = """#!/usr/bin/env bash
while [ $# -gt 0 ]; do
  case $1 in
    --tool) tool=$2; shift 2 ;;
    --num-cuda-barriers) barriers=" barriers=$2"; shift 2 ;;
    --error-exitcode) shift 2 ;;
    *) break ;;
  esac
done
echo "========= ERROR SUMMARY: 0 errors ($tool${barriers:-})"
"$@"
"""

DECODE = "decode_lds_buffers/DecodeGpu/0.SmallShapesForSanitizer decode_work_partition/DecodeGpuRowTileVariant.SmallShapesForSanitizer/split"
PREFILL = "NaiveAttentionGpu.SmallShapesForSanitizer PrefillGpu/0.SmallShapesForSanitizer"


def _run(tmp_path: Path, tests: dict[str, str], fail_filters: str = "",
         extra_env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess, list[str]]:
    tmp_path.mkdir(exist_ok=True)
    bin_dir, tools = tmp_path / "bin", tmp_path / "tools"
    bin_dir.mkdir()
    tools.mkdir()
    for name in tests:
        (bin_dir / name).write_text(FAKE_TESTS)
        (bin_dir / name).chmod(0o755)
    (tools / "compute-sanitizer").write_text(FAKE_SANITIZER)
    (tools / "compute-sanitizer").chmod(0o755)
    runs = tmp_path / "runs"
    runs.touch()
    env = {"PATH": f"{tools}:/usr/bin:/bin", "RUNS": str(runs), "FAIL_FILTERS": fail_filters,
           **{f"TESTS_{k}": v for k, v in tests.items()}, **(extra_env or {})}
    r = subprocess.run(["bash", str(REPO / "scripts" / "device_sanitize.sh"), str(bin_dir), str(tmp_path / "logs")],
                       env=env, capture_output=True, text=True, timeout=60)
    return r, runs.read_text().splitlines()


def test_every_tool_on_every_binary_in_one_process(tmp_path):
    r, runs = _run(tmp_path, {"schedlab_gpu_tests_decode": DECODE, "schedlab_gpu_tests_prefill": PREFILL})
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(runs) == 6 and all(run.endswith(" *ForSanitizer*") for run in runs)
    for tool in ("memcheck", "racecheck", "synccheck"):
        assert f"schedlab_gpu_tests_decode {tool} rc=0" in r.stdout
        assert f"schedlab_gpu_tests_prefill {tool} rc=0" in r.stdout
    assert (tmp_path / "logs" / "schedlab_gpu_tests_decode-synccheck.txt").exists()
    # synccheck is given room for every mbarrier the decode bulk copies hold; the others are not.
    assert "(synccheck barriers=65536)" in r.stdout and "(memcheck barriers" not in r.stdout


def test_a_family_without_sanitizer_tests_fails(tmp_path):
    r, _ = _run(tmp_path / "a", {"schedlab_gpu_tests_prefill": "NaiveAttentionGpu.SmallShapesForSanitizer"})
    assert r.returncode == 1
    assert "no *ForSanitizer* test of PrefillGpu" in r.stdout
    r, runs = _run(tmp_path / "b", {"schedlab_gpu_tests_hopper_prefill": ""})
    assert r.returncode == 1 and runs == []
    assert "no *ForSanitizer* test of HopperPrefillGpu" in r.stdout


def test_a_run_that_is_not_clean_runs_each_test_alone(tmp_path):
    r, runs = _run(tmp_path, {"schedlab_gpu_tests_decode": DECODE}, fail_filters="*ForSanitizer*")
    assert r.returncode == 1
    alone = [run for run in runs if not run.endswith("*ForSanitizer*")]
    # Each test again in a process of its own, under each of the three tools.
    assert sorted(alone) == sorted(f"schedlab_gpu_tests_decode {t}" for t in DECODE.split() for _ in range(3))
    assert "  decode_work_partition/DecodeGpuRowTileVariant.SmallShapesForSanitizer/split rc=0" in r.stdout


def test_a_tool_run_the_budget_leaves_out_fails(tmp_path):
    r, runs = _run(tmp_path, {"schedlab_gpu_tests_decode": DECODE}, extra_env={"SANITIZER_DEADLINE": "0"})
    assert r.returncode == 1 and runs == []
    assert "schedlab_gpu_tests_decode synccheck: NOT RUN" in r.stdout
