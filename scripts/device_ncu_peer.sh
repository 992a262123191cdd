#!/usr/bin/env bash
# A peer's prefill forward under Nsight Compute, as device_ncu_source.sh and device_ncu_pipes.sh
# profile ours: one warmed-up call (the peer script's --profile, between cudaProfilerStart and
# Stop) per benchmark name, once with the source counters (where its warps wait, by SASS
# instruction, with each instruction's executed count) and once with the pipe sections, so that
# the peer's machine code and units can be read beside ours on the same shape. PEER picks it:
#   fa4    FlashAttention-4 (analysis/peers/fa4_peers.py; staged in $FA4_SITE, /tmp/fa4_site);
#   cudnn  cuDNN's graph API (analysis/peers/cudnn_prefill_peers.py: fp8 shapes and 16-bit ragged
#          batches; the frontend staged in $CUDNN_SITE, /tmp/cudnn_site);
#   sdpa_cudnn, sdpa_flash  PyTorch SDPA on that backend (analysis/peers/sdpa_peers.py: bf16 in the
#          FA3 setting; torch is the machine's own).
# The first two are staged by scripts/device_stage_peers.sh.
#     [PEER=fa4|cudnn|sdpa_cudnn|sdpa_flash] bash scripts/device_ncu_peer.sh OUT_DIR NAME...
# NAME is one of our prefill benchmark names (e.g. prefill_pingpong/pingpong/bf16/seq:8192/
# head_dim:64/causal:0); the files are OUT_DIR/peers_prefill/{sass-stalls,pipes}-<UTC stamp>-
# <commit>-<peer>-<dtype>-<shape>.csv, read by `python -m schedlab_analysis.ncu_source` and
# `python -m schedlab_analysis.ncu_pipes`; ncu's log goes to OUT_DIR/ncu_<peer>.log.
set -uo pipefail
source "$(dirname "$0")/bench_names.sh"
source "$(dirname "$0")/ncu_options.sh"
out=$1
shift
peer=${PEER:-fa4}
case $peer in
  fa4)
    site=${FA4_SITE:-/tmp/fa4_site} marker=.fa4_complete what=FlashAttention-4
    # The second profile of a shape reuses the first one's compiled kernel from disk.
    export FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=${FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED:-1}
    run=(python3 analysis/peers/fa4_peers.py --site "$site" --warmup 3 --profile) ;;
  cudnn)
    site=${CUDNN_SITE:-/tmp/cudnn_site} marker=.cudnn_complete what="the cuDNN frontend"
    export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
    run=(python3 analysis/peers/cudnn_prefill_peers.py --warmup 3 --profile) ;;
  sdpa_cudnn | sdpa_flash)
    site="" marker=""
    run=(python3 analysis/peers/sdpa_peers.py --warmup 3 --backend "$peer" --profile) ;;
  *)
    echo "device_ncu_peer: PEER=$peer: not a peer this script profiles (fa4, cudnn, sdpa_cudnn, sdpa_flash)" >&2
    exit 2 ;;
esac
if [ -n "$site" ] && [ ! -f "$site/$marker" ]; then
  echo "device_ncu_peer: $what is not staged ($site/$marker missing)" >&2
  exit 2
fi
mkdir -p "$out/peers_prefill"
commit=$(cut -d' ' -f1 .carry/provenance 2>/dev/null || git rev-parse HEAD)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
rep=$(mktemp -d)
for name in "$@"; do
  IFS=/ read -r _ _ dtype _ <<<"$name"
  base=$peer-$dtype-$(shape_of "$name")
  ncu --profile-from-start off "${NCU_SOURCE[@]}" --launch-count 1 -f -o "$rep/$base" "${run[@]}" "$name" >>"$out/ncu_$peer.log" 2>&1
  rc=$?
  if [ -f "$rep/$base.ncu-rep" ]; then
    ncu -i "$rep/$base.ncu-rep" --page source --print-source sass --csv \
      >"$out/peers_prefill/sass-stalls-$stamp-${commit:0:10}-$base.csv" 2>>"$out/ncu_$peer.log"
    rc=$?
  fi
  echo "ncu $peer source $name rc=$rc"
  ncu --profile-from-start off "${NCU_PIPES[@]}" --launch-count 1 --log-file "$out/peers_prefill/pipes-$stamp-${commit:0:10}-$base.csv" \
    "${run[@]}" "$name" >>"$out/ncu_$peer.log" 2>&1
  echo "ncu $peer pipes $name rc=$?"
done
rm -rf "$rep"
