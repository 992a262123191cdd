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
// Head dim 64 without the mask on two consumers (128 query rows) of 240 registers and 192-key
// tiles: longer key tiles spread each tile's fixed cost over more keys, which three consumers of
// 160 registers have no room for (192 x 192 spilled).
struct d64_n192 : Base {
  static constexpr HopperTile tile(int head_dim, bool causal) {
    return head_dim <= 64 && !causal ? HopperTile{2, 192, 240, 1} : Base::tile(head_dim, causal);
  }
};
// Head dim 128 without the mask on FlashAttention-4's SM90 tile, 128 x 128, with P in two
// register buffers (the short causal kernels' 128-key tile, where the second buffer paid).
struct n128_p2 : Base {
  static constexpr HopperTile tile(int head_dim, bool causal) {
    return head_dim > 64 && !causal ? HopperTile{2, 128, 240, 4, 2} : Base::tile(head_dim, causal);
  }
};
// fp8 without the mask on two softmax chains per row instead of one.
struct fp8_chains2 : Base {
  static constexpr HopperTile fp8_tile(bool causal) {
    HopperTile t = Base::fp8_tile(causal);
    if (!causal) t.row_chains = 2;
    return t;
  }
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
