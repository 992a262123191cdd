#!/usr/bin/env bash
# Fetches NVIDIA's cuDNN frontend (the Python bindings of cuDNN's graph API, `import cudnn`) as a
# wheel for the GPU machine's Python (3.12, x86-64) into .peers/cudnn_whl (ignored by git; carry
# `.peers` in the device call). The cuDNN library itself is the one PyTorch ships there, so the
# wheel (about 3 MB, no required dependencies at this version) is all that travels;
# scripts/device_stage_peers.sh installs it and scripts/device_full.sh runs
# analysis/peers/cudnn_peers.py after the sweep.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${CUDNN_FRONTEND_VERSION:-1.23.0}
rm -rf .peers/cudnn_whl && mkdir -p .peers/cudnn_whl
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 -d .peers/cudnn_whl \
  "nvidia-cudnn-frontend==$version"
ls -la .peers/cudnn_whl
