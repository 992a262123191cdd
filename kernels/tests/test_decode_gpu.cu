// Paged decode against the double reference on the H200, every experiment policy: ragged
// lengths, shuffled block tables, sliding window, GQA, fp8 with scales, split-K on and off,
// a dynamic tile schedule relaunched, the token-balanced work list on ragged batches, and a KV
// pool past 4 GiB; GQA groups above 16 in one CTA of several row tiles (MQA). And the gate's
// power: every injected fault (DecodeFault) fails it, at short and long context, in every KV
// dtype, on the split grid and the token-balanced work list, at GQA 32/8 and at MQA 64/1.
// Label: gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/gpu/runtime.hpp"
#include "experiments/decode_kv_streaming/policy.hpp"
#include "experiments/decode_lds_buffers/policy.hpp"
#include "experiments/decode_page_prefetch/policy.hpp"
#include "experiments/decode_stage_priority/policy.hpp"
#include "experiments/decode_tile_schedule/policy.hpp"
#include "experiments/decode_partial_merge/policy.hpp"
#include "experiments/decode_row_tile_body/policy.hpp"
#include "experiments/decode_work_partition/policy.hpp"
#include "kernels/decode/decode_case.hpp"
#include "kernels/tests/decode_row_tile_variants.hpp"
#include "kernels/tests/fault_kernels.hpp"
#include "kernels/tests/test_seed.hpp"

namespace schedlab::kernels {
namespace {

struct Config {
  const char* name;
  std::vector<int> lens;
  int q_heads, kv_heads, head_dim, page_size;
  DType kv;
  int window;
  int forced_splits;  // 0: the heuristic
};

std::vector<int> many_lengths(int n) {
  std::vector<int> lens(n);
  for (int i = 0; i < n; ++i) lens[i] = 1 + (i * 37) % 300;
  lens[n / 2] = 20000;
  return lens;
}

std::vector<Config> configs() {
  return {
      {"ragged_gqa4_bf16", {1, 15, 17, 3000}, 32, 8, 128, 16, DType::bf16, 0, 0},
      {"all_length_1", {1, 1, 1}, 32, 8, 128, 16, DType::bf16, 0, 0},
      {"ragged_gqa4_bf16_nosplit", {1, 15, 17, 3000}, 32, 8, 128, 16, DType::bf16, 0, 1},
      {"ragged_gqa4_bf16_split7", {1, 15, 17, 3000}, 32, 8, 128, 16, DType::bf16, 0, 7},
      {"ragged_gqa4_bf16_split2", {1, 15, 17, 3000}, 32, 8, 128, 16, DType::bf16, 0, 2},
      {"gqa1_d64_page64", {700, 64, 129}, 8, 8, 64, 64, DType::bf16, 0, 0},
      {"gqa8_f16", {2048, 33}, 32, 4, 128, 16, DType::f16, 0, 0},
      {"gqa16_d64", {999}, 16, 1, 64, 16, DType::bf16, 0, 3},
      {"gqa32_two_ctas_per_kv_head", {700, 33}, 64, 2, 128, 16, DType::bf16, 0, 0},
      {"gqa24_fp8_uneven_chunks", {500}, 48, 2, 128, 16, DType::fp8_e4m3, 0, 2},
      {"gqa2_odd_group", {257, 1000}, 6, 3, 128, 32, DType::bf16, 0, 0},
      {"window", {1, 15, 17, 5000}, 32, 8, 128, 16, DType::bf16, 100, 0},
      {"window_nosplit", {4000, 300}, 32, 8, 128, 16, DType::bf16, 1000, 1},
      {"fp8_scales", {1, 15, 17, 3000}, 32, 8, 128, 16, DType::fp8_e4m3, 0, 0},
      {"fp8_window_d64", {3000, 70}, 16, 4, 64, 64, DType::fp8_e4m3, 333, 0},
      // More (sequence, KV head) units than a dynamic grid has warps: units no warp starts on
      // are found by the warps that run out.
      {"many_units_ragged", many_lengths(700), 32, 8, 128, 16, DType::bf16, 0, 0},
  };
}

template <class Policy>
AccuracyReport run_decode(const DecodeProblem& p, int forced_splits, std::uint64_t seed) {
  DecodeCase c(p, DecodeKernel::of<Policy>(), forced_splits);
  c.prepare(seed, 1);
  c.poison_output();
  c.launch(0);
  c.synchronize();
  return harness::check_output(c, 0);
}

template <class Policy>
class DecodeGpu : public ::testing::Test {};
using Policies = ::testing::Types<
    experiments::decode_stage_priority::plain, experiments::decode_stage_priority::stage_priority,
    experiments::decode_page_prefetch::load_on_use, experiments::decode_lds_buffers::single,
    experiments::decode_lds_buffers::triple_buffer, experiments::decode_lds_buffers::double_3ctas,
    experiments::decode_kv_streaming::resident, experiments::decode_kv_streaming::streaming,
    experiments::decode_tile_schedule::shared_tail, experiments::decode_tile_schedule::persistent,
    experiments::decode_tile_schedule::wide, experiments::decode_lds_buffers::double_bulk,
    experiments::decode_work_partition::split, experiments::decode_work_partition::token_balanced>;
TYPED_TEST_SUITE(DecodeGpu, Policies);

TYPED_TEST(DecodeGpu, MatchesReferenceOnEveryConfig) {
  std::uint64_t seed = test_seed();
  for (const Config& cfg : configs()) {
    DecodeProblem p = make_decode_problem(static_cast<int>(cfg.lens.size()), cfg.q_heads, cfg.kv_heads, cfg.head_dim,
                                          cfg.page_size, cfg.lens, cfg.kv, seed, /*spare_pages=*/7, cfg.window);
    if (cfg.kv == DType::f16) p.q_dtype = DType::f16;  // the kernel reads f16 queries with f16 KV
    const AccuracyReport acc = run_decode<TypeParam>(p, cfg.forced_splits, ++seed);
    EXPECT_TRUE(acc.passed) << cfg.name << ": " << acc.message;
    std::printf("%s: %s\n", cfg.name, acc.message.c_str());
    EXPECT_EQ(acc.nonfinite, 0u) << cfg.name;
  }
}

// Small shapes of the configurations above for compute-sanitizer, every policy: ragged GQA 4 in
// bf16 on the plan's splits and on two forced ones, fp8 with scales, a sliding window, f16.
TYPED_TEST(DecodeGpu, SmallShapesForSanitizer) {
  const std::vector<Config> small = {
      {"ragged_gqa4_bf16", {1, 15, 17, 300}, 32, 8, 128, 16, DType::bf16, 0, 0},
      {"ragged_gqa4_bf16_split2", {1, 15, 17, 300}, 32, 8, 128, 16, DType::bf16, 0, 2},
      {"fp8_scales", {1, 15, 17, 300}, 32, 8, 128, 16, DType::fp8_e4m3, 0, 0},
      {"window_d64", {300, 70}, 16, 4, 64, 64, DType::bf16, 33, 0},
      {"gqa8_f16", {200, 33}, 32, 4, 128, 16, DType::f16, 0, 0},
  };
  std::uint64_t seed = test_seed();
  for (const Config& cfg : small) {
    DecodeProblem p = make_decode_problem(static_cast<int>(cfg.lens.size()), cfg.q_heads, cfg.kv_heads, cfg.head_dim,
                                          cfg.page_size, cfg.lens, cfg.kv, ++seed, /*spare_pages=*/1, cfg.window);
    if (cfg.kv == DType::f16) p.q_dtype = DType::f16;
    const AccuracyReport acc = run_decode<TypeParam>(p, cfg.forced_splits, seed);
    EXPECT_TRUE(acc.passed) << cfg.name << ": " << acc.message;
  }
}

// The schedule counters are left zero by each launch (by the combine for a shared tail, by
// the last warp of a persistent grid): relaunched, with the output poisoned in between, the
// result is still right (a stale counter would skip tiles).
template <class Policy>
void relaunch_and_check(bool persistent) {
  const std::vector<int> lens = {1, 15, 17, 3000, 9000};
  const std::uint64_t seed = test_seed();
  DecodeProblem p = make_decode_problem(5, 32, 8, 128, 16, lens, DType::bf16, seed, 7);
  DecodeCase c(p, DecodeKernel::of<Policy>());
  ASSERT_TRUE(c.plan().needs_schedule());
  ASSERT_EQ(c.plan().dynamic(), persistent);
  c.prepare(seed, 1);
  for (int i = 0; i < 4; ++i) {
    c.poison_output();
    c.launch(0);
    c.synchronize();
    const AccuracyReport acc = harness::check_output(c, 0);
    EXPECT_TRUE(acc.passed) << "launch " << i << ": " << acc.message;
  }
}
TEST(DecodeGpuSchedule, SharedTailRelaunches) {
  relaunch_and_check<experiments::decode_tile_schedule::shared_tail>(false);
}
TEST(DecodeGpuSchedule, PersistentRelaunches) {
  relaunch_and_check<experiments::decode_tile_schedule::persistent>(true);
}

// Launched twice with the output poisoned in between: a plan made once per case is reused.
void launch_twice_and_check(DecodeCase& c, std::uint64_t seed, const std::string& where) {
  c.prepare(seed, 1);
  for (int launch = 0; launch < 2; ++launch) {
    c.poison_output();
    c.launch(0);
    c.synchronize();
    const AccuracyReport acc = harness::check_output(c, 0);
    EXPECT_TRUE(acc.passed) << where << ", launch " << launch << ": " << acc.message;
    EXPECT_EQ(acc.nonfinite, 0u) << where;
  }
}

// The token-balanced work list against the double reference on ragged batches: length 1, one
// long sequence among short ones (cut into many chunks while the short ones stay whole), a
// span of lengths, GQA groups 1 to 16, bf16 and fp8 KV, pages of 16 and 32; relaunched with
// the output poisoned in between (the plan is made once per case and reused).
TEST(DecodeGpuTokenBalanced, MatchesReferenceOnRaggedBatches) {
  using Policy = experiments::decode_work_partition::token_balanced;
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
          DecodeCase c(p, DecodeKernel::of<Policy>());
          ASSERT_TRUE(c.plan().balanced()) << where;
          if (lens == one_long) {
            EXPECT_GT(c.plan().num_splits, 4) << where << ": the long sequence is cut into many chunks";
          }
          launch_twice_and_check(c, seed, where);
        }
}

// GQA groups above 16 in one CTA of several row tiles (decode_work_partition's split and
// token_balanced, DecodePolicy::RowTiles::kMaxRowTiles = 4, computed as one warpgroup for 16-bit KV):
// MQA 64/1, groups 20, 32 and 48 (rows past the group padded with zeros in the warpgroup
// body; in the warp body, warps with no rows of their own only copy), and 80 (two CTAs, of 64
// and 16 rows), against the double
// reference; head dims 128 and 64; bf16 and fp8 KV; ragged lengths with 1 and one long sequence
// among short ones; the plan's splits and forced ones; relaunched with the output poisoned in
// between.
template <class Policy>
void expect_row_tiles_match_reference(bool balanced) {
  std::vector<int> one_long(6, 200);
  one_long.push_back(20000);
  const std::vector<std::vector<int>> batches = {{1, 17, 300, 3000}, one_long, {1}};
  const struct {
    int q_heads, kv_heads, row_tiles, head_dim;
  } groups[] = {{64, 1, 4, 128}, {40, 2, 2, 64}, {32, 1, 2, 128}, {96, 2, 3, 64}, {80, 1, 4, 128}, {64, 1, 4, 64}};
  std::uint64_t seed = test_seed();
  for (const auto& lens : batches)
    for (const auto& grp : groups)
      for (DType kv : {DType::bf16, DType::fp8_e4m3})
        for (int forced : {0, 3}) {
          const int page = lens.size() == 1 ? 32 : 16;
          const DecodeProblem p = make_decode_problem(static_cast<int>(lens.size()), grp.q_heads, grp.kv_heads,
                                                      grp.head_dim, page, lens, kv, ++seed, /*spare_pages=*/3);
          const std::string where = std::to_string(lens.size()) + " sequences up to " +
                                    std::to_string(*std::max_element(lens.begin(), lens.end())) + ", " +
                                    std::to_string(grp.q_heads) + "/" + std::to_string(grp.kv_heads) + ", D " +
                                    std::to_string(grp.head_dim) + ", " +
                                    std::string(dtype_name(kv)) + ", forced splits " + std::to_string(forced);
          DecodeCase c(p, DecodeKernel::of<Policy>(), forced);
          ASSERT_EQ(c.plan().row_tiles, grp.row_tiles) << where;
          ASSERT_EQ(c.plan().balanced(), balanced && forced == 0) << where;
          if (forced > 0) {
            ASSERT_EQ(c.plan().num_splits, 3) << where;
          }
          launch_twice_and_check(c, seed, where);
        }
}
TEST(DecodeGpuRowTiles, SplitMatchesReference) {
  expect_row_tiles_match_reference<experiments::decode_work_partition::split>(false);
}
TEST(DecodeGpuRowTiles, TokenBalancedMatchesReference) {
  expect_row_tiles_match_reference<experiments::decode_work_partition::token_balanced>(true);
}
// Small shapes for compute-sanitizer (memcheck, racecheck, synccheck), which slows each launch
// by orders of magnitude: the row-tile bodies and the token-balanced merge, MQA 64/1 and a
// group of 32, a length of 1, a range that is no multiple of a warpgroup step, and one unit cut
// into several chunks; the plan's splits and forced ones, bf16 and fp8. Every row-tile variant
// the tests above run, each a test of its own (scripts/device_full.sh can then run each in a
// process of its own).
class DecodeGpuRowTileVariant : public ::testing::TestWithParam<NamedDecodeKernel> {};
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
INSTANTIATE_TEST_SUITE_P(RowTiles, DecodeGpuRowTileVariant, ::testing::ValuesIn(decode_row_tile_variants()),
                         [](const ::testing::TestParamInfo<NamedDecodeKernel>& v) { return std::string(v.param.name); });

// The same shapes with the row tiles computed warp by warp (RowTileMma::warp), the body the
// warpgroup one replaced for 16-bit KV on sm_90a and the one fp8 KV and AMD still run.
TEST(DecodeGpuRowTiles, WarpRowsMatchReference) {
  expect_row_tiles_match_reference<experiments::decode_row_tile_body::token_balanced_warp_rows>(true);
}
// fp8 raw keys with Q's low part's e4m3 steps first (kRawKeysLowFirst).
TEST(DecodeGpuRowTiles, LowFirstMatchesReference) {
  expect_row_tiles_match_reference<experiments::decode_row_tile_body::token_balanced_low_first>(true);
}
// The combine kernel a warp per row (kCombineWarpPerRow), every row-tile unit cut into chunks
// merged there, and forced splits (a partial per split of every row) through the same kernel.
// Last, 36 query heads (groups of 18): the last combine CTA of each sequence has 4 warps with
// no row.
TEST(DecodeGpuRowTiles, WarpCombineMatchesReference) {
  using Policy = experiments::decode_partial_merge::token_balanced_warp_combine;
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
  using Policy = experiments::decode_partial_merge::token_balanced_row_list;
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
// Slots filled evenly (kFillSlots): a unit's chunks of different sizes, listed by when the plan
// starts them, on ragged batches whose filled plan differs from the even cut (the long-tailed
// batch, lengths from one token to 30000, a group of 32 with one long sequence), bf16 and fp8.
TEST(DecodeGpuTokenBalanced, FilledSlotsMatchReference) {
  namespace x = experiments::decode_work_partition;
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
      const bool filled = c.plan().work != plan_paged_decode<experiments::decode_partial_merge::token_balanced_row_list>(p, 0).work;
      if (gpu::device_info().sm_count == 132)
        EXPECT_EQ(filled, &b == &batches.front() && kv == DType::fp8_e4m3) << where;
      launch_twice_and_check(c, seed, where);
    }
}
// Units of more than four rows a warp merged by the combine kernel
// (kMaxInKernelMergeRowsPerWarp 4): every row-tile unit cut into chunks.
TEST(DecodeGpuRowTiles, RowTilesCombineMatchesReference) {
  expect_row_tiles_match_reference<experiments::decode_partial_merge::token_balanced_row_tiles_combine>(true);
}

// The device memory a case states (the harness refuses a case over the device's free memory
// by it) covers what prepare() allocates: a buffer added to the case and not to
// decode_case_device_bytes shows here. Token-balanced: partials, counters and work list too.
TEST(DecodeGpuMemory, StatedBytesCoverWhatPrepareAllocates) {
  const DecodeProblem p = make_decode_problem(16, 32, 8, 128, 16, std::vector<int>(16, 16384), DType::bf16, 5);
  DecodeCase c(p, DecodeKernel::of<experiments::decode_work_partition::token_balanced>());
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
  // Per-lane copies with 64-bit offsets, and bulk tensor copies (64-bit base, row coordinates).
  const AccuracyReport acc = run_decode<experiments::decode_kv_streaming::streaming>(p, 0, seed + 1);
  EXPECT_TRUE(acc.passed) << acc.message;
  const AccuracyReport bulk = run_decode<experiments::decode_lds_buffers::double_bulk>(p, 0, seed + 2);
  EXPECT_TRUE(bulk.passed) << "bulk copies: " << bulk.message;
}

// Pages smaller than a tile (1 to 8 keys; one key a page is a radix cache's layout): each of a
// tile's rows is gathered from its own page. The default and the split schedule against the
// double reference, GQA 32/8 (the warp body) and MQA 64/1 (the row-tile body), bf16 and fp8,
// ragged lengths with 1 and lengths that end inside a page and inside a tile; the block table
// is a random permutation of the pool, so a row read from its neighbour's page fails. Bulk
// copies (a box of 16 contiguous rows) refuse such pages at plan time.
template <class Policy>
void expect_small_pages_match_reference(const std::vector<std::vector<int>>& batches) {
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
          DecodeCase c(p, DecodeKernel::of<Policy>());
          launch_twice_and_check(c, seed, where);
        }
}
TEST(DecodeGpuSmallPages, TokenBalancedMatchesReference) {
  expect_small_pages_match_reference<experiments::decode_work_partition::token_balanced>(
      {{1, 7, 17, 3001}, {20000, 5, 300}});
}
TEST(DecodeGpuSmallPages, SplitMatchesReference) {
  expect_small_pages_match_reference<experiments::decode_work_partition::split>({{1, 7, 17, 3001}});
}
TEST(DecodeGpuSmallPages, SmallShapesForSanitizer) {
  expect_small_pages_match_reference<experiments::decode_work_partition::token_balanced>({{1, 75, 1200}});
}
TEST(DecodeGpuSmallPages, BulkCopiesRefuseThem) {
  const DecodeProblem p = make_decode_problem(2, 32, 8, 128, 1, {300, 17}, DType::bf16, 1);
  EXPECT_THROW(DecodeCase(p, DecodeKernel::of<experiments::decode_lds_buffers::double_bulk>()), UnsupportedProblem);
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
  expect_every_fault_fails(TileSchedule::split, DecodeKernel::of<experiments::decode_kv_streaming::streaming>(), "split");
}

// The token-balanced work list: a dropped or stale tile in a chunk, and a chunk's partial lost
// in the combine of a variable number of partials.
TEST(DecodeFaults, EveryFaultFailsTheGateWithTokenBalancedWork) {
  expect_every_fault_fails(TileSchedule::token_balanced,
                           DecodeKernel::of<experiments::decode_work_partition::token_balanced>(), "token_balanced");
}

// One key a page: the faults still reach the output through the gathered rows.
TEST(DecodeFaults, EveryFaultFailsTheGateAtPageOne) {
  expect_every_fault_fails(TileSchedule::token_balanced,
                           DecodeKernel::of<experiments::decode_work_partition::token_balanced>(), "token_balanced",
                           32, 8, /*page=*/1);
}

// MQA 64/1: one CTA of 4 row tiles per (split or chunk, sequence) reads each tile for all of
// them, so a dropped, stale or lost tile reaches every query head; the gate sees it there too.
TEST(DecodeFaults, EveryFaultFailsTheGateAtMqa) {
  expect_every_fault_fails(TileSchedule::split, DecodeKernel::of<experiments::decode_work_partition::split>(),
                           "split, MQA 64/1", 64, 1);
  expect_every_fault_fails(TileSchedule::token_balanced,
                           DecodeKernel::of<experiments::decode_work_partition::token_balanced>(),
                           "token_balanced, MQA 64/1", 64, 1);
}

}  // namespace
}  // namespace schedlab::kernels
