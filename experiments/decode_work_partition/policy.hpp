// Ragged decode batches: the split grid cuts every sequence into the same number of splits,
// chosen from the batch size, so one long sequence among short ones is read by a handful of
// CTAs while the rest of the GPU idles. Against it: chunks of about the same number of tiles
// planned from the lengths (token_balanced), the same plan with filled CTA slots and the
// row-list combine (token_balanced_filled, the serving configuration), and the persistent grid
// whose warps move on to unfinished sequences. A GQA group above 16 (MQA) is one CTA of up to 4
// row tiles under the split and token-balanced plans, so such a batch reads its KV once.
#pragma once
#include "common/harness/variant_list.hpp"
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_work_partition {

using kernels::TileSchedule;

struct split : kernels::SplitRows {
  static constexpr const char* kName = "split";
};
struct token_balanced : kernels::TokenBalancedRows {
  static constexpr const char* kName = "token_balanced";
};
struct token_balanced_filled : kernels::ServingDecode {
  static constexpr const char* kName = "token_balanced_filled";
};
// Sixteen-row CTAs (no row tiles), as decode_tile_schedule's persistent grid.
struct persistent : kernels::DecodePolicy {
  static constexpr const char* kName = "persistent";
  struct Partition : kernels::DecodePolicy::Partition {
    /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::persistent;
  };
};

using Variants = harness::VariantList<split, token_balanced, persistent, token_balanced_filled>;

}  // namespace schedlab::experiments::decode_work_partition
