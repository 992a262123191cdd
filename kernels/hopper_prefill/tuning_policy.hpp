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
// fp8 under the mask on the policy's own kernels, the family default before kFp8MeetCausal: the
// ping-pong loop on one CTA a tile (LOG.md, "fp8 under the mask: cuDNN's loop, drawn").
struct fp8_pingpong_causal : Base {
  /* Fp8MeetCausal = */ static constexpr bool kFp8MeetCausal = false;
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
