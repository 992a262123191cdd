// The AMD realization of ping-pong on the register-tile prefill family: HipKittens' 8-wave
// ping-pong (Hu et al. 2025, arXiv 2511.08083), two groups of four waves one phase apart, so
// one group's matrix ops overlap the other's copies and softmax on every SIMD, against the
// same eight waves in step. Both share one tile shape, so only the wave schedule differs.
#pragma once
#include "kernels/prefill/prefill_policy.hpp"

namespace schedlab::experiments::prefill_pingpong {

// Eight waves of 16 query rows (128 rows per workgroup, one wave of each group per SIMD) and
// 32-key K/V tiles in two buffers: Q 32 KiB + K/V 32 KiB = 64 KiB of LDS at head dim 128,
// gfx942's whole workgroup limit. Q fragments stay in registers (16 VGPRs at 16 rows).
struct eight_waves : kernels::PrefillPolicy {
  /* Warps = */ static constexpr int kWarps = 8;
  /* WarpRows = */ static constexpr int kWarpRows = 16;
  /* QInRegisters = */ static constexpr bool kQInRegisters = true;
  /* BlockN = */ static constexpr int kBlockN = 32;
  /* KvBuffers = */ static constexpr int kKvBuffers = 2;
};

struct ping_pong_8wave : eight_waves {
  /* WaveSchedule = */ static constexpr kernels::WaveSchedule kWaveSchedule = kernels::WaveSchedule::ping_pong_8wave;
};
struct plain_8wave : eight_waves {
  /* WaveSchedule = */ static constexpr kernels::WaveSchedule kWaveSchedule = kernels::WaveSchedule::plain;
};

}  // namespace schedlab::experiments::prefill_pingpong
