// Candidates of the Hopper prefill family's tile shape, schedule and softmax, timed side by side
// by bench_hopper_prefill_tuning (kernels/hopper_prefill/README.md has the table). Each is the
// family's default policy with the members its name says changed. Those whose verdict was no
// difference or slower on every shape left the bench; their lines stay in the frozen tuning
// table of kernels/hopper_prefill/LOG.md.
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::hopper_prefill_tuning {

using Base = kernels::HopperPrefillPolicy;
using kernels::HopperTile;
using defaults = Base;  // the family default: its kernels are the family's (hopper_prefill.cu)

// The short causal kernels at head dim 128 on one P buffer instead of two: with one, the PV wait
// and P's packing now sit in the exponentials' block (pv_wait_in_softmax), which two buffers
// had given them the room for; one buffer holds a quarter of S's registers fewer.
struct short_causal_p1 : Base {
  /* ShortCausalPBuffers = */ static constexpr int kShortCausalPBuffers = 1;
};
// Head dim 64's row max on four chains and its sum on one (FlashAttention-4's SM90 softmax takes
// the max on four and the sum on two; four chains for both were slower here, LOG.md).
struct d64_max4 : Base {
  static constexpr HopperTile tile(int head_dim, bool causal) {
    HopperTile t = Base::tile(head_dim, causal);
    if (head_dim <= 64) t.max_chains = 4;
    return t;
  }
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
