// FlashAttention-3 section 3.1: two consumer warpgroups take turns issuing their GEMMs
// through named barriers, so one's softmax overlaps the other's matrix ops (there: about
// 570 -> 620-640 TFLOP/s, fp16, head dim 128, seq 8192, H100), against free-running
// warpgroups that issue whenever they are ready.
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::prefill_pingpong {

struct pingpong : kernels::HopperPrefillPolicy {
  /* PingPong = */ static constexpr bool kPingPong = true;
};
struct free_running : kernels::HopperPrefillPolicy {
  /* PingPong = */ static constexpr bool kPingPong = false;
};

}  // namespace schedlab::experiments::prefill_pingpong
