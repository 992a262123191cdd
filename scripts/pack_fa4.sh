#!/usr/bin/env bash
# Packs FlashAttention-4 (PyPI flash-attn-4, CuTe DSL) for the device machine (no pip index
# there): the wheels for CPython 3.12 manylinux x86-64 installed with `pip install --no-deps
# --target` into one folder, what an H200 run does not import removed, compressed with xz and
# split into parts of at most PART_MIB (default 17) MiB:
#
#     .peers/fa4.tar.xz.part-1of4, .peers/fa4.tar.xz.part-2of4, ...   (ignored by git)
#
# `cat .peers/fa4.tar.xz.part-* | tar -xJ` restores the folder. One device call carries at most
# 64 MiB (tree and carried paths together), so each part travels in its own call while the
# machine stays warm; scripts/device_fa4_stage.sh PART gathers them in /tmp on the device and
# unpacks the whole into /tmp/fa4_site once every part is there (DEVELOPING.md, "FlashAttention-4 on the GPU machine").
#
# Wheels (pinned; taken from WHEELDIR, else downloaded with the device README's pip flags):
# flash-attn-4, nvidia-cutlass-dsl (meta) with libs-base, libs-core and libs-cu13 (not
# libs-cu12: the DSL loads the newest _cutlass_ir.cu{N} flavor the driver supports, and the
# device's driver is CUDA 13.0), quack-kernels, apache-tvm-ffi, torch-c-dlpack-ext.
#
# Removed: the aarch64 / QNX runtime stubs (cu13/lib/stubs), tvm-ffi's bundled third-party
# and C++ sources, torch-c-dlpack-ext's prebuilt add-ons (torch 2.4..2.9
# only; the device's torch 2.11 exports the DLPack exchange API itself), console scripts and
# the build backend. Python sources stay whole: cutlass imports its JAX and iket modules at
# import time, and FA4 fingerprints its own sources for its compile cache.
#
# xz -9 on the 193 MB _cutlass_ir library takes minutes: the compression runs under nice. For
# 4.0.0b36 / DSL 4.8.1: 259 MB unpacked, 68.3 MB (65.2 MiB) compressed, 4 parts of 17.1 MB (a part
# and the tracked tree must fit one call's 64 MiB: with the tree at 43.4 MB, end of November 2026,
# 22.8 MB parts no longer did, as 34 MB ones had not beside 32.5 MB)
# (13 to 18 min on two shared, busy cores).
# Usage: bash scripts/pack_fa4.sh [WHEELDIR] [WORKDIR]   (defaults /tmp/fa4, /tmp/fa4_pack)
# Env: PART_MIB (17), XZ_THREADS (2), XZ_LEVEL (-9).
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
WHEELS=${1:-/tmp/fa4}
WORK=${2:-/tmp/fa4_pack}
PART_MIB=${PART_MIB:-17}
OUT_DIR=$REPO/.peers
PREFIX=$OUT_DIR/fa4.tar.xz.part-
PINS=(flash-attn-4==4.0.0b36 nvidia-cutlass-dsl==4.8.1 nvidia-cutlass-dsl-libs-base==4.8.1
      nvidia-cutlass-dsl-libs-core==4.8.1 nvidia-cutlass-dsl-libs-cu13==4.8.1 quack-kernels==0.6.5
      apache-tvm-ffi==0.1.15.post2 torch-c-dlpack-ext==0.1.5)
PLATFORM=(--python-version 3.12 --implementation cp --only-binary=:all:
          --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64
          --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64)

mkdir -p "$WHEELS" "$OUT_DIR"
wheel_of() {  # the wheel file of NAME==VERSION in $WHEELS (pip's file names use '_' for '-')
  local name=${1%%==*} version=${1##*==}
  compgen -G "$WHEELS/${name//-/_}-$version-*.whl" | head -n 1 || true
}
missing=()
for pin in "${PINS[@]}"; do [ -n "$(wheel_of "$pin")" ] || missing+=("$pin"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "pack_fa4: downloading ${missing[*]}"
  python3 -m pip download -q --no-deps "${PLATFORM[@]}" -d "$WHEELS" "${missing[@]}"
fi
files=()
for pin in "${PINS[@]}"; do
  w=$(wheel_of "$pin"); [ -n "$w" ] || { echo "pack_fa4: no wheel for $pin in $WHEELS" >&2; exit 1; }
  files+=("$w")
done

S=$WORK/site
rm -rf "$S" && mkdir -p "$S"
# --target with the device's interpreter tags: this machine's Python may be another version.
PIP_ROOT_USER_ACTION=ignore python3 -m pip install -q --no-deps --no-compile --no-index --target "$S" "${PLATFORM[@]}" "${files[@]}"

D=$S/nvidia_cutlass_dsl
[ -f "$D/dsl_packages/cutlass/_mlir/_mlir_libs/_cutlass_ir.cu13.cpython-312-x86_64-linux-gnu.so" ] \
  || { echo "pack_fa4: the cu13 _cutlass_ir library is missing (wheel layout changed?)" >&2; exit 1; }
[ -f "$D/cu13/lib/libcute_dsl_runtime.so" ] || { echo "pack_fa4: cu13/lib/libcute_dsl_runtime.so missing" >&2; exit 1; }
[ -f "$S/nvidia_cutlass_dsl_packages.pth" ] || { echo "pack_fa4: nvidia_cutlass_dsl_packages.pth missing" >&2; exit 1; }
# (tvm_ffi/lib/libtvm_ffi_testing.so stays: tvm_ffi.core links it.)
rm -rf "$D/cu13/lib/stubs" "$S/tvm_ffi/3rdparty" "$S/tvm_ffi/src" "$S/bin" "$S/build_backend.py"
rm -f "$S"/torch_c_dlpack_ext/libtorch_c_dlpack_addon_torch*.so
find "$S" -name '__pycache__' -type d -prune -exec rm -rf {} +
{ printf '%s\n' "${PINS[@]}"; echo "packed $(date -u +%Y-%m-%dT%H:%M:%SZ) by scripts/pack_fa4.sh"; } >"$S/FA4_PACK.txt"
echo "pack_fa4: site $(du -sh "$S" | cut -f1) unpacked"

# Compress (niced: this machine's cores are shared), then split into equal parts.
rm -f "$PREFIX"* "$WORK/fa4.tar.xz"
t0=$(date +%s)
tar -C "$S" -cf - . | nice -n 10 xz "${XZ_LEVEL:--9}" -T"${XZ_THREADS:-2}" >"$WORK/fa4.tar.xz.partial"
mv "$WORK/fa4.tar.xz.partial" "$WORK/fa4.tar.xz"
size=$(stat -c %s "$WORK/fa4.tar.xz")
limit=$(( PART_MIB << 20 ))
n=$(( (size + limit - 1) / limit ))
chunk=$(( (size + n - 1) / n ))
width=${#n}
split -b "$chunk" -d -a 3 "$WORK/fa4.tar.xz" "$WORK/part."
i=0
for p in "$WORK"/part.*; do
  i=$((i + 1))
  mv "$p" "$PREFIX$(printf "%0${width}d" "$i")of$n"
done
echo "pack_fa4: $(basename "$WORK/fa4.tar.xz") $size bytes ($(awk -v b="$size" 'BEGIN { printf "%.1f", b / 1048576 }') MiB, xz ${XZ_LEVEL:--9}, $(( $(date +%s) - t0 )) s)," \
  "sha256 $(sha256sum "$WORK/fa4.tar.xz" | cut -c1-16); $n part(s) of at most $PART_MIB MiB:"
ls -l "$PREFIX"*
rm -f "$WORK/fa4.tar.xz"
