#!/usr/bin/env bash
# FlashAttention-4's forward under Nsight Compute, as device_ncu_source.sh and
# device_ncu_pipes.sh profile ours: one warmed-up call (analysis/peers/fa4_peers.py --profile,
# between cudaProfilerStart and Stop) per benchmark name, once with the source counters (where
# its warps wait, by SASS instruction, with each instruction's executed count) and once with
# the pipe sections, so that the peer's machine code and units can be read beside ours on the
# same shape. FlashAttention-4 must be staged (scripts/device_stage_peers.sh).
#     bash scripts/device_ncu_fa4.sh OUT_DIR NAME...
# NAME is one of our prefill benchmark names (e.g. prefill_pingpong/pingpong/bf16/seq:8192/
# head_dim:64/causal:0); the files are OUT_DIR/peers_prefill/{sass-stalls,pipes}-<UTC stamp>-
# <commit>-fa4-<dtype>-<shape>.csv, read by `python -m schedlab_analysis.ncu_source` and
# `python -m schedlab_analysis.ncu_pipes`; ncu's log goes to OUT_DIR/ncu_fa4.log.
set -uo pipefail
source "$(dirname "$0")/bench_names.sh"
source "$(dirname "$0")/ncu_options.sh"
out=$1
shift
site=${FA4_SITE:-/tmp/fa4_site}
# The second profile of a shape reuses the first one's compiled kernel from disk.
export FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED=${FLASH_ATTENTION_CUTE_DSL_CACHE_ENABLED:-1}
if [ ! -f "$site/.fa4_complete" ]; then
  echo "device_ncu_fa4: FlashAttention-4 is not staged ($site/.fa4_complete missing)" >&2
  exit 2
fi
mkdir -p "$out/peers_prefill"
commit=$(cut -d' ' -f1 .carry/provenance 2>/dev/null || git rev-parse HEAD)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
rep=$(mktemp -d)
fa4=(python3 analysis/peers/fa4_peers.py --site "$site" --warmup 3 --profile)
for name in "$@"; do
  IFS=/ read -r _ _ dtype _ <<<"$name"
  base=fa4-$dtype-$(shape_of "$name")
  ncu --profile-from-start off "${NCU_SOURCE[@]}" --launch-count 1 -f -o "$rep/$base" "${fa4[@]}" "$name" >>"$out/ncu_fa4.log" 2>&1
  rc=$?
  if [ -f "$rep/$base.ncu-rep" ]; then
    ncu -i "$rep/$base.ncu-rep" --page source --print-source sass --csv \
      >"$out/peers_prefill/sass-stalls-$stamp-${commit:0:10}-$base.csv" 2>>"$out/ncu_fa4.log"
    rc=$?
  fi
  echo "ncu fa4 source $name rc=$rc"
  ncu --profile-from-start off "${NCU_PIPES[@]}" --launch-count 1 --log-file "$out/peers_prefill/pipes-$stamp-${commit:0:10}-$base.csv" \
    "${fa4[@]}" "$name" >>"$out/ncu_fa4.log" 2>&1
  echo "ncu fa4 pipes $name rc=$?"
done
rm -rf "$rep"
