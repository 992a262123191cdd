// FlashAttention-3 section 3.1 and seed 004 (nvFuser's warp-specialized persistent kernel:
// a load warpgroup and compute warpgroups with separate loops, registers split 40 / 232 by
// setmaxnreg): a producer warpgroup that only issues bulk copies and gives its registers to
// the consumers, against the same producer keeping the launch's even split, against no
// producer at all (a consumer thread issues each copy when its stage is released).
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::prefill_warp_specialization {

// One CTA per tile at every length in every variant: the family default's short kernels run
// persistent CTAs (a causal one's tile fetcher is a producer warp, which no_ws does not have),
// so with them the short shapes would compare two schedules as well as the producer.
struct ws_realloc : kernels::HopperPrefillPolicy {
  /* WarpSpecialized = */ static constexpr bool kWarpSpecialized = true;
  /* RegisterRealloc = */ static constexpr bool kRegisterRealloc = true;
  static constexpr int short_keys(bool) { return 0; }
};
struct ws_even_regs : kernels::HopperPrefillPolicy {
  /* WarpSpecialized = */ static constexpr bool kWarpSpecialized = true;
  /* RegisterRealloc = */ static constexpr bool kRegisterRealloc = false;
  static constexpr int short_keys(bool) { return 0; }
};
struct no_ws : kernels::HopperPrefillPolicy {
  /* WarpSpecialized = */ static constexpr bool kWarpSpecialized = false;
  /* RegisterRealloc = */ static constexpr bool kRegisterRealloc = false;
};

}  // namespace schedlab::experiments::prefill_warp_specialization
