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

// Head dim 64 without the mask as before mask_loops: one loop with the mask's branch, the PV
// wait after the softmax (pv_wait_from_keys past any length), for the lengths past short_keys
// that the default's kernel of one CTA a tile runs.
struct d64_branch : Base {
  static constexpr bool mask_loops(int /*head_dim*/, bool /*causal*/) { return false; }
  static constexpr int pv_wait_from_keys(int head_dim, bool causal) { return head_dim <= 64 && !causal ? 1 << 30 : Base::pv_wait_from_keys(head_dim, causal); }
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
