// Every policy of the decode row-tile bodies that the GPU tests run (GQA groups above 16 in one
// CTA of several row tiles): the warpgroup body under each work partition and partial merge,
// and the warp body (decode_row_tile_body's token_balanced_warp_rows), each by name. The
// sanitizer test runs each on small shapes in a test of its own; the seed sweep
// (seed_sweep_decode.cu) runs each over many seeds.
#pragma once
#include <vector>

#include "experiments/decode_partial_merge/policy.hpp"
#include "experiments/decode_row_tile_body/policy.hpp"
#include "experiments/decode_work_partition/policy.hpp"
#include "kernels/decode/decode_case.hpp"

namespace schedlab::kernels {

struct NamedDecodeKernel {
  const char* name;
  DecodeKernel kernel;
  RowTileMma body;
};

inline std::vector<NamedDecodeKernel> decode_row_tile_variants() {
  namespace work = experiments::decode_work_partition;
  namespace merge = experiments::decode_partial_merge;
  namespace body = experiments::decode_row_tile_body;
  std::vector<NamedDecodeKernel> all;
  auto add = [&]<class Policy>() { all.push_back({Policy::kName, DecodeKernel::of<Policy>(), Policy::RowTiles::kRowTileMma}); };
  add.operator()<work::split>();
  add.operator()<work::token_balanced>();
  add.operator()<work::token_balanced_filled>();
  add.operator()<merge::token_balanced_row_tiles_combine>();
  add.operator()<merge::token_balanced_warp_combine>();
  add.operator()<merge::token_balanced_row_list>();
  add.operator()<body::token_balanced_warp_rows>();
  add.operator()<body::token_balanced_low_first>();
  return all;
}

}  // namespace schedlab::kernels
