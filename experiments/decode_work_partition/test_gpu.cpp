// decode_work_partition's variants against the double reference on the H200: every configuration
// and its small shapes; the row-tile shapes; slots filled on ragged batches. The checks are the
// family's (kernels/tests/decode_gpu_checks.hpp: small shapes for compute-sanitizer, a launch twice
// on poisoned output); built into schedlab_gpu_tests_decode. Label: gpu.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiments/decode_work_partition/policy.hpp"
#include "kernels/tests/decode_gpu_checks.hpp"

namespace schedlab::kernels::decode_test {
namespace x = experiments::decode_work_partition;

using Timed = ::testing::Types<x::split, x::token_balanced>;  // the macro takes one type name
INSTANTIATE_TYPED_TEST_SUITE_P(decode_work_partition, DecodeGpu, Timed);

// GQA groups above 16 in one CTA of several row tiles (decode_gpu_checks.hpp), on the split grid
// and the token-balanced work list.
TEST(DecodeGpuRowTiles, SplitMatchesReference) {
  expect_row_tiles_match_reference<x::split>(false);
}
TEST(DecodeGpuRowTiles, TokenBalancedMatchesReference) {
  expect_row_tiles_match_reference<x::token_balanced>(true);
}

// Slots filled evenly (kFillSlots): a unit's chunks of different sizes, listed by when the plan
// starts them, on ragged batches whose filled plan differs from the even cut (the long-tailed
// batch, lengths from one token to 30000, a group of 32 with one long sequence), bf16 and fp8.
TEST(DecodeGpuTokenBalanced, FilledSlotsMatchReference) {
  std::uint64_t seed = test_seed();
  struct Batch {
    int q_heads, kv_heads;
    std::vector<int> lens;
  };
  std::vector<int> long_tailed(16, 128);
  for (int len : {512, 512, 512, 512, 512, 512, 512, 512, 2048, 2048, 2048, 2048, 8192, 8192, 32768})
    long_tailed.push_back(len);
  const std::vector<Batch> batches = {{32, 8, long_tailed},
                                      {32, 8, {1, 16, 256, 2048, 8192, 30000}},
                                      {64, 2, {20000, 1000, 1000, 1, 200, 3000}}};
  for (DType kv : {DType::bf16, DType::fp8_e4m3})
    for (const Batch& b : batches) {
      const DecodeProblem p = make_decode_problem(static_cast<int>(b.lens.size()), b.q_heads, b.kv_heads, 128, 16,
                                                  b.lens, kv, ++seed, /*spare_pages=*/3);
      const std::string where = std::to_string(b.q_heads) + "/" + std::to_string(b.kv_heads) + ", batch " +
                                std::to_string(b.lens.size()) + ", " + std::string(dtype_name(kv));
      DecodeCase c(p, DecodeKernel::of<x::token_balanced_filled>());
      ASSERT_TRUE(c.plan().balanced()) << where;
      // On the 132 SMs of an H100 or H200 (396 fp8 slots) the long-tailed fp8 batch's even cut
      // takes two waves, and its filled plan cuts no unit into more partials and ends a fifth
      // earlier in the plan's model: it must be the filled one there (the plan tests check the
      // same at those slots). The other batches keep the even cut, the filled plan having more
      // partials a unit or the even cut one wave.
      // (token_balanced has the same warps, so the same slots, and cuts evenly.)
      const bool filled = c.plan().work.chunks != plan_paged_decode<x::token_balanced>(p, 0).work.chunks;
      if (gpu::device_info().sm_count == 132)
        EXPECT_EQ(filled, &b == &batches.front() && kv == DType::fp8_e4m3) << where;
      launch_twice_and_check(c, seed, where);
    }
}

// Its row-tile variants: a sanitizer test each, and the seed sweep's.
const std::vector<NamedDecodeKernel> kRowTileVariants = {
    named_decode_kernel<x::split>(),
    named_decode_kernel<x::token_balanced>(),
    named_decode_kernel<x::token_balanced_filled>()};
INSTANTIATE_TEST_SUITE_P(decode_work_partition, DecodeGpuRowTileVariant, ::testing::ValuesIn(kRowTileVariants), row_tile_variant_name);
const bool kSwept = register_row_tile_variants(kRowTileVariants);

}  // namespace schedlab::kernels::decode_test
