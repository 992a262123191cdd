// Candidates of the Hopper prefill family's tile shape, schedule and softmax, timed side by side
// by bench_hopper_prefill_tuning (kernels/hopper_prefill/README.md has the table). Each is the
// family's default policy with the members its name says changed. Those whose verdict was no
// difference or slower on every shape left the bench; their lines stay in the frozen tuning
// table of kernels/hopper_prefill/LOG.md.
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::hopper_prefill_tuning {

using kernels::HopperTile;
using Base = kernels::HopperPrefillPolicy;
struct defaults : Base {};
// Two consumer warpgroups (128 query rows) at head dim 64.
struct d64_m128 : Base {
  static constexpr HopperTile tile(int head_dim, bool causal) {
    return head_dim <= 64 ? HopperTile{2, 128, 240, 4} : Base::tile(head_dim, causal);
  }
};
// Causal tiles longest first within each head (the order before the sections).
struct within_head : Base {
  /* CausalOrder = */ static constexpr auto kCausalOrder = kernels::attention::CausalOrder::WithinHead;
};
// fp8 without the mask on four softmax chains per row instead of one: the exp2s are half the
// tile's time in fp8, so a shorter max / sum dependence may matter there when it did not in 16-bit.
struct fp8_chains4 : Base {
  static constexpr HopperTile fp8_tile(bool causal) {
    HopperTile t = Base::fp8_tile(causal);
    if (!causal) t.row_chains = 4;
    return t;
  }
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
