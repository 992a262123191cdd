"""Analysis side of schedlab: read results files, parse profiler output, plot, and set
our measurements beside published claims.

Modules (each CLI is ``python -m schedlab_analysis.<tool>``):
  load       results files -> pandas (one row per benchmark record), samples per repetition
  stats      medians, spread, bootstrap confidence intervals, speedups over a baseline
  dataset    everything under a results directory, grouped per experiment
  ncu        Nsight Compute raw CSV -> warp-stall shares; the ncu command line; stall files
  att        rocprofv3 thread-trace stats CSV -> s_waitcnt memory-wait shares
  plots      figures for one experiment (bars, speedup, scaling, roofline, stalls)
  plot_all   CLI: every experiment under a results directory -> PNGs + index.md
  published  CLI: published claims beside our measurements, with a verdict each
"""


from . import load  # noqa: E402,F401  (callable: schedlab_analysis.load("results") -> pandas frame)
