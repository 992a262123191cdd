// Where a token-balanced plan's partial rows are merged. A unit (sequence, KV head, row tiles)
// cut into several chunks leaves one partial per chunk; by default the unit's last CTA merges
// them, a warp walking its rows in series. Against it, step by step toward the serving
// configuration: row-tile units (more than four rows a warp) to the combine kernel, a CTA per
// row (token_balanced_row_tiles_combine); the combine a warp per row, eight rows a CTA
// (token_balanced_warp_combine); its grid the plan's list of the rows it merges, long rows
// first, each row's partials loaded in one round (token_balanced_row_list); and the plan cut
// so that every CTA slot gets about the same tiles (token_balanced_filled, kernels::ServingDecode).
#pragma once
#include "common/harness/variant_list.hpp"
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_partial_merge {

struct token_balanced : kernels::TokenBalancedRows {
  static constexpr const char* kName = "token_balanced";
};
struct token_balanced_row_tiles_combine : token_balanced {
  static constexpr const char* kName = "token_balanced_row_tiles_combine";
  struct Merge : token_balanced::Merge {
    /* MaxInKernelMergeRowsPerWarp = */ static constexpr int kMaxInKernelMergeRowsPerWarp = 4;
  };
};
struct token_balanced_warp_combine : token_balanced_row_tiles_combine {
  static constexpr const char* kName = "token_balanced_warp_combine";
  struct Merge : token_balanced_row_tiles_combine::Merge {
    /* CombineWarpPerRow = */ static constexpr bool kCombineWarpPerRow = true;
  };
};
struct token_balanced_row_list : token_balanced_warp_combine {
  static constexpr const char* kName = "token_balanced_row_list";
  struct Merge : token_balanced_warp_combine::Merge {
    /* CombineRowList = */ static constexpr bool kCombineRowList = true;
  };
};
struct token_balanced_filled : kernels::ServingDecode {
  static constexpr const char* kName = "token_balanced_filled";
};

using Variants = harness::VariantList<token_balanced, token_balanced_row_tiles_combine, token_balanced_warp_combine,
                                      token_balanced_row_list, token_balanced_filled>;

}  // namespace schedlab::experiments::decode_partial_merge
