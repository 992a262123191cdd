#!/usr/bin/env bash
# One device call for the flash prefill family: the GPU test (unless RUN_TESTS=0), then the
# benchmarks named in $2 filtered by $1 (a Google Benchmark regex, default the 8k shapes).
# Binaries come prebuilt in .carry_prefill/bin with Google Benchmark's shared library in
# .carry_prefill/lib. Under $OUT: gpu_tests.txt, bench.log (appended) and one results
# JSON per benchmark in $OUT/<experiment>/.
#   bash kernels/prefill/device_run.sh 'seq:8192/' 'bench_prefill_tuning'
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.carry_prefill/lib:${LD_LIBRARY_PATH:-}
B=.carry_prefill/bin
OUT=${OUT:-/tmp/out}
FILTER=${1:-seq:8192/}
BENCHES=${2:-bench_prefill_tuning bench_prefill_kv_tiles bench_prefill_sched_barrier bench_prefill_lds_buffers}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [[ ${RUN_TESTS:-1} != 0 && -x $B/schedlab_gpu_tests_prefill ]]; then
  $B/schedlab_gpu_tests_prefill --gtest_filter='*PrefillGpu*' >"$OUT/gpu_tests.txt" 2>&1
  echo "gpu tests: exit $?"; grep -E "FAILED|Failure|error|PASSED" "$OUT/gpu_tests.txt" | head -20
fi
for b in $BENCHES; do
  [[ -x $B/$b ]] || continue
  log=$(mktemp)
  $B/$b --schedlab_out_dir="$OUT/${b#bench_}" --benchmark_filter="$FILTER" --benchmark_min_time=0.05 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true >"$log" 2>&1
  echo "$b: exit $?"
  cat "$log" >>"$OUT/bench.log"
  # Short table: median TFLOP/s per configuration.
  grep -E "_median|ERROR|skipped" "$log" |
    awk '{f = ""; for (i = 1; i <= NF; i++) if ($i ~ /^FLOP_per_s=/) f = $i; print $1, f}' |
    sed -E 's#/manual_time_median##; s#FLOP_per_s=##; s#T/s$##'
done
