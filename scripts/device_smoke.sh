#!/usr/bin/env bash
# First look on the device: GPU tests, the naive end-to-end benchmark, one decode shape.
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
B=.carry/bin
OUT=${OUT:-/tmp/out}
mkdir -p $OUT
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee $OUT/smi.txt
$B/schedlab_gpu_tests 2>&1 | tail -30 | tee $OUT/gpu_tests.txt
$B/bench_naive --schedlab_out_dir=$OUT/naive --benchmark_min_time=0.05 --benchmark_repetitions=3 2>&1 | tail -25
$B/bench_decode_kv_streaming --schedlab_out_dir=$OUT/decode --benchmark_filter='batch:(1|16)/context:(16384|65536)/page:16' --benchmark_min_time=0.1 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -vE "^\s*$" | tail -30
