// decode_partial_merge's variants against the double reference on the H200: the row-tile shapes
// under each merge; batches whose rows the combine kernel merges by a warp, by a CTA, from the
// plan's row list. The checks are the family's (kernels/tests/decode_gpu_checks.hpp: small shapes
// for compute-sanitizer, a launch twice on poisoned output); built into schedlab_gpu_tests_decode.
// Label: gpu.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiments/decode_partial_merge/policy.hpp"
#include "kernels/tests/decode_gpu_checks.hpp"

namespace schedlab::kernels::decode_test {
namespace x = experiments::decode_partial_merge;

// The combine kernel a warp per row (kCombineWarpPerRow), every row-tile unit cut into chunks
// merged there, and forced splits (a partial per split of every row) through the same kernel.
// Last, 36 query heads (groups of 18): the last combine CTA of each sequence has 4 warps with
// no row.
TEST(DecodeGpuRowTiles, WarpCombineMatchesReference) {
  using Policy = x::token_balanced_warp_combine;
  expect_row_tiles_match_reference<Policy>(true);
  std::uint64_t seed = test_seed();
  for (DType kv : {DType::bf16, DType::fp8_e4m3})
    for (int forced : {0, 3}) {
      const DecodeProblem p = make_decode_problem(4, 36, 2, 128, 16, {9000, 300, 1, 2500}, kv, ++seed,
                                                  /*spare_pages=*/3);
      DecodeCase c(p, DecodeKernel::of<Policy>(), forced);
      ASSERT_TRUE(c.plan().needs_combine()) << "36/2, " << dtype_name(kv) << ", forced splits " << forced;
      launch_twice_and_check(c, seed, "36/2, " + std::string(dtype_name(kv)) + ", forced splits " + std::to_string(forced));
    }
}
// The combine's grid from the plan's row list (kCombineRowList): the row-tile shapes; a group
// of 32 whose plan has rows of many partials (a CTA each) and of few (a warp each); MQA with
// one sequence cut into more chunks than a CTA row loads in one round; 36/2 (rows of a unit
// short of its tiles); and forced splits, which keep the (sequence, slice) grid.
TEST(DecodeGpuRowTiles, CombineRowListMatchesReference) {
  using Policy = x::token_balanced_row_list;
  expect_row_tiles_match_reference<Policy>(true);
  std::uint64_t seed = test_seed();
  struct Batch {
    int q_heads, kv_heads;
    std::vector<int> lens;
  };
  const std::vector<Batch> batches = {
      {64, 2, {20000, 1000, 1000, 1, 200}}, {64, 1, {60000, 500, 1}}, {36, 2, {9000, 300, 1, 2500}}};
  for (DType kv : {DType::bf16, DType::fp8_e4m3})
    for (const Batch& b : batches)
      for (int forced : {0, 3}) {
        const DecodeProblem p = make_decode_problem(static_cast<int>(b.lens.size()), b.q_heads, b.kv_heads, 128, 16,
                                                    b.lens, kv, ++seed, /*spare_pages=*/3);
        const std::string where = std::to_string(b.q_heads) + "/" + std::to_string(b.kv_heads) + ", " +
                                  std::string(dtype_name(kv)) + ", forced splits " + std::to_string(forced);
        DecodeCase c(p, DecodeKernel::of<Policy>(), forced);
        ASSERT_TRUE(c.plan().needs_combine()) << where;
        if (forced == 0) {
          EXPECT_GT(c.plan().combine_cta_rows, 0) << where << ": some row merged by a CTA";
          if (b.kv_heads == 2 && b.q_heads == 64) EXPECT_GT(c.plan().combine_warp_rows, 0) << where;
          if (b.kv_heads == 1) EXPECT_GT(c.plan().num_splits, 128) << where << ": two rounds of a CTA row's loads";
        }
        launch_twice_and_check(c, seed, where);
      }
}
// Units of more than four rows a warp merged by the combine kernel
// (kMaxInKernelMergeRowsPerWarp 4): every row-tile unit cut into chunks.
TEST(DecodeGpuRowTiles, RowTilesCombineMatchesReference) {
  expect_row_tiles_match_reference<x::token_balanced_row_tiles_combine>(true);
}


// Its row-tile variants: a sanitizer test each, and the seed sweep's.
const std::vector<NamedDecodeKernel> kRowTileVariants = {
    named_decode_kernel<x::token_balanced_row_tiles_combine>(),
    named_decode_kernel<x::token_balanced_warp_combine>(),
    named_decode_kernel<x::token_balanced_row_list>()};
INSTANTIATE_TEST_SUITE_P(decode_partial_merge, DecodeGpuRowTileVariant, ::testing::ValuesIn(kRowTileVariants), row_tile_variant_name);
const bool kSwept = register_row_tile_variants(kRowTileVariants);

}  // namespace schedlab::kernels::decode_test
