// Seed 002 (ROCm/xformers PR 75, MI350 fp8 split-K decode): K and V fragments of a whole
// tile held in registers, against K streamed into the dot product and V loaded on demand
// (there: 512 VGPRs with 56 spills -> 108 VGPRs, no spills; ~125 us -> ~105 us).
#pragma once
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_kv_streaming {

struct resident : kernels::DecodePolicy {
  struct Warp : kernels::DecodePolicy::Warp {
    /* StreamKv = */ static constexpr bool kStreamKv = false;
  };
};
struct streaming : kernels::DecodePolicy {
  struct Warp : kernels::DecodePolicy::Warp {
    /* StreamKv = */ static constexpr bool kStreamKv = true;
  };
};

}  // namespace schedlab::experiments::decode_kv_streaming
