#!/usr/bin/env bash
# Where one kernel's warps wait, by machine instruction: Nsight Compute's warp-state samples
# (SourceCounters) of one profiled launch per benchmark that FILTER selects, exported as SASS
# with the samples of each stall reason beside every instruction. Complements
# device_ncu_pipes.sh (which unit is busy) and device_full.sh's per-kernel stall totals (why
# warps wait, but not at which instruction: a producer warp's barrier wait and a computing
# warp's look the same there).
#     [TIER=full] bash scripts/device_ncu_source.sh BINARY FILTER [OUT_DIR]   # TIER: the shapes FILTER picks from (default: default); AXES: --schedlab_axes shapes instead
# Writes OUT_DIR/<experiment>/sass-stalls-<UTC stamp>-<commit>-<variant>-<dtype>-<shape>.csv (ncu
# --page source --print-source sass --csv; the commit from .carry/provenance, as the binaries'
# own), which `python -m schedlab_analysis.ncu_source` summarizes by instruction and by region.
# LAUNCH_SKIP (default 0) skips that many decode/prefill launches first (a split plan's decode
# kernel and combine alternate); ncu's log goes to OUT_DIR/ncu_source.log.
set -uo pipefail
source "$(dirname "$0")/bench_names.sh"
source "$(dirname "$0")/ncu_options.sh"
bin=$1 filter=$2 out=${3:-${OUT:-/tmp/out}/sass_stalls}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
commit=$(cut -d' ' -f1 .carry/provenance 2>/dev/null || git rev-parse HEAD)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
rep=$(mktemp -d)
tier=(--schedlab_tier="${TIER:-default}")
[ -n "${AXES:-}" ] && tier=(--schedlab_axes="$AXES")  # shapes of the user's instead of a tier's
for t in $("$bin" "${tier[@]}" --benchmark_list_tests --benchmark_filter="$filter" 2>/dev/null | grep '/manual_time$'); do
  tag=${t%/manual_time}
  IFS=/ read -r experiment variant dtype _ <<<"$tag"
  mkdir -p "$out/$experiment"
  name=sass-stalls-$stamp-${commit:0:10}-$variant-$dtype-$(shape_of "$tag")
  ncu "${NCU_SOURCE[@]}" \
    -k 'regex:hopper_prefill_kernel|flash_prefill_kernel|paged_decode_kernel' \
    --launch-skip "${LAUNCH_SKIP:-0}" --launch-count 1 -f -o "$rep/$name" \
    "$bin" "${tier[@]}" --schedlab_profile_once --benchmark_filter="^$(literal_regex "$t")\$" >>"$out/ncu_source.log" 2>&1
  rc=$?
  if [ -f "$rep/$name.ncu-rep" ]; then
    ncu -i "$rep/$name.ncu-rep" --page source --print-source sass --csv >"$out/$experiment/$name.csv" 2>>"$out/ncu_source.log"
    rc=$?
  fi
  echo "ncu source $tag rc=$rc"
done
rm -rf "$rep"
