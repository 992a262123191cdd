// Seed 000 (gfx950 fp16 paged decode, PR 313): the loop split into issue / QK+softmax / PV
// stages under priority hints (1 / 0 / 1) with a scheduling barrier closing each stage.
// On NVIDIA the stage order is the same and the hints are no-ops (recorded in results).
#pragma once
#include "common/harness/variant_list.hpp"
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_stage_priority {

struct plain : kernels::SplitWarps {
  static constexpr const char* kName = "plain";
  struct Warp : kernels::SplitWarps::Warp {
    /* StageHints = */ static constexpr bool kStageHints = false;
  };
};
struct stage_priority : kernels::SplitWarps {
  static constexpr const char* kName = "stage_priority";
  struct Warp : kernels::SplitWarps::Warp {
    /* StageHints = */ static constexpr bool kStageHints = true;
  };
};

using Variants = harness::VariantList<plain, stage_priority>;

}  // namespace schedlab::experiments::decode_stage_priority
