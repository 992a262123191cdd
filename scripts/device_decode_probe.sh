#!/usr/bin/env bash
# Quick decode check on the device: GPU tests, then the default kernel (streaming variant)
# on the target shapes. Usage: bash scripts/device_decode_probe.sh
set -uo pipefail
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
B=.carry/bin
OUT=${OUT:-/tmp/out}
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv
$B/schedlab_gpu_tests_decode --gtest_brief=1 2>&1 | tail -15
$B/bench_decode_kv_streaming --schedlab_out_dir=$OUT/probe --benchmark_filter="${FILTER:-(bf16|fp8_e4m3)/batch:(1|16)/context:(16384|65536)/page:16}" \
  --benchmark_min_time=0.05 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep -E "median|ERROR"
nvidia-smi --query-gpu=clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv
