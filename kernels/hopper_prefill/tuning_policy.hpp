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

// One exponential in every N on the FMA pipe (HopperTile::exp2_fma_every): fp8's tiles, or head
// dim 64's (both masks), whose exponentials take as long as their GEMMs.
template <int kEvery>
struct fp8_fma : Base {
  static constexpr kernels::HopperTile fp8_tile(bool causal) {
    kernels::HopperTile t = Base::fp8_tile(causal);
    t.exp2_fma_every = kEvery;
    return t;
  }
};
template <int kEvery>
struct d64_fma : Base {
  static constexpr kernels::HopperTile tile(int head_dim, bool causal) {
    kernels::HopperTile t = Base::tile(head_dim, causal);
    if (head_dim <= 64) t.exp2_fma_every = kEvery;
    return t;
  }
};
using fp8_fma16 = fp8_fma<16>;
using fp8_fma8 = fp8_fma<8>;
using d64_fma16 = d64_fma<16>;
using d64_fma8 = d64_fma<8>;

}  // namespace schedlab::experiments::hopper_prefill_tuning
