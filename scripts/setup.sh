#!/usr/bin/env bash
# Installs what schedlab needs on a fresh Debian/Ubuntu machine; safe to run again.
# Debian packages: the C++ toolchain, Google Benchmark, GoogleTest, Eigen, for the AMD
# compile-only check clang-22 with Debian's HIP headers, and for the sweep's Slurm array test a
# one-node Slurm with munge. Python packages from PyPI.
# The CUDA toolkit (nvcc 12+ for sm_90a) is not in Debian's main archive: where it is
# missing the NVIDIA parts of the build and report are skipped, and the scripts say so.
set -euo pipefail
cd "$(dirname "$0")/.."

want_deb=(cmake ninja-build g++ git libbenchmark-dev libgtest-dev libeigen3-dev python3-pip)
# clang-22 and the HIP headers: the AMD ISA check. Optional where the archive lacks them.
optional_deb=(clang-22 llvm-22 libamdhip64-dev)
# Slurm's controller, node daemon and client with munge: scripts/tests/test_slurm.py starts them
# (no service is used). One install, without recommends: it stays a few seconds.
slurm_deb=(munge slurmctld slurmd slurm-client)

missing=()
for p in "${want_deb[@]}" "${optional_deb[@]}" "${slurm_deb[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${want_deb[@]}"
  for p in "${optional_deb[@]}"; do
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" ||
      echo "setup: $p is not available here; the AMD ISA check will be skipped"
  done
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${slurm_deb[@]}" ||
    echo "setup: Slurm is not available here; the Slurm array test (scripts/tests/test_slurm.py) will be skipped"
fi

PY=${PYTHON:-python3}
reqs=(-r analysis/requirements.txt)
[ -f scripts/requirements-ci.txt ] && reqs+=(-r scripts/requirements-ci.txt)
if ! $PY -m pip install -q --disable-pip-version-check "${reqs[@]}" 2>/tmp/schedlab-pip.log; then
  # Debian's system python refuses global installs (PEP 668); its packages go beside it.
  $PY -m pip install -q --disable-pip-version-check --break-system-packages "${reqs[@]}"
fi

if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: nvcc found: NVIDIA kernels build for sm_90a"
else
  echo "setup: no nvcc: NVIDIA kernels and the sm_90a report are skipped on this machine"
fi
