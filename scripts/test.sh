#!/usr/bin/env bash
# Every test: set-up, build, C++ tests (ctest; GPU tests only where a GPU is), the static
# resource report for sm_90a / gfx942 / gfx950 (a ctest), and the Python tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/common.sh
build
labels=(-LE gpu)
if have_gpu; then labels=(); echo "test: GPU found: GPU-labelled tests run too"; fi
(cd "build/$SCHEDLAB_PRESET" && ctest --output-on-failure -j "$(nproc)" "${labels[@]}")
bash scripts/hip_build.sh  # the AMD build: every binary for gfx942 / gfx950, compiled and linked, not run
python3 -m pytest -q analysis/tests scripts/tests kernels/prefill/tests kernels/hopper_prefill/tests kernels/decode/tests
