// Seed 000: the block-table load peeled into a prologue and the next page index
// prefetched one tile ahead, against loading the page index when the tile is issued.
#pragma once
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_page_prefetch {

struct load_on_use : kernels::DecodePolicy {
  struct Warp : kernels::DecodePolicy::Warp {
    /* PrefetchPageIndex = */ static constexpr bool kPrefetchPageIndex = false;
  };
};
struct prefetch : kernels::DecodePolicy {
  struct Warp : kernels::DecodePolicy::Warp {
    /* PrefetchPageIndex = */ static constexpr bool kPrefetchPageIndex = true;
  };
};

}  // namespace schedlab::experiments::decode_page_prefetch
