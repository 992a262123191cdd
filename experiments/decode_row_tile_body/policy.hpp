// How a CTA computes a GQA group above 16 (MQA: 64 query heads on one KV head), whose four
// 16-row tiles share every K/V tile it copies: the four warps as one warpgroup (wgmma, one m64
// product a step of 64 keys, each K and V step read from shared memory once; fp8 with a
// producer warpgroup) or each warp its own 16 rows with the warp-level matrix instruction
// (mma.sync m16n8k16), reading every tile from shared memory itself. The AMD build keeps the
// warp form, which this experiment times on the H200.
#pragma once
#include "common/harness/variant_list.hpp"
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_row_tile_body {

using kernels::RowTileMma;

struct token_balanced : kernels::TokenBalancedRows {
  static constexpr const char* kName = "token_balanced";
};
struct token_balanced_warp_rows : token_balanced {
  static constexpr const char* kName = "token_balanced_warp_rows";
  struct RowTiles : token_balanced::RowTiles {
    /* RowTileMma = */ static constexpr RowTileMma kRowTileMma = RowTileMma::warp;
  };
};
using Variants = harness::VariantList<token_balanced, token_balanced_warp_rows>;

}  // namespace schedlab::experiments::decode_row_tile_body
