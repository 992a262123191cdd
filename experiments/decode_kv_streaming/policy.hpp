// Seed 002 (ROCm/xformers PR 75, MI350 fp8 split-K decode): K and V fragments of a whole
// tile held in registers, against K streamed into the dot product and V loaded on demand
// (there: 512 VGPRs with 56 spills -> 108 VGPRs, no spills; ~125 us -> ~105 us).
#pragma once
#include "common/harness/variant_list.hpp"
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_kv_streaming {

struct resident : kernels::SplitWarps {
  static constexpr const char* kName = "resident";
  struct Warp : kernels::SplitWarps::Warp {
    /* StreamKv = */ static constexpr bool kStreamKv = false;
  };
};
struct streaming : kernels::SplitWarps {
  static constexpr const char* kName = "streaming";
  struct Warp : kernels::SplitWarps::Warp {
    /* StreamKv = */ static constexpr bool kStreamKv = true;
  };
};

using Variants = harness::VariantList<resident, streaming>;

}  // namespace schedlab::experiments::decode_kv_streaming
