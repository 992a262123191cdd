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

// fp8 on persistent CTAs (the static walk) and on three K and V stages, as cuDNN's fp8 forward
// runs (one CTA an SM, 232 KiB of shared memory), asked again now that the V transpose no
// longer takes the consumers' issue slots. 16-bit launches change too (the persistent walk at
// every length; three 16-bit stages at head dim 128 do not fit and are refused): read fp8.
struct fp8_persistent : Base {
  /* Schedule = */ static constexpr kernels::attention::TileSchedule kSchedule = kernels::attention::TileSchedule::Persistent;
};
struct fp8_stages3 : Base {
  /* Stages = */ static constexpr int kStages = 3;
};
struct fp8_persistent_stages3 : fp8_persistent {
  /* Stages = */ static constexpr int kStages = 3;
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
