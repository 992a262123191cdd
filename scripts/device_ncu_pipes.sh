#!/usr/bin/env bash
# Where one kernel's time goes, by unit: Nsight Compute's SpeedOfLight, ComputeWorkloadAnalysis
# and MemoryWorkloadAnalysis sections (issue slots, the utilization of each pipe: tensor, FMA,
# ALU, the transcendental unit XU that runs exp2, shared-memory wavefronts, L2 and DRAM
# throughput) and the SM clock the kernel ran at, one profiled launch per benchmark that FILTER
# selects, clocks left alone (--clock-control none). Complements device_full.sh's stall
# reasons, which say why warps wait but not which unit is full.
#     [TIER=full] bash scripts/device_ncu_pipes.sh BINARY FILTER [OUT_DIR]   # TIER: the shapes FILTER picks from (default: default); AXES: --schedlab_axes shapes instead
# Writes OUT_DIR/<experiment>/pipes-<UTC stamp>-<commit>-<variant>-<dtype>-<shape>.csv (ncu --page raw
# --csv; the commit from .carry/provenance, as the binaries' own), the layout of
# results/<device>/, where `python -m schedlab_analysis.ncu_pipes` and the README section kind
# `pipes` read them; ncu's log goes to OUT_DIR/ncu_pipes.log.
set -uo pipefail
source "$(dirname "$0")/bench_names.sh"
source "$(dirname "$0")/ncu_options.sh"
bin=$1 filter=$2 out=${3:-${OUT:-/tmp/out}/pipes}
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
commit=$(cut -d' ' -f1 .carry/provenance 2>/dev/null || git rev-parse HEAD)
stamp=$(date -u +%Y%m%dT%H%M%SZ)
tier=(--schedlab_tier="${TIER:-default}")
[ -n "${AXES:-}" ] && tier=(--schedlab_axes="$AXES")  # shapes of the user's instead of a tier's
for t in $("$bin" "${tier[@]}" --benchmark_list_tests --benchmark_filter="$filter" 2>/dev/null | grep '/manual_time$'); do
  tag=${t%/manual_time}
  IFS=/ read -r experiment variant dtype _ <<<"$tag"
  mkdir -p "$out/$experiment"
  ncu "${NCU_PIPES[@]}" -k 'regex:hopper_prefill_kernel|flash_prefill_kernel|paged_decode_kernel' --launch-count 1 \
    --log-file "$out/$experiment/pipes-$stamp-${commit:0:10}-$variant-$dtype-$(shape_of "$tag").csv" \
    "$bin" "${tier[@]}" --schedlab_profile_once --benchmark_filter="^$(literal_regex "$t")\$" >>"$out/ncu_pipes.log" 2>&1
  echo "ncu pipes $tag rc=$?"
done
