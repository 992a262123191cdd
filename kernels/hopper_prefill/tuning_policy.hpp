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

// The default before head dim 128 without the mask waited for O += P V among its exponentials
// from 4096 keys: the wait after the softmax's block at every length there.
struct nc128_wait_after_softmax : Base {
  static constexpr bool pv_wait_in_softmax(int /*head_dim*/, bool causal) { return causal; }
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
