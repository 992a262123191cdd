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

// Head dim 128 without the mask on two loops as head dim 64 (mask_loops), the PV wait in the
// exponentials' block behind S register 63 at every length (pv_wait_from_keys 0).
struct d128_open : Base {
  static constexpr bool mask_loops(int /*head_dim*/, bool causal) { return !causal; }
  static constexpr int pv_wait_from_keys(int /*head_dim*/, bool /*causal*/) { return 0; }
};
// Every causal kernel of one P buffer on two loops: the key tiles below the diagonal in a loop
// with no test of the mask's bound, then the diagonal's (whose loop spills a few registers).
struct causal_open : Base {
  static constexpr bool mask_loops(int head_dim, bool causal) { return causal || Base::mask_loops(head_dim, causal); }
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
