// The device memory a decode or prefill case states before it allocates (the harness skips a
// case that exceeds the device's free memory): counted by hand for small problems, buffer by
// buffer, and a decode batch far past an H200 refused with both numbers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/harness/bench.hpp"
#include "common/problem.hpp"
#include "kernels/decode/decode_case_memory.hpp"
#include "kernels/decode/decode_shapes.hpp"
#include "kernels/prefill/prefill_case_memory.hpp"

namespace schedlab::kernels {
namespace {

// Two sequences of 20 and 40 keys (2 and 3 pages of 16), 4 query heads on 2 KV heads, head dim 64.
DecodeProblem small_decode(DType kv_dtype) {
  return make_decode_problem(2, 4, 2, 64, 16, {20, 40}, kv_dtype, 1);
}

TEST(DecodeCaseMemory, CountsInputSetsLaunchBuffersAndTheGatesPages) {
  const DecodeProblem p = small_decode(DType::bf16);
  ASSERT_EQ(p.num_pages, 5);
  ASSERT_EQ(p.max_pages_per_seq, 3);
  // A set: Q 2*4*64*2 = 1024, K and V pools 5*2*16*64*2 = 20480 each.
  constexpr std::size_t kSet = 1024 + 2 * 20480;
  // Output 1024, block table 2*3 ints, lengths 2 ints.
  constexpr std::size_t kLaunch = 1024 + 24 + 8;
  // The gate: 60 keys leave room for both KV heads of each sequence, (2+3)*2 pages of
  // 16*64*2 bytes, each with an 8-byte offset.
  constexpr std::size_t kGathered = 10 * (2048 + 8);
  const DecodePlan one_pass;  // one split, no partials, no schedule
  EXPECT_EQ(decode_case_device_bytes(p, one_pass, 1), kSet + kLaunch + kGathered);
  EXPECT_EQ(decode_case_device_bytes(p, one_pass, 3), 3 * kSet + kLaunch + kGathered);

  DecodePlan split_balanced;
  split_balanced.num_splits = 4;  // partials: 2*4*4 slots of 64 floats and one LSE
  split_balanced.shared_tail = true;  // schedule: 3 * (2*2 work units) + 2 ints
  split_balanced.work.chunks.assign(3, {});  // 4 ints each
  EXPECT_EQ(decode_case_device_bytes(p, split_balanced, 1),
            kSet + kLaunch + kGathered + 32 * 64 * 4 + 32 * 4 + 14 * 4 + 12 * 4);
}

TEST(DecodeCaseMemory, Fp8PoolsAreByteWideWithScales) {
  const DecodeProblem p = small_decode(DType::fp8_e4m3);
  // Q stays bf16 (1024), pools 10240 each; the scales add 2+2 floats; pages are 1024 bytes.
  EXPECT_EQ(decode_case_device_bytes(p, DecodePlan{}, 1), (1024 + 2 * 10240) + (1024 + 24 + 8 + 16) + 10 * (1024 + 8));
}

TEST(DecodeCaseMemory, ABatchPastTheDeviceIsRefusedWithBothNumbers) {
  // batch 256 x context 262144, the other axes at their defaults: 256 GiB of K and V pools.
  const auto shapes = decode_shapes(harness::ShapeSelection{.axes = "batch=256;context=262144"});
  ASSERT_EQ(shapes.size(), 1u);
  const DecodeProblem p = decode_problem_for(shapes[0]);
  const DecodePlan plan = plan_decode(p, {.cta_slots = 264, .warps = 4});  // H200: 132 SMs x 2 CTAs, 4 warps
  const std::size_t needed = decode_case_device_bytes(p, plan, 1);
  EXPECT_GT(needed, std::size_t(256) << 30);
  const std::size_t h200_free = std::size_t(140) << 30;
  const auto shortfall = harness::memory_shortfall(needed, h200_free);
  ASSERT_TRUE(shortfall);
  EXPECT_NE(shortfall->find("needs " + std::to_string(needed) + " bytes"), std::string::npos) << *shortfall;
  EXPECT_NE(shortfall->find("has " + std::to_string(h200_free) + " bytes (140.00 GiB) free"), std::string::npos)
      << *shortfall;
  // The headline shape (batch 16, 16k) fits with room to spare.
  const DecodeProblem headline = decode_problem_for(decode_shapes(harness::ShapeSelection{.axes = "batch=16"})[0]);
  EXPECT_FALSE(harness::memory_shortfall(decode_case_device_bytes(headline, plan_decode(headline, {.cta_slots = 264,
      .warps = 4}), 1), h200_free));
}

PrefillProblem fa3_512(DType dtype) {  // the FlashAttention-3 setting at seq 512, head dim 128
  PrefillProblem p;
  p.batch = 32;
  p.q_heads = p.kv_heads = 16;
  p.q_len = p.kv_len = 512;
  p.head_dim = 128;
  p.dtype = dtype;
  return p;
}

TEST(PrefillCaseMemory, CountsInputSetsAndTheOutput) {
  constexpr std::size_t kElems = std::size_t(32) * 512 * 16 * 128;  // each of Q, K, V and O
  EXPECT_EQ(prefill_case_device_bytes(fa3_512(DType::bf16), 2), 2 * (3 * kElems * 2) + kElems * 2);
  // fp8: byte-wide inputs with a scale per head (16 query, 16 + 16 KV), the output in bf16.
  EXPECT_EQ(prefill_case_device_bytes(fa3_512(DType::fp8_e4m3), 1), (3 * kElems + 48 * 4) + kElems * 2);
}

}  // namespace
}  // namespace schedlab::kernels
