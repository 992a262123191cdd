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
for k in $(seq 1 "$n"); do
  "$bin" --benchmark_filter="$filter" --benchmark_enable_random_interleaving=false \
    --schedlab_out_dir="$out/process-$k" "$@" >"$out/process-$k.log" 2>&1 || fail=1
  echo "process $k/$n rc=$? $(date -u +%T)"
done
"$bin" --benchmark_filter="$filter" --benchmark_enable_random_interleaving=true \
  --schedlab_out_dir="$out/interleaved" "$@" >"$out/interleaved.log" 2>&1 || fail=1
echo "interleaved rc=$?"
exit $fail
