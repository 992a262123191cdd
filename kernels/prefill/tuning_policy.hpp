// Tile-shape and build-flag candidates of the flash prefill kernel, timed side by side by
// bench_prefill_tuning (not an experiment: it picks the PrefillPolicy defaults).
// The *_ftz variants are instantiated in a translation unit built with -ftz=true
// (tuning_ftz.cu), so exp2f compiles to a bare MUFU.EX2 without the denormal fix-up.
#pragma once
#include "kernels/prefill/prefill_policy.hpp"

namespace schedlab::experiments::prefill_tuning {

// The PrefillPolicy defaults these candidates were first measured against (4 warps x 16
// rows, 64-key double-buffered tiles, Q in registers, separate K/V fragments, O always
// rescaled), spelled out so each name keeps meaning the configuration it was timed as.
struct first_defaults : kernels::PrefillPolicy {
  /* Warps = */ static constexpr int kWarps = 4;
  /* WarpRows = */ static constexpr int kWarpRows = 16;
  /* QInRegisters = */ static constexpr bool kQInRegisters = true;
  /* QkUnroll = */ static constexpr int kQkUnroll = 1;
  /* BlockN = */ static constexpr int kBlockN = 64;
  /* KvBuffers = */ static constexpr int kKvBuffers = 2;
  /* KvFragments = */ static constexpr kernels::KvFragments kKvFragments = kernels::KvFragments::Separate;
  /* RescaleThreshold = */ static constexpr float kRescaleThreshold = 0.f;
};

// The first default: 8 warps of 16 rows, built with the project's flags.
struct w8_n64 : first_defaults {
  /* Warps = */ static constexpr int kWarps = 8;
};
struct w4_n64_ftz : first_defaults {
  /* Warps = */ static constexpr int kWarps = 4;
};
// Wider K/V tiles: the per-tile costs (barrier, copies, max reductions, O rescale) spread
// over more keys. 96 keys double-buffered still fit two CTAs per SM (112 KB each); 128 keys
// only with FA2's single K and V buffers.
struct w4_n96_ftz : w4_n64_ftz {
  /* BlockN = */ static constexpr int kBlockN = 96;
};
struct w4_n96_skip_ftz : w4_n96_ftz {
  /* SkipUnitRescale = */ static constexpr bool kSkipUnitRescale = true;
};
struct w4_n128_single_ftz : w4_n64_ftz {
  /* BlockN = */ static constexpr int kBlockN = 128;
  /* KvBuffers = */ static constexpr int kKvBuffers = 1;
};
// 32 rows per warp again, after the one-XOR fragment addressing freed ~20 registers, with K
// and V fragments in one union (V is loaded only after the last QK op): ptxas fits N=64 in
// 255 registers with an 8-byte spill, N=32 in 232 without. Each K/V fragment now feeds two
// m16 tiles, so shared-memory reads per matrix op halve (kernels/prefill/LOG.md).
struct w4_r32_union_ftz : first_defaults {
  /* Warps = */ static constexpr int kWarps = 4;
  /* WarpRows = */ static constexpr int kWarpRows = 32;
  /* QInRegisters = */ static constexpr bool kQInRegisters = false;
  /* KvFragments = */ static constexpr kernels::KvFragments kKvFragments = kernels::KvFragments::Union;
};
// QK k16 steps unrolled (the loop of K and Q fragment loads; 1 by default with Q in shared
// memory): lets the compiler issue the next step's ldmatrix before this step's matrix ops,
// as FA2 does, for a 16-byte spill.
struct w4_r32_union_u2_ftz : w4_r32_union_ftz {
  /* QkUnroll = */ static constexpr int kQkUnroll = 2;
};
struct w4_r32_union_u8_ftz : w4_r32_union_ftz {
  /* QkUnroll = */ static constexpr int kQkUnroll = 8;
};
// FA4's conditional rescaling on top: O *= corr only when some row's max grew by more than
// 2^8 (random inputs: almost only in the first tiles), a warp-uniform branch.
struct w4_r32_union_u2_thr_ftz : w4_r32_union_u2_ftz {
  /* RescaleThreshold = */ static constexpr float kRescaleThreshold = 8.f;
};
struct w4_r32_union_u8_thr_ftz : w4_r32_union_u2_thr_ftz {
  /* QkUnroll = */ static constexpr int kQkUnroll = 8;
};
// 48-key tiles: S needs 48 registers instead of 64 (no spill), for 33% more per-tile work.
struct w4_r32_n48_u2_thr_ftz : w4_r32_union_u2_thr_ftz {
  /* BlockN = */ static constexpr int kBlockN = 48;
};
struct w4_r32_n48_u8_thr_ftz : w4_r32_n48_u2_thr_ftz {
  /* QkUnroll = */ static constexpr int kQkUnroll = 8;
};
// The earlier best (16-row warps, 128-key single buffer) with the thresholded rescale.
struct w4_n128_single_thr_ftz : w4_n128_single_ftz {
  /* RescaleThreshold = */ static constexpr float kRescaleThreshold = 8.f;
};
// The same policies built with the project's own flags (tuning.cu: no -ftz=true).
struct w4_r32_union_u2_thr : w4_r32_union_u2_thr_ftz {};
struct w4_r32_n48_u8_thr : w4_r32_n48_u8_thr_ftz {};
struct w4_r32_union_n32_ftz : w4_r32_union_ftz {
  /* BlockN = */ static constexpr int kBlockN = 32;
};
// 8 warps of 32 rows: one 256-row CTA per SM; each K/V tile copied to shared memory once
// feeds twice the rows.
struct w8_r32_union_ftz : w4_r32_union_ftz {
  /* Warps = */ static constexpr int kWarps = 8;
};
struct w8_r32_union_n32_ftz : w8_r32_union_ftz {
  /* BlockN = */ static constexpr int kBlockN = 32;
};
// Not in the current bench (kept so earlier results files name real policies): they lost
// to w4_n64_ftz / w4_pipe_ftz at head dim 128 (see kernels/prefill/LOG.md).
// 32 rows per warp: each K/V fragment feeds two m16 tiles (half the ldmatrix traffic per
// flop); Q re-read from shared memory per k16 step (FA2's layout at head dim 128).
struct w4_r32_qs_ftz : first_defaults {
  /* Warps = */ static constexpr int kWarps = 4;
  /* WarpRows = */ static constexpr int kWarpRows = 32;
  /* QInRegisters = */ static constexpr bool kQInRegisters = false;
};
struct w4_r32_qs_n32_ftz : w4_r32_qs_ftz {
  /* BlockN = */ static constexpr int kBlockN = 32;
};
struct w8_r32_qs_n32_ftz : w4_r32_qs_n32_ftz {
  /* Warps = */ static constexpr int kWarps = 8;
};
// QK of tile j+1 issued before the softmax of tile j (three K/V buffers).
struct w4_pipe_ftz : first_defaults {
  /* Warps = */ static constexpr int kWarps = 4;
  /* KvBuffers = */ static constexpr int kKvBuffers = 3;
  /* PipelineQk = */ static constexpr bool kPipelineQk = true;
};
struct w4_pipe_skip_ftz : w4_pipe_ftz {
  /* SkipUnitRescale = */ static constexpr bool kSkipUnitRescale = true;
};
struct w4_pipe_qs_ftz : w4_pipe_ftz {
  /* QInRegisters = */ static constexpr bool kQInRegisters = false;
};
struct w8_pipe_qs_ftz : w4_pipe_qs_ftz {
  /* Warps = */ static constexpr int kWarps = 8;
};

}  // namespace schedlab::experiments::prefill_tuning
