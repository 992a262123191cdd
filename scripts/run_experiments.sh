#!/usr/bin/env bash
# Runs every experiment's benchmark binary from a build directory into a results root,
# with a progress line per experiment. Usage: run_experiments.sh BUILD_DIR RESULTS_ROOT [extra flags]
set -euo pipefail
build=$1 results=$2
shift 2
bins=("$build"/kernels/bench_naive "$build"/experiments/*/bench_*)
i=0
for b in "${bins[@]}"; do
  i=$((i + 1))
  name=$(basename "$b")
  echo "[$i/${#bins[@]}] $name"
  "$b" --schedlab_results_root="$results" --benchmark_repetitions=5 --benchmark_min_time=0.05 \
    --benchmark_report_aggregates_only=false "$@" >"/tmp/schedlab-$name.log" 2>&1 ||
    { echo "  $name failed; log: /tmp/schedlab-$name.log"; tail -5 "/tmp/schedlab-$name.log"; }
done
