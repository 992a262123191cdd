// FlashAttention-3 section 3.1: two consumer warpgroups take turns issuing their GEMMs
// through named barriers, so one's softmax overlaps the other's matrix ops (there: about
// 570 -> 620-640 TFLOP/s, fp16, head dim 128, seq 8192, H100), against free-running
// warpgroups that issue whenever they are ready.
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::prefill_pingpong {

// The family default, whose consumers take turns (kPingPong); its kernels are the family's
// (kernels/hopper_prefill/hopper_prefill.cu).
using pingpong = kernels::HopperPrefillPolicy;
static_assert(pingpong::kPingPong);
struct free_running : kernels::HopperPrefillPolicy {
  /* PingPong = */ static constexpr bool kPingPong = false;
};

}  // namespace schedlab::experiments::prefill_pingpong
