// The decode split plan on the host (no GPU): static splits for one wave, the dynamic
// schedule's persistent grid and partial slots, and forced splits overriding either.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "kernels/decode/paged_decode.hpp"

namespace schedlab::kernels {
namespace {

DecodeProblem problem(int batch, int context, int q_heads = 32, int kv_heads = 8) {
  return make_decode_problem(batch, q_heads, kv_heads, 128, 16, std::vector<int>(batch, context), DType::bf16, 1);
}

constexpr int kSlots = 264;  // H200: 132 SMs x 2 CTAs
constexpr int kWarps = 4;

TEST(DecodePlan, StaticSplitsFillOneWave) {
  const DecodePlan plan = plan_decode(problem(16, 16384), kSlots, kWarps);
  EXPECT_FALSE(plan.dynamic());
  EXPECT_EQ(plan.num_splits, 2);  // 128 (sequence, KV head) CTAs x 2 on 264 slots
  EXPECT_EQ(plan.tiles_per_split, 512);
  EXPECT_TRUE(plan.needs_combine());
  EXPECT_FALSE(plan_decode(problem(64, 4096), kSlots, kWarps).needs_combine());
}

TEST(DecodePlan, DynamicIsOnePersistentWave) {
  const DecodeProblem p = problem(16, 16384);
  const DecodePlan plan = plan_decode(p, kSlots, kWarps, 0, TileSchedule::persistent);
  EXPECT_TRUE(plan.dynamic());
  EXPECT_EQ(plan.ctas, kSlots);
  // 1056 warps over 128 units start 8 or 9 to a unit; later joiners get kDynamicJoins more slots.
  EXPECT_EQ(plan.num_splits, 9 + kDynamicJoins);
  EXPECT_TRUE(plan.needs_combine());
  EXPECT_EQ(decode_work_pairs(p), 128);
  EXPECT_EQ(decode_schedule_ints(p), 3 * 128 + 2);
}

TEST(DecodePlan, DynamicKeepsWarpsBusyOnShortContexts) {
  // Batch 1, 1k: 8 units x 64 tiles; 4 tiles per warp at least means 32 CTAs, not 264.
  const DecodePlan plan = plan_decode(problem(1, 1024), kSlots, kWarps, 0, TileSchedule::persistent);
  EXPECT_EQ(plan.ctas, 32);
  EXPECT_EQ(plan.num_splits, 16 + kDynamicJoins);
  EXPECT_EQ(plan_decode(problem(1, 1), kSlots, kWarps, 0, TileSchedule::persistent).ctas, 1);
}

TEST(DecodePlan, ForcedSplitsUseTheStaticGrid) {
  const DecodePlan plan = plan_decode(problem(4, 3000), kSlots, kWarps, 7, TileSchedule::persistent);
  EXPECT_FALSE(plan.dynamic());
  EXPECT_TRUE(plan.shared_tail);
  EXPECT_EQ(plan.num_splits, 7);
  const DecodePlan one = plan_decode(problem(4, 3000), kSlots, kWarps, 1, TileSchedule::persistent);
  EXPECT_FALSE(one.needs_combine());
  EXPECT_FALSE(one.needs_schedule());
}

TEST(DecodePlan, SharedTailOnlyWithSplits) {
  const DecodePlan two = plan_decode(problem(16, 16384), kSlots, kWarps, 0, TileSchedule::shared_tail);
  EXPECT_EQ(two.num_splits, 2);
  EXPECT_TRUE(two.shared_tail);
  EXPECT_TRUE(two.needs_schedule());
  EXPECT_FALSE(plan_decode(problem(64, 4096), kSlots, kWarps, 0, TileSchedule::shared_tail).needs_schedule());
  EXPECT_FALSE(plan_decode(problem(16, 16384), kSlots, kWarps).needs_schedule());
}

TEST(DecodePlan, GroupChunksAreUnits) {
  // 64 query heads on 2 KV heads: groups of 32, two chunks of 16 rows per KV head.
  EXPECT_EQ(decode_work_pairs(problem(3, 100, 64, 2)), 3 * 2 * 2);
}

TEST(DecodePlan, RejectsNoSlots) {
  EXPECT_THROW(plan_decode(problem(1, 100), 0, kWarps), std::invalid_argument);
  EXPECT_THROW(plan_decode(problem(1, 100), kSlots, 0, 0, TileSchedule::persistent), std::invalid_argument);
}

}  // namespace
}  // namespace schedlab::kernels
