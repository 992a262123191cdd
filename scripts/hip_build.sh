#!/usr/bin/env bash
# The AMD build: configures the `hip` preset and builds every library, benchmark and GPU test
# binary for gfx942 and gfx950 (host and device code, linked), then checks that each binary
# with GPU code carries a code object for both. Nothing runs: no AMD GPU here. The host-only
# tests are left to the CUDA build, which compiles the same code and runs them.
#
# With no ROCm install it uses Debian's packages (installed here when missing): clang-22 and
# lld-22, clang-tools-22 (clang-offload-bundler), llvm-22, libamdhip64-dev, rocm-device-libs,
# libhsa-runtime-dev; cmake/SchedlabHipToolchain.cmake says how they are fitted together.
# Where apt cannot provide them it says so and exits 0 (skipped); a failed build fails.
#
#   bash scripts/hip_build.sh          # about 6 CPU-minutes on top of the rest of the build
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS

debs=(clang-22 lld-22 clang-tools-22 llvm-22 libamdhip64-dev rocm-device-libs libhsa-runtime-dev)
missing=()
for p in "${debs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if ((${#missing[@]})) && ! [ -d /opt/rocm ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "hip_build: installing ${missing[*]}"
  if ! { $SUDO apt-get update -qq &&
         $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; }; then
    echo "hip_build: SKIPPED: could not install ${missing[*]} (no ROCm install either)"
    exit 0
  fi
fi

cmake --preset hip -DSCHEDLAB_HOST_TESTS=OFF >/dev/null
cmake --build build/hip -j "$(nproc)"

# Every linked binary with GPU code holds one code object per architecture.
archs=$(sed -n 's/^CMAKE_HIP_ARCHITECTURES:[A-Z]*=//p' build/hip/CMakeCache.txt | tr ';' ' ')
checked=0
while IFS= read -r bin; do
  grep -qa 'hipv4-amdgcn-amd-amdhsa--' "$bin" || continue  # host-only (plan and core tests)
  for arch in $archs; do
    if ! grep -qa "hipv4-amdgcn-amd-amdhsa--$arch" "$bin"; then
      echo "hip_build: FAILED: $bin has no $arch code object" >&2
      exit 1
    fi
  done
  checked=$((checked + 1))
done < <(find build/hip -type f -perm -u+x \( -name 'bench_*' -o -name 'schedlab_*' \) | sort)
if ((checked == 0)); then
  echo "hip_build: FAILED: no binary with GPU code found under build/hip" >&2
  exit 1
fi
echo "hip_build: ${checked} binaries with code objects for: ${archs} (built, never run) in $((SECONDS - start)) s"
