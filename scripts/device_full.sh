#!/usr/bin/env bash
# One device call: GPU tests, the sweep of every experiment (scripts/sweep.py: TIER, default
# "default", over every visible GPU, the SDPA peers where torch is installed), and Nsight
# Compute stalls for each decode variant at the default shape. Binaries come prebuilt in
# .carry/bin (built on the development machine with the same nvcc), Google Benchmark's library
# in .carry/lib. Everything lands in $OUT/results.tgz (results/<device>/<experiment>/... and the
# sweep summary results/<device>/sweeps/...) plus logs. One SCHEDLAB_RUN_ID for the whole call.
# PHASE=bench runs tests and the sweep only, PHASE=ncu the profiles only (each fits one call);
# PHASE=tests the GPU tests and the sanitizers only, PHASE=sanitize the sanitizers only
# (scripts/device_sanitize.sh: memcheck, racecheck and synccheck on every family's
# `*ForSanitizer*` tests; a family with none fails the call), PHASE=seeds the seed sweep of the
# decode row-tile gates only (schedlab_gpu_tests_decode --seed_sweep, SEEDS seeds, default 200, into
# results/<device>/seed_sweep/; SEED_SWEEP_ARGS adds its flags). The call exits 1 when a
# sanitizer run was not clean or left out, or the seed sweep saw a gate fail.
# Other knobs: BENCHES (a glob of binaries), FILTER (--benchmark_filter), REPS / MIN_TIME
# (override the tier's repetitions), PEERS (auto|yes|no), RUN_TESTS=0, RUN_SANITIZER=0, BUDGET_S (default 520),
# NCU_S (the part of the budget kept for the ncu phase when PHASE=all, default 150), FI_S / FA4_S
# (the parts kept for the FlashInfer and FlashAttention-4 peers when their packages came, 180 / 200),
# FI=0 / FA4=0 (leave that peer out of this call though its package is staged), NCU_BENCHES (a glob
# of the binaries the ncu phase profiles; a token-balanced decode run is one launch, no combine).
# LEAD_US: microseconds the device idles before each timed launch, ours
# (--schedlab_launch_lead_us) and every peer's (SCHEDLAB_LAUNCH_LEAD_US, at least the peer's own
# spin: FlashAttention-4's 3000), so that ours and the peers' run at the same duty cycle; unset:
# ours back to back after the flush, each peer behind its own spin.
# An older build in .carry/old (pack_carry.sh's OLDER_BUILD) is timed before and after the sweep
# (OLDER_FILTER: a --benchmark_filter for its binaries, e.g. the variants both builds have).
set -uo pipefail
source "$(dirname "$0")/bench_names.sh"
lead=()
if [ -n "${LEAD_US:-}" ]; then
  lead=(--schedlab_launch_lead_us="$LEAD_US")
  export SCHEDLAB_LAUNCH_LEAD_US=$LEAD_US
fi
export LD_LIBRARY_PATH=$PWD/.carry/lib:${LD_LIBRARY_PATH:-}
# The commit the carried binaries and this working tree are (scripts/pack_carry.sh): the
# device machine's .git can lag behind the tree it was sent.
[ -f .carry/provenance ] && read -r SCHEDLAB_COMMIT SCHEDLAB_DIRTY <.carry/provenance && export SCHEDLAB_COMMIT SCHEDLAB_DIRTY
export SCHEDLAB_RUN_ID=${SCHEDLAB_RUN_ID:-$(date -u +%Y%m%dT%H%M%SZ)-$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')}
B=.carry/bin
OUT=${OUT:-/tmp/out}
R=$OUT/stage/results
mkdir -p "$R" "$OUT/logs"
smi() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader >>"$OUT/logs/smi.txt"; }
smi
echo "run $SCHEDLAB_RUN_ID"
PHASE=${PHASE:-all}
case $PHASE in
  all | bench | ncu | tests | sanitize | seeds) ;;
  *) echo "device_full: unknown PHASE=$PHASE (all, bench, ncu, tests, sanitize, seeds)" >&2; exit 2 ;;
esac
in_phase() { local p; for p in "$@"; do [ "$PHASE" = "$p" ] && return 0; done; return 1; }
status=0
# Whatever happens, the archive is written: the sweep gets what is left of BUDGET_S
# (a benchmark stopped early leaves only its .partial file, never a results file).
t0=$(date +%s)
left() { echo $(( ${BUDGET_S:-520} - ($(date +%s) - t0) )); }
# The peers' packages carried in this call (FlashAttention-4's parts, scripts/pack_fa4.sh;
# FlashInfer, scripts/pack_flashinfer.sh) join those staged by earlier calls on this warm
# machine (scripts/device_stage_peers.sh), first, whatever the phase, so a carried part is never
# lost to a call that runs out of time; each peer runs only once its package is complete.
bash scripts/device_stage_peers.sh
fa4_ready=0 fi_ready=0 cudnn_ready=0
if [ "${PEERS:-auto}" != no ]; then
  [ "${FA4:-1}" != 0 ] && [ -f /tmp/fa4_site/.fa4_complete ] && fa4_ready=1
  [ "${FI:-1}" != 0 ] && [ -f /tmp/fi_site/.fi_complete ] && fi_ready=1
  [ "${CUDNN:-1}" != 0 ] && [ -f /tmp/cudnn_site/.cudnn_complete ] && cudnn_ready=1
fi
if in_phase all bench tests && [ "${RUN_TESTS:-1}" != 0 ]; then
  # GPU tests: the gtest XML is the record (each test's seed is its `seed` property; the log
  # has the line that replays it). One binary per family
  # (schedlab_gpu_tests_decode, _prefill, _hopper_prefill): whichever came in .carry/bin.
  for t in $B/schedlab_gpu_tests_*; do
    [ -x "$t" ] || continue
    tn=$(basename "$t")
    # A hung kernel must not take the whole call: rc 124 marks a test binary stopped by the limit.
    timeout "${TEST_TIMEOUT_S:-180}" $t --gtest_output=xml:"$OUT/logs/$tn.xml" >"$OUT/logs/$tn.txt" 2>&1
    echo "$tn rc=$? $(grep -E '^\[  (PASSED|FAILED)' "$OUT/logs/$tn.txt" | tr '\n' ' ')"
  done
fi
if { in_phase sanitize || { in_phase all bench tests && [ "${RUN_TESTS:-1}" != 0 ]; }; } && [ "${RUN_SANITIZER:-1}" != 0 ]; then
  SANITIZER_DEADLINE=$(( t0 + ${BUDGET_S:-520} )) bash scripts/device_sanitize.sh "$B" "$OUT/logs" \
    2>&1 | tee "$OUT/logs/sanitizers.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || status=1
  echo "sanitizers rc=$rc $(( $(date +%s) - t0 ))s"
fi
# The seed sweep of the decode row-tile bodies' accuracy gate (kernels/tests/seed_sweep_decode.cpp):
# it stops starting seeds when its budget is spent and says how many ran.
if in_phase seeds; then
  if [ -x $B/schedlab_gpu_tests_decode ]; then
    timeout "$(( $(left) - 10 ))" $B/schedlab_gpu_tests_decode --seed_sweep --seeds="${SEEDS:-200}" \
      --budget-s="$(( $(left) - 60 ))" --results-root="$R" ${SEED_SWEEP_ARGS:-} 2>&1 | tee "$OUT/logs/seed_sweep.txt"
    rc=${PIPESTATUS[0]}
    [ "$rc" = 0 ] || status=1
    echo "seed sweep rc=$rc $(( $(date +%s) - t0 ))s"
  else
    echo "seed sweep: FAILED: no schedlab_gpu_tests_decode in $B (scripts/pack_carry.sh packs it)"
    status=1
  fi
fi
if in_phase all bench; then
# An older build (.carry/old, scripts/pack_carry.sh with OLDER_BUILD): each of its benchmarks
# runs once before and once after the sweep, at the sweep's tier, into
# results/<device>/builds/<experiment>/ (kept out of the call's own run by the analysis; the
# readme's `builds` section compares one variant of the two builds). Before and after, so that
# an order effect shows as the older build's change between its passes.
older_pass() {
  [ -d .carry/old ] || return 0
  for b in .carry/old/bench_*; do
    [ -x "$b" ] || continue
    timeout 150 "$b" --schedlab_tier="${TIER:-default}" --schedlab_results_root="$OUT/stage_old" "${lead[@]}" \
      ${OLDER_FILTER:+--benchmark_filter="$OLDER_FILTER"} >"$OUT/logs/older_$1_$(basename "$b").txt" 2>&1
    echo "older build pass $1 $(basename "$b") rc=$?"
  done
}
older_pass 1
extra=("${lead[@]}")
[ -n "${REPS:-}" ] && extra+=(--benchmark_repetitions="$REPS")
[ -n "${MIN_TIME:-}" ] && extra+=(--benchmark_min_time="$MIN_TIME")
[ -n "${FILTER:-}" ] && extra+=(--benchmark_filter="$FILTER")
# The committed results/ hold the previous sweep summaries: the time-left estimate and the
# longest-first order come from them. With the ncu phase to follow, NCU_S (default 150) of the
# budget is kept for it.
reserve=0
[ "$PHASE" = all ] && command -v ncu >/dev/null && reserve=${NCU_S:-150}
ncu_keep=$reserve
# The FlashInfer decode peer after the sweep keeps FI_S (default 180) when its package came along.
[ "$fi_ready" = 1 ] && reserve=$(( reserve + ${FI_S:-180} ))
# cuDNN's paged decode and fp8 forward after it keep CUDNN_S (default 120) when its frontend came along.
cudnn_keep=0
[ "$cudnn_ready" = 1 ] && cudnn_keep=${CUDNN_S:-120} && reserve=$(( reserve + cudnn_keep ))
# The FlashAttention-4 prefill peer after it keeps FA4_S (default 200) when FA4 is staged.
fa4_keep=0
[ "$fa4_ready" = 1 ] && fa4_keep=${FA4_S:-200} && reserve=$(( reserve + fa4_keep ))
[ $(( $(left) - reserve )) -ge 120 ] || echo "device_full: WARNING: $(( $(left) - reserve )) s left for the sweep beside" \
  "$reserve s kept for ncu and the peers: raise BUDGET_S, or leave a peer out (FI=0 / FA4=0) or the profiles (PHASE=bench)"
python3 scripts/sweep.py --build "$B" --results "$R" --durations-from results --tier "${TIER:-default}" \
  --peers "${PEERS:-auto}" --budget-s "$(( $(left) - reserve ))" --log-dir "$OUT/logs/sweep" ${BENCHES:+--only "$BENCHES"} \
  -- "${extra[@]}" 2>&1 | tee "$OUT/logs/sweep.txt"
echo "sweep rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 ))s"
if [ -d .carry/old ]; then
  older_pass 2
  for d in "$OUT"/stage_old/*/; do  # <device>/<experiment>/ -> results/<device>/builds/<experiment>/
    [ -d "$d" ] || continue
    mkdir -p "$R/$(basename "$d")/builds" && cp -r "$d"/. "$R/$(basename "$d")/builds/"
  done
  rm -rf "$OUT/stage_old"
fi
# FlashInfer's paged decode (analysis/peers/flashinfer_peers.py) on the decode configurations
# this sweep wrote, same SCHEDLAB_RUN_ID; the package is .peers/flashinfer.tar.xz, staged in /tmp/fi_site
# (scripts/pack_flashinfer.sh; carry .peers). Its modules are compiled on first use.
if [ "${PEERS:-auto}" != no ]; then
  if [ "$fi_ready" = 1 ]; then
    fr=(--quick); ls -d "$R"/*/decode_* >/dev/null 2>&1 && fr=(--from-results "$R")
    # Hard stop at what is left before the ncu phase; no configuration starts in its last minute
    # (its file is rewritten after each configuration, so a stop keeps the finished ones).
    fi_s=$(( $(left) - ncu_keep - fa4_keep - cudnn_keep - 20 )); [ "$fi_s" -gt 30 ] || fi_s=30
    PYTHONPATH=/tmp/fi_site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 timeout "$fi_s" python3 \
      analysis/peers/flashinfer_peers.py --results-root "$R" "${fr[@]}" --budget-s "$(( fi_s > 120 ? fi_s - 60 : fi_s / 2 ))" \
      2>&1 | tee "$OUT/logs/flashinfer_peers.txt"
    echo "flashinfer peers rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 ))s"
  else
    echo "flashinfer peers: skipped (not staged: run scripts/pack_flashinfer.sh and carry .peers/flashinfer.tar.xz in this call or an earlier one of the same lease)"
  fi
fi
# cuDNN (analysis/peers/cudnn_peers.py, cudnn_prefill_peers.py) on the same configurations, same
# SCHEDLAB_RUN_ID; the frontend's wheel is .peers/cudnn_whl, installed in /tmp/cudnn_site.
if [ "${PEERS:-auto}" != no ]; then
  if [ "$cudnn_ready" = 1 ]; then
    # Its paged decode on this call's decode configurations, its fp8 forward on the fp8 prefill
    # ones (analysis/peers/cudnn_prefill_peers.py); with neither in the call, the quick sets.
    has_decode=0 has_prefill=0
    compgen -G "$R/*/decode_*" >/dev/null && has_decode=1
    { compgen -G "$R/*/prefill_*" || compgen -G "$R/*/hopper_prefill_*"; } >/dev/null && has_prefill=1
    for part in decode prefill; do
      script=analysis/peers/cudnn_peers.py fr=(--from-results "$R") has=$has_decode
      [ "$part" = prefill ] && script=analysis/peers/cudnn_prefill_peers.py has=$has_prefill
      if [ "$has_decode$has_prefill" = 00 ]; then fr=(--quick); elif [ "$has" = 0 ]; then continue; fi
      cd_s=$(( $(left) - ncu_keep - fa4_keep - 20 )); [ "$cd_s" -gt 30 ] || cd_s=30
      PYTHONPATH=/tmp/cudnn_site${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 timeout "$cd_s" python3 "$script" \
        --results-root "$R" "${fr[@]}" --budget-s "$(( cd_s > 120 ? cd_s - 60 : cd_s / 2 ))" \
        2>&1 | tee "$OUT/logs/cudnn_peers_$part.txt"
      echo "cudnn peers ($part) rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 ))s"
    done
  else
    echo "cudnn peers: skipped (not staged: carry .peers with .peers/cudnn_whl/*.whl, DEVELOPING.md)"
  fi
fi
# FlashAttention-4's forward (analysis/peers/fa4_peers.py) on the prefill configurations this
# sweep wrote, same SCHEDLAB_RUN_ID; each kernel is compiled on first use (context first_call_s).
if [ "${PEERS:-auto}" != no ]; then
  if [ "$fa4_ready" = 1 ]; then
    fr=(--quick); { compgen -G "$R/*/prefill_*" || compgen -G "$R/*/hopper_prefill_*"; } >/dev/null && fr=(--from-results "$R")
    # Hard stop at what is left before the ncu phase; no configuration starts in its last minute.
    # (A first configuration of a kernel includes its compile: a minute is kept when there is room.)
    fa_s=$(( $(left) - ncu_keep - 20 )); [ "$fa_s" -gt 30 ] || fa_s=30
    PYTHONUNBUFFERED=1 timeout "$fa_s" python3 analysis/peers/fa4_peers.py --site /tmp/fa4_site \
      --results-root "$R" "${fr[@]}" --budget-s "$(( fa_s > 120 ? fa_s - 60 : fa_s / 2 ))" \
      2>&1 | tee "$OUT/logs/fa4_peers.txt"
    echo "fa4 peers rc=${PIPESTATUS[0]} $(( $(date +%s) - t0 ))s"
  else
    echo "fa4 peers: skipped (FlashAttention-4 not staged: /tmp/fa4_site/.fa4_complete missing; run scripts/pack_fa4.sh" \
      "and carry every .peers/fa4.tar.xz.part-KofN in consecutive calls, DEVELOPING.md, FlashAttention-4 on the GPU machine)"
  fi
fi
fi
# Stalls: Nsight Compute, one profiled run per variant (the accuracy run is skipped); the
# kernels' time is compared with the harness time by scripts/ingest_device_results.py.
if in_phase all ncu && command -v ncu >/dev/null; then
  metrics=gpu__time_duration.sum,smsp__average_warp_latency_per_inst_issued.ratio
  for r in long_scoreboard short_scoreboard lg_throttle mio_throttle barrier wait math_pipe_throttle \
           not_selected selected dispatch_stall drain imc_miss branch_resolving no_instruction sleeping membar \
           tex_throttle misc gmma; do
    metrics+=",smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
  done
  mkdir -p "$R/ncu"
  # One profiled run per variant at the family's default shape. A decode run at batch 16,
  # context 16k is two launches (the kernel, then the split combine); prefill is one. A decode
  # policy without a combine there (decode_tile_schedule/wide) is one: profile it on its own,
  # NCU_DECODE selecting it and NCU_DECODE_LAUNCHES=1. The
  # CSV is named after the benchmark ('/' -> '+') so the ingest step can pair it.
  profile() {  # binary, shape filter, kernel regex, launches per run
    local b=$1 filter=$2 regex=$3 n=$4
    for t in $("$b" --benchmark_list_tests --benchmark_filter="$filter" 2>/dev/null | grep '/manual_time$'); do
      local tag=${t%/manual_time}
      ncu --clock-control none --csv --page raw --print-units base --metrics "$metrics" -k "regex:$regex" \
        --launch-skip "$n" --launch-count "$n" --log-file "$R/ncu/${tag//\//+}.csv" \
        "$b" --schedlab_profile_once --benchmark_filter="^$(literal_regex "$t")\$" >>"$OUT/logs/ncu.txt" 2>&1
      echo "ncu $tag rc=$?"
      # Timing pass: only gpu__time_duration (one replay pass), TIME_RUNS runs; the ingest
      # step compares the median run with the harness's median.
      mkdir -p "$R/ncu_time"
      ncu --clock-control none --csv --page raw --print-units base --metrics gpu__time_duration.sum -k "regex:$regex" \
        --launch-skip "$n" --launch-count $((n * ${TIME_RUNS:-5})) --log-file "$R/ncu_time/${tag//\//+}.csv" \
        "$b" --schedlab_profile_launches="${TIME_RUNS:-5}" --benchmark_filter="^$(literal_regex "$t")\$" >>"$OUT/logs/ncu.txt" 2>&1
    done
  }
  for b in $B/bench_decode_*; do
    case $(basename "$b") in ${NCU_BENCHES:-*}) ;; *) continue ;; esac
    [ "$(left)" -gt 30 ] || break
    profile "$b" "${NCU_DECODE:-(bf16|fp8_e4m3)/batch:16/context:16384/page:16}" 'paged_decode_kernel|decode_combine_kernel' "${NCU_DECODE_LAUNCHES:-2}"
  done
  for b in $B/bench_prefill_*; do
    case $(basename "$b") in ${NCU_BENCHES:-*}) ;; *) continue ;; esac
    [ "$(left)" -gt 30 ] || break
    profile "$b" "${NCU_PREFILL:-bf16/seq:8192/head_dim:128/causal:(0|1)}" 'flash_prefill_kernel|hopper_prefill_kernel' 1
  done
fi
# In-kernel probes: a separate build (.carry/probes) at the ncu shape; its timings are
# perturbed, so its results stay out of results/ and only the probe records are kept.
if in_phase all ncu && [ -d .carry/probes ]; then
  for b in .carry/probes/bench_*; do
    case $b in *decode*) f=${NCU_DECODE:-(bf16|fp8_e4m3)/batch:16/context:16384/page:16} ;;
                *) f=${NCU_PREFILL:-bf16/seq:8192/head_dim:128/causal:(0|1)} ;; esac
    "$b" --schedlab_results_root="$OUT/stage/probe_runs" --benchmark_min_time=0.02 --benchmark_filter="$f" \
      >"$OUT/logs/probes_$(basename "$b").txt" 2>&1
    echo "probes $(basename "$b") rc=$?"
  done
fi
smi
# A second invocation in the same device call must not overwrite the first one's archive.
tgz=$OUT/results.tgz
[ -e "$tgz" ] && tgz=$OUT/results-$(date +%s).tgz
tar -C "$OUT/stage" -czf "$tgz" . && rm -rf "$OUT/stage"
ls -la "$OUT"
exit $status
