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

// Head dim 128: where O += P V is waited for among the exponentials (pv_wait_behind_exp). With the
// mask the default's wait is untied (ptxas puts it after 16 and 34 of the 128-key tile's 66, 36
// and 46 of the long causal tile's 90); the causal candidates tie it behind S register kExp:
// 31 (53, 54 of 66; 27, 53 of 90) or 63 (64, 62; 68, 69). Without the mask the candidates wait
// in the block too, untied (41 and 41 of 90) or behind register 63 (68, 66).
template <bool kWithoutMask, int kExp>
struct D128PvWait : Base {
  static constexpr bool pv_wait_in_softmax(int head_dim, bool causal) {
    return Base::pv_wait_in_softmax(head_dim, causal) || (kWithoutMask && head_dim > 64);
  }
  static constexpr int pv_wait_behind_exp(int head_dim, bool causal) {
    return head_dim > 64 && causal != kWithoutMask ? kExp : Base::pv_wait_behind_exp(head_dim, causal);
  }
};
struct nc128_wait : D128PvWait<true, -1> {};
struct nc128_wait_e63 : D128PvWait<true, 63> {};
struct c128_e31 : D128PvWait<false, 31> {};
struct c128_e63 : D128PvWait<false, 63> {};

}  // namespace schedlab::experiments::hopper_prefill_tuning
