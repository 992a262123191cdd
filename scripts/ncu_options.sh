# Sourced by the profiling scripts (device_ncu_source.sh, device_ncu_pipes.sh, device_ncu_peer.sh):
# the Nsight Compute options of each kind of profile, so that ours and a peer's are taken alike.
# Clocks are left alone (--clock-control none).

# Where the warps wait, by SASS instruction (exported afterwards with --page source).
NCU_SOURCE=(--clock-control none --section SourceCounters --section WarpStateStats --import-source no)
# Which unit is busy: issue slots, each pipe, memory, and the clock the kernel ran at.
NCU_PIPES=(--clock-control none --csv --page raw --print-units base
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
  --metrics sm__cycles_elapsed.avg.per_second,smsp__inst_executed_pipe_xu.sum,smsp__inst_executed.sum)
