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

// With one P buffer, the wait for O += P(j-1) V(j-1) and P(j)'s packing inside the basic block of
// the softmax's exponentials, so that the packs can go among them (FlashAttention-4's SM90 order).
struct pv_wait_in_softmax : Base {
  /* PvWaitInSoftmax = */ static constexpr bool kPvWaitInSoftmax = true;
};
// pv_wait_in_softmax with O *= corr in that block on every tile: no test, FlashAttention-4's form.
struct rescale_in_softmax : pv_wait_in_softmax {
  /* RescaleInSoftmax = */ static constexpr bool kRescaleInSoftmax = true;
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
