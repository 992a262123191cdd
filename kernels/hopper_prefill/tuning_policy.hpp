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

// Head dim 64 under the mask on two loops too (mask_loops), the PV wait in the open tiles' loop
// behind S register 0 (with 63, its default tie, ptxas put it after the last exponential).
struct d64_causal_open : Base {
  static constexpr bool mask_loops(int head_dim, bool /*causal*/) { return head_dim <= 64; }
  static constexpr int pv_wait_behind_exp(int head_dim, bool causal) { return head_dim <= 64 && causal ? 0 : Base::pv_wait_behind_exp(head_dim, causal); }
};
// The same with the wait where ptxas puts it.
struct d64_causal_open_untied : d64_causal_open {
  static constexpr int pv_wait_behind_exp(int head_dim, bool causal) { return head_dim <= 64 && causal ? -1 : Base::pv_wait_behind_exp(head_dim, causal); }
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
