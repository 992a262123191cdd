#!/usr/bin/env bash
# Is a configuration's spread between repetitions a property of its allocation? Runs one
# benchmark filter in N separate processes with repetitions in sequence (each process builds
# its case once, so its repetitions share one set of device allocations), then once with
# repetitions interleaved (the harness rebuilds a case each time it comes back, new
# allocations every repetition). Times that cluster by process but not within one point at
# the memory the inputs landed in, not at the kernel's own run-to-run noise.
# Writes OUT_DIR/process-<k>/ and OUT_DIR/interleaved/ (the harness's results files).
# Usage: scripts/device_repeat_processes.sh BIN FILTER N OUT_DIR [bench args...]
set -uo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 BIN FILTER N OUT_DIR [bench args...]" >&2
  exit 2
fi
bin=$1 filter=$2 n=$3 out=$4
shift 4
case $n in '' | *[!0-9]*) echo "N must be a whole number, got '$n'" >&2; exit 2 ;; esac
[ -x "$bin" ] || { echo "no executable $bin" >&2; exit 2; }
mkdir -p "$out"
fail=0
# One run: its exit status printed (and remembered), its output in NAME.log.
run() {
  local name=$1 interleave=$2
  shift 2
  "$bin" --benchmark_filter="$filter" --benchmark_enable_random_interleaving="$interleave" \
    --schedlab_out_dir="$out/$name" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  [ $rc = 0 ] || fail=1
  echo "$name rc=$rc $(date -u +%T)"
}
for k in $(seq 1 "$n"); do run "process-$k" false "$@"; done
run interleaved true "$@"
exit $fail
