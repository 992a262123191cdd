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
// Every tile whole on the static walk without the mask, the family default before
// kSplitTailFill: the last wave part-empty.
struct whole_tail : Base {
  /* SplitTailFill = */ static constexpr float kSplitTailFill = 0.f;
};

// The last key tile under the mask computed whole, as cuDNN's fp8 forward (256 keys) and
// FlashAttention-4's (128 keys at 16-bit) do: the family default before kNarrowLastTile.
struct whole_last : Base {
  /* NarrowLastTile = */ static constexpr bool kNarrowLastTile = false;
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
