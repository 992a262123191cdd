#!/usr/bin/env bash
# One device call for the flash prefill family: the GPU test, then the benchmarks filtered
# by $1 (a Google Benchmark regex, default the 8k shapes). Binaries come prebuilt in
# .carry_prefill/bin with Google Benchmark's shared library in .carry_prefill/lib.
#   bash kernels/prefill/device_run.sh 'seq:8192'      (on the device, OUT set by the tool)
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.carry_prefill/lib:${LD_LIBRARY_PATH:-}
B=.carry_prefill/bin
OUT=${OUT:-/tmp/out}
FILTER=${1:-seq:8192/}
BENCHES=${2:-bench_prefill_tuning bench_prefill_kv_tiles bench_prefill_sched_barrier bench_prefill_lds_buffers}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
if [[ -x $B/schedlab_gpu_tests ]]; then
  $B/schedlab_gpu_tests --gtest_filter='PrefillGpu*' >"$OUT/gpu_tests.txt" 2>&1
  echo "gpu tests: exit $?"; grep -E "FAILED|Failure|error|PASSED" "$OUT/gpu_tests.txt" | head -20
fi
for b in $BENCHES; do
  [[ -x $B/$b ]] || continue
  $B/$b --schedlab_out_dir="$OUT/${b#bench_}" --benchmark_filter="$FILTER" --benchmark_min_time=0.05 \
    --benchmark_repetitions=3 --benchmark_report_aggregates_only=true >"$OUT/${b#bench_}.txt" 2>&1
  echo "$b: exit $?"
done
# Short table last: median TFLOP/s per configuration.
for b in $BENCHES; do
  [[ -f $OUT/${b#bench_}.txt ]] || continue
  grep -E "_median|ERROR|skipped" "$OUT/${b#bench_}.txt" |
    awk '{f = ""; for (i = 1; i <= NF; i++) if ($i ~ /^FLOP_per_s=/) f = $i; print $1, f}'
done
