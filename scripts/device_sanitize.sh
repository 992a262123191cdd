#!/usr/bin/env bash
# compute-sanitizer on each GPU test family's small-shape tests (`*ForSanitizer*`): memcheck (out
# of bounds, misaligned, uninitialized device reads), racecheck (shared-memory hazards) and
# synccheck (barriers reached by divergent threads, invalid barrier use). Each launch runs orders
# of magnitude slower under it, hence the small shapes.
#   Usage: device_sanitize.sh BIN_DIR LOG_DIR
# Every family must have such tests: a test binary that is there without one of its families'
# small-shape tests fails the script (it would otherwise pass having checked nothing), and so
# does a tool run that the budget leaves out. Each tool runs a binary's tests in one process;
# when that process is not clean, each test runs again in a process of its own, so one broken
# context (a kernel stopped by the tool leaves the context unusable) cannot hide another test.
# Env: SANITIZER_TOOLS (default "memcheck racecheck synccheck"), SANITIZER_DEADLINE (epoch
# seconds; no tool run starts in the last SANITIZER_MIN_LEFT_S, default 60, before it),
# TEST_TIMEOUT_S (a process's limit, default 180). Logs: LOG_DIR/<binary>-<tool>.{txt,xml}, and
# <binary>-<tool>-<k>.{txt,xml} for the k-th test run alone. Exit 0 when every run was clean.
set -uo pipefail
bin=${1:?usage: device_sanitize.sh BIN_DIR LOG_DIR}
logs=${2:?usage: device_sanitize.sh BIN_DIR LOG_DIR}
mkdir -p "$logs"
tools=${SANITIZER_TOOLS:-memcheck racecheck synccheck}
status=0

if ! command -v compute-sanitizer >/dev/null; then
  echo "sanitizers: FAILED: compute-sanitizer is not on PATH, nothing was checked"
  exit 1
fi

# The families a GPU test binary holds, as the gtest suites of their small-shape tests.
families_of() {
  case $1 in
    schedlab_gpu_tests_prefill) echo "NaiveAttentionGpu PrefillGpu" ;;
    schedlab_gpu_tests_hopper_prefill) echo "HopperPrefillGpu" ;;
    schedlab_gpu_tests_decode) echo "DecodeGpu DecodeGpuRowTileVariant" ;;
  esac
}

# A binary's *ForSanitizer* tests as full names (Suite.Test, typed Suite/N.Test, parameterized
# Prefix/Suite.Test/param), one a line, from gtest's listing (suite lines, then indented tests).
sanitizer_tests() {
  "$1" --gtest_list_tests --gtest_filter='*ForSanitizer*' 2>/dev/null | awk '
    /^[^ ]/ { suite = $1; next }
    /^  [^ ]/ { print suite $1 }'
}

# One process of the tool over the tests the filter selects; prints its exit status.
run_tool() {  # binary, tool, gtest filter, log path without extension
  # synccheck tracks a bounded number of mbarriers; the decode bulk-copy policy's warps hold more
  # than its default, and past it the tool reports an overflow and stops the kernel
  # (DecodeGpu/11, double_bulk: clean with room for them, run 20261128T095945Z).
  local extra=()
  [ "$2" = synccheck ] && extra=(--num-cuda-barriers "${SYNCCHECK_BARRIERS:-65536}")
  timeout "${TEST_TIMEOUT_S:-180}" compute-sanitizer --tool "$2" "${extra[@]}" --error-exitcode 97 "$1" --gtest_filter="$3" \
    --gtest_output=xml:"$4.xml" >"$4.txt" 2>&1 </dev/null
  echo $?
}

summary() { grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^\[  (PASSED|FAILED)' "$1" | tr '\n' ' '; }

found=0
for t in "$bin"/schedlab_gpu_tests_*; do
  [ -x "$t" ] || continue
  found=1
  tn=$(basename "$t")
  tests=$(sanitizer_tests "$t")
  for family in $(families_of "$tn"); do
    if ! grep -Eq "(^|/)$family(/[0-9]+)?\." <<<"$tests"; then
      echo "$tn: FAILED: no *ForSanitizer* test of $family: the sanitizers would check nothing of that family"
      status=1
    fi
  done
  if [ -z "$tests" ]; then
    echo "$tn: FAILED: no *ForSanitizer* test"
    status=1
    continue
  fi
  for tool in $tools; do
    if [ -n "${SANITIZER_DEADLINE:-}" ] && [ $(( SANITIZER_DEADLINE - $(date +%s) )) -lt "${SANITIZER_MIN_LEFT_S:-60}" ]; then
      echo "$tn $tool: NOT RUN (the call's budget is spent): FAILED"
      status=1
      continue
    fi
    rc=$(run_tool "$t" "$tool" '*ForSanitizer*' "$logs/$tn-$tool")
    echo "$tn $tool rc=$rc $(summary "$logs/$tn-$tool.txt")"
    [ "$rc" = 0 ] && continue
    status=1
    echo "$tn $tool: not clean; each test again in a process of its own"
    k=0
    while read -r name; do
      k=$((k + 1))
      rc=$(run_tool "$t" "$tool" "$name" "$logs/$tn-$tool-$k")
      echo "  $name rc=$rc $(summary "$logs/$tn-$tool-$k.txt")"
    done <<<"$tests"
  done
done
if [ "$found" = 0 ]; then
  echo "sanitizers: FAILED: no schedlab_gpu_tests_* binary in $bin"
  status=1
fi
exit $status
