// Seed 000: the block-table load peeled into a prologue and the next page index
// prefetched one tile ahead, against loading the page index when the tile is issued.
#pragma once
#include "common/harness/variant_list.hpp"
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_page_prefetch {

struct load_on_use : kernels::SplitWarps {
  static constexpr const char* kName = "load_on_use";
  struct Warp : kernels::SplitWarps::Warp {
    /* PrefetchPageIndex = */ static constexpr bool kPrefetchPageIndex = false;
  };
};
struct prefetch : kernels::SplitWarps {
  static constexpr const char* kName = "prefetch";
  struct Warp : kernels::SplitWarps::Warp {
    /* PrefetchPageIndex = */ static constexpr bool kPrefetchPageIndex = true;
  };
};

using Variants = harness::VariantList<load_on_use, prefetch>;

}  // namespace schedlab::experiments::decode_page_prefetch
