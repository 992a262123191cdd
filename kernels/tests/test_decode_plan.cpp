// The decode split plan on the host (no GPU): static splits for one wave, the dynamic
// schedule's persistent grid and partial slots, and forced splits overriding either.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
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

// A bad batch description is an error of the plan, which every launch needs and which runs
// before anything is allocated or written; the message names the sequence and the entry.
void expect_rejected(const DecodeProblem& p, const std::string& field, const std::string& names) {
  for (TileSchedule schedule : {TileSchedule::split, TileSchedule::persistent}) {
    try {
      plan_decode(p, kSlots, kWarps, 0, schedule);
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const InvalidProblem& e) {
      EXPECT_EQ(e.field(), field);
      EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
    }
  }
}

TEST(DecodePlan, RejectsALengthBelowOne) {
  DecodeProblem p = make_decode_problem(3, 32, 8, 128, 16, {5, 40, 7}, DType::bf16, 1);
  p.context_lens[1] = 0;
  expect_rejected(p, "context_lens", "sequence 1");
  p.context_lens[1] = -3;
  expect_rejected(p, "context_lens", "sequence 1");
}

TEST(DecodePlan, RejectsAPageOutsideThePool) {
  DecodeProblem p = make_decode_problem(3, 32, 8, 128, 16, {5, 40, 7}, DType::bf16, 1);
  p.block_table[std::size_t(2) * p.max_pages_per_seq] = p.num_pages;  // sequence 2, its first page
  expect_rejected(p, "block_table", "sequence 2, page slot 0");
  p.block_table[std::size_t(2) * p.max_pages_per_seq] = -1;
  expect_rejected(p, "block_table", "sequence 2, page slot 0");
}

TEST(DecodePlan, RejectsALengthPastItsBlockTableRow) {
  DecodeProblem p = make_decode_problem(3, 32, 8, 128, 16, {5, 40, 7}, DType::bf16, 1);
  p.context_lens[0] = p.max_pages_per_seq * p.page_size + 1;  // one page more than the row holds
  expect_rejected(p, "context_lens", "sequence 0");
}

TEST(DecodePlan, RejectsNoSlots) {
  EXPECT_THROW(plan_decode(problem(1, 100), 0, kWarps), std::invalid_argument);
  EXPECT_THROW(plan_decode(problem(1, 100), kSlots, 0, 0, TileSchedule::persistent), std::invalid_argument);
}

}  // namespace
}  // namespace schedlab::kernels
