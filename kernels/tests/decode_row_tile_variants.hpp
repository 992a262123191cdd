// Every policy of the decode row-tile bodies that the GPU tests run (GQA groups above 16 in one
// CTA of several row tiles, experiments/decode_work_partition): the warpgroup body and its
// knobs, and the warp body (token_balanced_warp_rows), each by name. The sanitizer test runs
// each on small shapes in a test of its own; the seed sweep (seed_sweep_decode.cu) runs each
// over many seeds.
#pragma once
#include <vector>

#include "experiments/decode_work_partition/policy.hpp"
#include "kernels/decode/decode_case.hpp"

namespace schedlab::kernels {

struct NamedDecodeKernel {
  const char* name;
  DecodeKernel kernel;
  RowTileMma body;
};

inline std::vector<NamedDecodeKernel> decode_row_tile_variants() {
  namespace x = experiments::decode_work_partition;
  std::vector<NamedDecodeKernel> all;
  auto add = [&]<class Policy>(const char* name) { all.push_back({name, DecodeKernel::of<Policy>(), Policy::kRowTileMma}); };
  add.operator()<x::split>("split");
  add.operator()<x::token_balanced>("token_balanced");
  add.operator()<x::token_balanced_warp_rows>("token_balanced_warp_rows");
  add.operator()<x::token_balanced_convert_ahead>("token_balanced_convert_ahead");
  add.operator()<x::token_balanced_plain_step>("token_balanced_plain_step");
  add.operator()<x::token_balanced_q_regs>("token_balanced_q_regs");
  add.operator()<x::token_balanced_fp8_three_ctas>("token_balanced_fp8_three_ctas");
  add.operator()<x::token_balanced_fp8_in_warps>("token_balanced_fp8_in_warps");
  add.operator()<x::token_balanced_merge_by_unit>("token_balanced_merge_by_unit");
  add.operator()<x::token_balanced_row_tiles_combine>("token_balanced_row_tiles_combine");
  add.operator()<x::token_balanced_warp_combine>("token_balanced_warp_combine");
  add.operator()<x::token_balanced_row_list>("token_balanced_row_list");
  add.operator()<x::token_balanced_filled>("token_balanced_filled");
  add.operator()<x::token_balanced_two_waves>("token_balanced_two_waves");
  add.operator()<x::token_balanced_four_waves>("token_balanced_four_waves");
  add.operator()<x::token_balanced_short_merges>("token_balanced_short_merges");
  add.operator()<x::token_balanced_overlap_pv>("token_balanced_overlap_pv");
  add.operator()<x::token_balanced_l2_prefetch>("token_balanced_l2_prefetch");
  add.operator()<x::token_balanced_l2_prefetch4>("token_balanced_l2_prefetch4");
  add.operator()<x::token_balanced_staged_rows>("token_balanced_staged_rows");
  add.operator()<x::token_balanced_converted_keys>("token_balanced_converted_keys");
  add.operator()<x::token_balanced_s_behind_pv>("token_balanced_s_behind_pv");
  add.operator()<x::token_balanced_keys_freed>("token_balanced_keys_freed");
  add.operator()<x::token_balanced_half_exp2>("token_balanced_half_exp2");
  add.operator()<x::token_balanced_exact_max>("token_balanced_exact_max");
  return all;
}

}  // namespace schedlab::kernels
