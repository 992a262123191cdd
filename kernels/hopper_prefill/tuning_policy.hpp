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

// Head dim 64 without the mask on two loops (mask_loops: the open key tiles in a loop with no
// test of the mask's bound), the PV wait in the exponentials' block behind S register 63 at
// every length: ptxas then waits after the maxima and a few exponentials and packs P among
// the rest, as FlashAttention-4's loop does.
struct d64_open : Base {
  static constexpr bool mask_loops(int head_dim, bool causal) { return head_dim <= 64 && !causal; }
  static constexpr bool pv_wait_in_softmax(int head_dim, bool causal) { return head_dim <= 64 || Base::pv_wait_in_softmax(head_dim, causal); }
  static constexpr int pv_wait_behind_exp(int head_dim, bool causal) { return head_dim <= 64 ? 63 : Base::pv_wait_behind_exp(head_dim, causal); }
  static constexpr int pv_wait_from_keys(int head_dim, bool causal) { return head_dim <= 64 ? 0 : Base::pv_wait_from_keys(head_dim, causal); }
};
// The same with the row max and sum on two chains a row there (FlashAttention-4 takes the max
// on four).
struct d64_open_chains2 : d64_open {
  static constexpr kernels::HopperTile tile(int head_dim, bool causal) {
    return head_dim <= 64 && !causal ? kernels::HopperTile{3, 128, 160, 2} : Base::tile(head_dim, causal);
  }
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
