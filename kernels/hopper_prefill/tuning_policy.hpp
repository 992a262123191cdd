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

// Head dim 64, both masks: O += P V waited for in the exponentials' block, tied behind one
// exponential (pv_wait_behind_exp), as FlashAttention-4's SM90 loop waits among its
// exponentials. Untied, ptxas hoists the wait above all but 0 to 6 of the 66 (LOG.md, "The PV
// wait in the exponentials' block"); behind S register 0 it lands after 32 and 12 of them (the
// mask's two branches of the non-causal short kernel), behind register 63 after 31 and 35.
template <int kExp>
struct D64PvWaitBehind : Base {
  static constexpr bool pv_wait_in_softmax(int head_dim, bool causal) { return head_dim <= 64 || Base::pv_wait_in_softmax(head_dim, causal); }
  static constexpr int pv_wait_behind_exp(int head_dim, bool causal) { return head_dim <= 64 ? kExp : Base::pv_wait_behind_exp(head_dim, causal); }
};
struct d64_pv_wait_e0 : D64PvWaitBehind<0> {};
struct d64_pv_wait_e63 : D64PvWaitBehind<63> {};

}  // namespace schedlab::experiments::hopper_prefill_tuning
