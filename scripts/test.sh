#!/usr/bin/env bash
# Every test: set-up, build, C++ tests (ctest; GPU tests only where a GPU is), the static
# resource report for sm_90a / gfx942 / gfx950 (a ctest), and the Python tests. The ISA tests
# among the latter read the report's compiles from build/compile_cache instead of compiling
# again (scripts/compile_cache.py). Each step prints its time; pytest its ten slowest tests
# (scripts/tests/SLOWEST.md).
set -euo pipefail
cd "$(dirname "$0")/.."
step_start=$SECONDS
step_done() { echo "test: $1 took $((SECONDS - step_start)) s"; step_start=$SECONDS; }
bash scripts/setup.sh
step_done "set-up"
source scripts/common.sh
build
step_done "build"
labels=(-LE gpu)
if have_gpu; then labels=(); echo "test: GPU found: GPU-labelled tests run too"; fi
(cd "build/$SCHEDLAB_PRESET" && ctest --output-on-failure -j "$(nproc)" "${labels[@]}")
step_done "ctest"
bash scripts/hip_build.sh  # the AMD build: every binary for gfx942 / gfx950, compiled and linked, not run
step_done "AMD build"
# One worker per core (pytest-xdist): the tests share nothing but read-only results and the
# compile cache, whose entries are written whole (scripts/compile_cache.py). A file's tests stay
# on one worker (--dist loadfile), so a module's compile (the ISA tests') runs once, not once a worker.
python3 -m pytest -q -n "$(nproc)" --dist loadfile --durations=10 analysis/tests scripts/tests kernels/prefill/tests kernels/hopper_prefill/tests kernels/decode/tests
step_done "pytest"
