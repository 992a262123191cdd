// Candidates of the Hopper prefill family's tile shape, schedule and softmax, timed side by side
// by bench_hopper_prefill_tuning (kernels/hopper_prefill/README.md has the table). Each is the
// family's default policy with the members its name says changed. Those whose verdict was no
// difference or slower on every shape left the bench; their lines stay in the frozen tuning
// table of kernels/hopper_prefill/LOG.md.
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::hopper_prefill_tuning {

using Base = kernels::HopperPrefillPolicy;
using defaults = Base;  // the family default: its kernels are the family's (hopper_prefill.cu)

// O written from the accumulators, as before the staging rows.
struct unstaged_output : Base {
  /* StagedOutput = */ static constexpr bool kStagedOutput = false;
};
// FlashAttention-4's SM90 order at every shape with one P buffer: the PV wait, O's rescale of
// every tile (no threshold) and P's packing in the exponentials' block.
struct rescale_in_block : Base {
  /* RescaleThreshold = */ static constexpr float kRescaleThreshold = 0.f;
  /* RescaleInBlock = */ static constexpr bool kRescaleInBlock = true;
  static constexpr bool pv_wait_in_softmax(int, bool) { return true; }
};
// The same, head dim 64 without the mask's wait tied behind S register 63.
struct rescale_in_block_e63 : rescale_in_block {
  static constexpr int pv_wait_behind_exp(int head_dim, bool causal) { return head_dim <= 64 ? 63 : Base::pv_wait_behind_exp(head_dim, causal); }
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
