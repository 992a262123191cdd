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

// The thresholds between the causal kernels at head dim 128, asked again now that the PV wait in
// the exponentials' block made the kernels of one CTA a tile faster from 4096 keys:
// long_causal_4096, the long causal kernel (176-key tiles) from 4096 keys instead of 6144;
// short_causal_1024, the short causal kernels (persistent CTAs drawing tiles) up to 1024 keys
// instead of 2048, so that 2048 runs one CTA a tile.
struct long_causal_4096 : Base {
  /* LongCausalFromKeys = */ static constexpr int kLongCausalFromKeys = 4096;
};
struct short_causal_1024 : Base {
  static constexpr int short_keys(bool causal) { return causal ? 1024 : Base::short_keys(false); }
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
