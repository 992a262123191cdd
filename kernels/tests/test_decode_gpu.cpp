// The paged decode family against the double reference on the H200, on its own configurations
// (SplitRows and TokenBalancedRows at head dim 128, instantiated with the fault kernels): the
// token-balanced work list on ragged batches, pages of 1 to 8 keys, a KV pool past 4 GiB, the
// device memory a case states; and the gate's power: every injected fault (DecodeFault) fails
// it, at short and long context, in every KV dtype, on the split grid and the token-balanced
// work list, at GQA 32/8 and at MQA 64/1. Each experiment's variants are tested beside it
// (experiments/<name>/test_gpu.cpp, with the checks of decode_gpu_checks.hpp, in this binary).
// Label: gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/gpu/runtime.hpp"
#include "kernels/decode/decode_case.hpp"
#include "kernels/tests/decode_gpu_checks.hpp"
#include "kernels/tests/fault_kernels.hpp"
#include "kernels/tests/test_seed.hpp"

namespace schedlab::kernels::decode_test {

// The row-tile variants' small shapes (see decode_gpu_checks.hpp); each experiment instantiates it.
TEST_P(DecodeGpuRowTileVariant, SmallShapesForSanitizer) {
  const std::vector<int> lens = {1, 75, 1200};
  std::uint64_t seed = test_seed();
  for (const auto& [q_heads, kv_heads] : {std::pair{64, 1}, std::pair{64, 2}})
    for (DType kv : {DType::bf16, DType::fp8_e4m3})
      for (int forced : {0, 3}) {
        const DecodeProblem p = make_decode_problem(3, q_heads, kv_heads, 128, 16, lens, kv, ++seed, /*spare_pages=*/1);
        DecodeCase c(p, GetParam().kernel, forced);
        ASSERT_GT(c.plan().row_tiles, 1);
        launch_twice_and_check(c, seed, std::to_string(q_heads) + "/" + std::to_string(kv_heads) + ", " +
                                            std::string(dtype_name(kv)) + ", forced splits " + std::to_string(forced));
      }
}

namespace {

// The family's configurations at head dim 128 (decode_fault_kernels.cu, without a fault).
DecodeKernel split_rows() { return decode_fault_kernel(DecodeFault::none, TileSchedule::split); }
DecodeKernel token_balanced_rows() { return decode_fault_kernel(DecodeFault::none, TileSchedule::token_balanced); }

// The token-balanced work list (TokenBalancedRows) against the double reference on ragged batches: length 1, one
// long sequence among short ones (cut into many chunks while the short ones stay whole), a
// span of lengths, GQA groups 1 to 16, bf16 and fp8 KV, pages of 16 and 32; relaunched with
// the output poisoned in between (the plan is made once per case and reused).
TEST(DecodeGpuTokenBalanced, MatchesReferenceOnRaggedBatches) {
  std::vector<int> one_long(15, 200);
  one_long.push_back(20000);
  const std::vector<std::vector<int>> batches = {{1}, {1, 1, 1, 17}, {1, 15, 17, 3000, 33, 1}, one_long,
                                                 {1, 16, 256, 2048, 8192, 300, 5}};
  std::uint64_t seed = test_seed();
  for (const auto& lens : batches)
    for (int group : {1, 2, 3, 4, 8, 16})
      for (DType kv : {DType::bf16, DType::fp8_e4m3})
        for (int page : {16, 32}) {
          const int kv_heads = 2;
          const DecodeProblem p = make_decode_problem(static_cast<int>(lens.size()), kv_heads * group, kv_heads, 128, page,
                                                      lens, kv, ++seed, /*spare_pages=*/3);
          const std::string where = std::to_string(lens.size()) + " sequences up to " +
                                    std::to_string(*std::max_element(lens.begin(), lens.end())) + ", group " +
                                    std::to_string(group) + ", " + std::string(dtype_name(kv)) + ", page " + std::to_string(page);
          DecodeCase c(p, token_balanced_rows());
          ASSERT_TRUE(c.plan().balanced()) << where;
          if (lens == one_long) {
            EXPECT_GT(c.plan().num_splits, 4) << where << ": the long sequence is cut into many chunks";
          }
          launch_twice_and_check(c, seed, where);
        }
}

// The device memory a case states (the harness refuses a case over the device's free memory
// by it) covers what prepare() allocates: a buffer added to the case and not to
// decode_case_device_bytes shows here. Token-balanced: partials, counters and work list too.
TEST(DecodeGpuMemory, StatedBytesCoverWhatPrepareAllocates) {
  const DecodeProblem p = make_decode_problem(16, 32, 8, 128, 16, std::vector<int>(16, 16384), DType::bf16, 5);
  DecodeCase c(p, token_balanced_rows());
  ASSERT_TRUE(c.plan().balanced());
  const std::size_t free_before = gpu::free_memory_bytes();
  c.prepare(5, 2);
  const std::size_t used = free_before - gpu::free_memory_bytes();
  EXPECT_LE(used, c.device_bytes(2) + harness::kDeviceMemoryReserve);
  EXPECT_GE(used, 4 * std::size_t(p.pool_elems()) * 2);  // two sets of K and V pools at least
}

// Pages placed past 4 GiB of the pool: 32-bit offsets would wrap and read the wrong page.
TEST(DecodeGpuLargePool, PagesBeyondFourGiB) {
  const std::vector<int> lens = {300, 4100};
  constexpr int kSparePages = 150000;  // x 32 KiB per page of K: about 4.6 GiB per pool
  const std::uint64_t seed = test_seed();
  DecodeProblem p = make_decode_problem(2, 32, 8, 128, 16, lens, DType::bf16, seed, kSparePages);
  // Use the last pages of the pool, in reverse, for every sequence.
  for (std::size_t i = 0; i < p.block_table.size(); ++i) p.block_table[i] = p.num_pages - 1 - static_cast<int>(i);
  const double page_bytes = double(p.kv_heads) * p.page_size * p.head_dim * 2;
  ASSERT_GT((p.num_pages - 1 - double(p.block_table.size())) * page_bytes, 4.0 * (1u << 30));
  // Per-lane copies with 64-bit offsets (bulk tensor copies: decode_lds_buffers's double_bulk).
  const AccuracyReport acc = run_decode(split_rows(), p, 0, seed + 1);
  EXPECT_TRUE(acc.passed) << acc.message;
}

// Pages smaller than a tile (1 to 8 keys; one key a page is a radix cache's layout): each of a
// tile's rows is gathered from its own page. The default and the split schedule against the
// double reference, GQA 32/8 (the warp body) and MQA 64/1 (the row-tile body), bf16 and fp8,
// ragged lengths with 1 and lengths that end inside a page and inside a tile; the block table
// is a random permutation of the pool, so a row read from its neighbour's page fails. (Bulk
// copies, a box of 16 contiguous rows, refuse such pages at plan time: decode_lds_buffers.)
void expect_small_pages_match_reference(const DecodeKernel& kernel, const std::vector<std::vector<int>>& batches) {
  std::uint64_t seed = test_seed();
  for (const auto& lens : batches)
    for (int page : {1, 2, 8})
      for (const auto& [q_heads, kv_heads] : {std::pair{32, 8}, std::pair{64, 1}})
        for (DType kv : {DType::bf16, DType::fp8_e4m3}) {
          const DecodeProblem p = make_decode_problem(static_cast<int>(lens.size()), q_heads, kv_heads, 128, page, lens,
                                                      kv, ++seed, /*spare_pages=*/5);
          const std::string where = std::to_string(lens.size()) + " sequences up to " +
                                    std::to_string(*std::max_element(lens.begin(), lens.end())) + ", " +
                                    std::to_string(q_heads) + "/" + std::to_string(kv_heads) + ", " +
                                    std::string(dtype_name(kv)) + ", page " + std::to_string(page) + ", seed " +
                                    std::to_string(seed);
          DecodeCase c(p, kernel);
          launch_twice_and_check(c, seed, where);
        }
}
TEST(DecodeGpuSmallPages, TokenBalancedMatchesReference) {
  expect_small_pages_match_reference(token_balanced_rows(), {{1, 7, 17, 3001}, {20000, 5, 300}});
}
TEST(DecodeGpuSmallPages, SplitMatchesReference) {
  expect_small_pages_match_reference(split_rows(), {{1, 7, 17, 3001}});
}
TEST(DecodeGpuSmallPages, SmallShapesForSanitizer) {
  expect_small_pages_match_reference(token_balanced_rows(), {{1, 75, 1200}});
}
// ---- injected faults ----------------------------------------------------------------------

AccuracyReport run_kernel(const DecodeKernel& kernel, const DecodeProblem& p, std::uint64_t seed, DecodePlan* plan) {
  DecodeCase c(p, kernel);
  *plan = c.plan();
  c.prepare(seed, 1);
  c.poison_output();
  c.launch(0);
  c.synchronize();
  return harness::check_output(c, 0);
}

// Two sequences, head dim 128, page 16, at the benchmarks' shortest and longest context: the
// shipped policy of the schedule passes on the same inputs, every fault fails. GQA 32/8 by
// default; at MQA 64/1 the faulty kernels run the row-tile body (row_tiles checked).
void expect_every_fault_fails(TileSchedule schedule, const DecodeKernel& shipped, const std::string& label,
                              int q_heads = 32, int kv_heads = 8, int page = 16) {
  const int row_tiles = q_heads / kv_heads > kDecodeMaxGroup ? 4 : 1;
  struct Fault {
    const char* name;
    DecodeKernel kernel;
  };
  std::vector<Fault> faults = {{"drop_tile", decode_fault_kernel(DecodeFault::drop_tile, schedule)},
                               {"stale_tile", decode_fault_kernel(DecodeFault::stale_tile, schedule)},
                               {"lose_split", decode_fault_kernel(DecodeFault::lose_split, schedule)}};
  // Q's e4m3 high part alone in S: fp8 KV's raw-keys body, row tiles only.
  const Fault q_high_only{"q_high_only", decode_fault_kernel(DecodeFault::q_high_only, schedule)};
  // The running max's faults exist only in the warpgroup body's lean step, which the row tiles
  // run: a skipped rescale, and a step that keeps a max its scores passed by more than the
  // slack (kMaxSlack). At the default scale a row's max never rises by the slack past a
  // chunk's first step, which rescales an empty O, so these run on sharp scores (below).
  const Fault stale_max{"stale_max", decode_fault_kernel(DecodeFault::stale_max, schedule)};
  const Fault max_unchecked{"max_unchecked", decode_fault_kernel(DecodeFault::max_unchecked, schedule)};
  std::uint64_t seed = test_seed();
  for (int context : {1024, 65536})
    for (DType kv : {DType::bf16, DType::f16, DType::fp8_e4m3})
      for (bool sharp : {false, true}) {
        // Sharp: softmax scale 32 / sqrt(d), scores in log2 units of standard deviation about 46,
        // so a row's max rises by tens after a chunk's first step (16-bit KV, whose S is exact
        // enough for such a softmax). f16 P overflows past 2^16: a max kept unchecked shows there.
        if (sharp && (row_tiles == 1 || kv == DType::fp8_e4m3)) continue;
        std::vector<Fault> here = sharp ? std::vector<Fault>{stale_max} : faults;
        if (sharp && kv == DType::f16) here.push_back(max_unchecked);
        if (!sharp && row_tiles > 1 && kv == DType::fp8_e4m3) here.push_back(q_high_only);
        DecodeProblem p = make_decode_problem(2, q_heads, kv_heads, 128, page, {context, context}, kv, ++seed);
        if (sharp) p.softmax_scale = 32.f / std::sqrt(128.f);
        if (kv == DType::f16) p.q_dtype = DType::f16;
        const std::string where = label + ", " + std::string(dtype_name(kv)) + ", context " + std::to_string(context) +
                                  ", page " + std::to_string(page) + (sharp ? ", sharp scores" : "");
        DecodePlan plan;
        const AccuracyReport control = run_kernel(shipped, p, seed, &plan);
        EXPECT_EQ(plan.row_tiles, row_tiles) << where << ", no fault";
        EXPECT_TRUE(control.passed) << where << ", no fault: " << control.message;
        std::printf("%s, no fault: %s\n", where.c_str(), control.message.c_str());
        for (const auto& f : here) {
          const AccuracyReport acc = run_kernel(f.kernel, p, seed, &plan);
          EXPECT_EQ(plan.row_tiles, row_tiles) << where << ", " << f.name;
          if (std::string(f.name) == "lose_split") ASSERT_GT(plan.num_splits, 1) << where << ": no split to lose";
          EXPECT_FALSE(acc.passed) << where << ", " << f.name << ": " << acc.message;
          std::printf("%s, %s (%d splits, %d row tiles): %s\n", where.c_str(), f.name, plan.num_splits, plan.row_tiles,
                      acc.message.c_str());
        }
      }
}

TEST(DecodeFaults, EveryFaultFailsTheGate) {
  expect_every_fault_fails(TileSchedule::split, split_rows(), "split");
}

// The token-balanced work list: a dropped or stale tile in a chunk, and a chunk's partial lost
// in the combine of a variable number of partials.
TEST(DecodeFaults, EveryFaultFailsTheGateWithTokenBalancedWork) {
  expect_every_fault_fails(TileSchedule::token_balanced,
                           token_balanced_rows(), "token_balanced");
}

// One key a page: the faults still reach the output through the gathered rows.
TEST(DecodeFaults, EveryFaultFailsTheGateAtPageOne) {
  expect_every_fault_fails(TileSchedule::token_balanced,
                           token_balanced_rows(), "token_balanced",
                           32, 8, /*page=*/1);
}

// MQA 64/1: one CTA of 4 row tiles per (split or chunk, sequence) reads each tile for all of
// them, so a dropped, stale or lost tile reaches every query head; the gate sees it there too.
TEST(DecodeFaults, EveryFaultFailsTheGateAtMqa) {
  expect_every_fault_fails(TileSchedule::split, split_rows(),
                           "split, MQA 64/1", 64, 1);
  expect_every_fault_fails(TileSchedule::token_balanced,
                           token_balanced_rows(),
                           "token_balanced, MQA 64/1", 64, 1);
}

}  // namespace
}  // namespace schedlab::kernels::decode_test
