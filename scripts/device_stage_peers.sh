#!/usr/bin/env bash
# Stages the peers' packages carried in this device call, on the warm device machine, so that
# a later call of the same lease can run them without carrying them again (one call carries at
# most 64 MiB: FlashAttention-4's two parts and FlashInfer do not fit beside the binaries).
# - .peers/fa4.tar.xz.part-KofN: scripts/device_fa4_stage.sh (complete: /tmp/fa4_site/.fa4_complete);
# - .peers/flashinfer.tar.xz: unpacked to $FI_SITE, default /tmp/fi_site (complete: its .fi_complete);
# - .peers/cudnn_whl/*.whl: NVIDIA's cuDNN frontend (`import cudnn`; the library is torch's),
#   installed to $CUDNN_SITE, default /tmp/cudnn_site (complete: its .cudnn_complete).
# scripts/device_full.sh runs this first, and runs each peer only where its marker is there.
#     bash scripts/device_stage_peers.sh     # e.g. alone, in the call before device_full.sh
set -uo pipefail
cd "$(dirname "$0")/.."
FI_SITE=${FI_SITE:-/tmp/fi_site}
CUDNN_SITE=${CUDNN_SITE:-/tmp/cudnn_site}
rc=0
for p in .peers/fa4.tar.xz.part-*; do
  [ -f "$p" ] || continue
  bash scripts/device_fa4_stage.sh "$p" || rc=1
done
if [ -f .peers/flashinfer.tar.xz ] && [ ! -f "$FI_SITE/.fi_complete" ]; then
  rm -rf "$FI_SITE" && mkdir -p "$FI_SITE"
  if tar -C "$FI_SITE" -xJf .peers/flashinfer.tar.xz; then
    date -u +%FT%TZ >"$FI_SITE/.fi_complete"
    echo "flashinfer stage: $FI_SITE complete"
  else
    echo "flashinfer stage: .peers/flashinfer.tar.xz did not unpack"; rm -rf "$FI_SITE"; rc=1
  fi
fi
if compgen -G ".peers/cudnn_whl/*.whl" >/dev/null && [ ! -f "$CUDNN_SITE/.cudnn_complete" ]; then
  rm -rf "$CUDNN_SITE"
  if python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$CUDNN_SITE" \
       .peers/cudnn_whl/*.whl; then
    date -u +%FT%TZ >"$CUDNN_SITE/.cudnn_complete"
    echo "cudnn stage: $CUDNN_SITE complete"
  else
    echo "cudnn stage: .peers/cudnn_whl did not install"; rm -rf "$CUDNN_SITE"; rc=1
  fi
fi
exit $rc
