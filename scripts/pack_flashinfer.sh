#!/usr/bin/env bash
# Packs FlashInfer for the device machine (no network there): the flashinfer-python and
# apache-tvm-ffi wheels for CPython 3.12 manylinux, unpacked into one folder, with the kernel
# sources that batch decode does not need removed, written as .peers/flashinfer.tar.xz
# (ignored by git; carry `.peers` in the device call). analysis/peers/flashinfer_peers.py's
# device hook (scripts/device_full.sh) unpacks it to /tmp/fi_site and puts that on PYTHONPATH.
#
# Kept of the kernel sources (flashinfer/data/csrc): batch decode (the CUDA-core path),
# batch prefill in both generations (fa2 and the sm90 one: the tensor-core decode path is
# the prefill kernel with one query per request), and the shared headers; the header trees
# FlashInfer's JIT puts on the include path (include/, cutlass/include, cutlass/tools/util/include,
# cccl's cub, libcudacxx/include, thrust, spdlog) stay whole. Nothing is prebuilt: that would
# need torch here. The device compiles the modules on first use (nvcc 13.0, 16 cores);
# the peer script prints how long that took.
#
# Usage: bash scripts/pack_flashinfer.sh [WORKDIR]   (WORKDIR default /tmp/fi_pack)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
WORK=${1:-/tmp/fi_pack}
FI_VERSION=0.7.2.post1
TVM_FFI_VERSION=0.1.15.post2
OUT_DIR=$REPO/.peers
OUT_FILE=$OUT_DIR/flashinfer.tar.xz

rm -rf "$WORK/stage"
mkdir -p "$WORK/wheels" "$WORK/stage" "$OUT_DIR"
# The device README's flags: binary wheels for CPython 3.12 on x86-64 manylinux, no dependencies
# (torch, numpy and the rest are already there).
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 \
  -d "$WORK/wheels" "flashinfer-python==$FI_VERSION" "apache-tvm-ffi==$TVM_FFI_VERSION"
for w in "$WORK"/wheels/flashinfer_python-"$FI_VERSION"-*.whl "$WORK"/wheels/apache_tvm_ffi-"$TVM_FFI_VERSION"-*.whl; do
  [ -f "$w" ] || { echo "pack_flashinfer: wheel missing: $w" >&2; exit 1; }
  python3 -m zipfile -e "$w" "$WORK/stage"
done

D=$WORK/stage/flashinfer/data
[ -d "$D/csrc" ] || { echo "pack_flashinfer: $D/csrc not found (wheel layout changed?)" >&2; exit 1; }
# Kernel sources: keep batch decode, batch prefill (fa2 and sm90) and the top-level headers.
find "$D/csrc" -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +
find "$D/csrc" -maxdepth 1 -type f \( -name '*.cu' -o -name '*.jinja' -o -name '*.cc' -o -name '*.cpp' \) \
  ! -name 'batch_decode.cu' ! -name 'batch_decode_jit_binding.cu' ! -name 'batch_decode_customize_config.jinja' \
  ! -name 'batch_decode_kernel_inst.jinja' ! -name 'batch_prefill*' ! -name 'logging.cc' -delete
find "$D/csrc" -maxdepth 1 -type f \( -name 'cake_*' -o -name 'alphamoe_*' \) -delete
# Header trees: only the include folders the JIT puts on the path.
find "$D/cutlass" -mindepth 1 -maxdepth 1 ! -name include ! -name tools -exec rm -rf {} +
find "$D/cutlass/tools" -mindepth 1 -maxdepth 1 ! -name util -exec rm -rf {} +
find "$D/cutlass/tools/util" -mindepth 1 -maxdepth 1 ! -name include -exec rm -rf {} +
find "$D/cccl" -mindepth 1 -maxdepth 1 ! -name cub ! -name libcudacxx ! -name thrust -exec rm -rf {} +
find "$D/cccl/libcudacxx" -mindepth 1 -maxdepth 1 ! -name include -exec rm -rf {} +
# Prebuilt cubins and AOT modules for other chips, if any came with the wheel.
rm -rf "$D/aot" "$D/cubins"
find "$WORK/stage" -name '__pycache__' -type d -prune -exec rm -rf {} +
printf 'flashinfer-python==%s\napache-tvm-ffi==%s\npacked %s by scripts/pack_flashinfer.sh\n' \
  "$FI_VERSION" "$TVM_FFI_VERSION" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" >"$WORK/stage/FLASHINFER_PACK.txt"

tar -C "$WORK/stage" -cf - . | xz -T0 -6 >"$OUT_FILE.partial"
mv "$OUT_FILE.partial" "$OUT_FILE"
echo "pack_flashinfer: $OUT_FILE $(du -h "$OUT_FILE" | cut -f1) ($(stat -c %s "$OUT_FILE") bytes); unpacked $(du -sh "$WORK/stage" | cut -f1)"
