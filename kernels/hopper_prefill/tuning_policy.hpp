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

// P's row sums after P is packed and O rescaled (HopperTile::sums_after_pack), on four chains
// a row slot, where cuDNN's fp8 loop sums: fp8 only, and every kernel.
struct fp8_sums_late : Base {
  static constexpr kernels::HopperTile fp8_tile(bool causal) {
    kernels::HopperTile t = Base::fp8_tile(causal);
    t.sums_after_pack = true;
    return t;
  }
};
struct sums_late : fp8_sums_late {
  static constexpr kernels::HopperTile tile(int head_dim, bool causal) {
    kernels::HopperTile t = Base::tile(head_dim, causal);
    t.sums_after_pack = true;
    return t;
  }
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
