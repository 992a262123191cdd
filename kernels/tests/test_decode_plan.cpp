// The decode split plan on the host (no GPU): static splits for one wave, the dynamic
// schedule's persistent grid and partial slots, and forced splits overriding either.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/decode/decode_shapes.hpp"
#include "kernels/decode/paged_decode.hpp"

namespace schedlab::kernels {
namespace {

DecodeProblem problem(int batch, int context, int q_heads = 32, int kv_heads = 8) {
  return make_decode_problem(batch, q_heads, kv_heads, 128, 16, std::vector<int>(batch, context), DType::bf16, 1);
}

constexpr int kSlots = 264;  // H200: 132 SMs x 2 CTAs
constexpr int kWarps = 4;

TEST(DecodePlan, StaticSplitsFillOneWave) {
  const DecodePlan plan = plan_decode(problem(16, 16384), {.cta_slots = kSlots, .warps = kWarps});
  EXPECT_FALSE(plan.dynamic());
  EXPECT_EQ(plan.num_splits, 2);  // 128 (sequence, KV head) CTAs x 2 on 264 slots
  EXPECT_EQ(plan.tiles_per_split, 512);
  EXPECT_TRUE(plan.needs_combine());
  EXPECT_FALSE(plan_decode(problem(64, 4096), {.cta_slots = kSlots, .warps = kWarps}).needs_combine());
}

TEST(DecodePlan, DynamicIsOnePersistentWave) {
  const DecodeProblem p = problem(16, 16384);
  const DecodePlan plan = plan_decode(p, {.cta_slots = kSlots, .warps = kWarps, .schedule = TileSchedule::persistent});
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
  const DecodePlan plan = plan_decode(problem(1, 1024), {.cta_slots = kSlots, .warps = kWarps,
      .schedule = TileSchedule::persistent});
  EXPECT_EQ(plan.ctas, 32);
  EXPECT_EQ(plan.num_splits, 16 + kDynamicJoins);
  EXPECT_EQ(plan_decode(problem(1, 1), {.cta_slots = kSlots, .warps = kWarps,
      .schedule = TileSchedule::persistent}).ctas, 1);
}

TEST(DecodePlan, ForcedSplitsUseTheStaticGrid) {
  const DecodePlan plan = plan_decode(problem(4, 3000), {.cta_slots = kSlots, .warps = kWarps, .forced_splits = 7,
      .schedule = TileSchedule::persistent});
  EXPECT_FALSE(plan.dynamic());
  EXPECT_TRUE(plan.shared_tail);
  EXPECT_EQ(plan.num_splits, 7);
  const DecodePlan one = plan_decode(problem(4, 3000), {.cta_slots = kSlots, .warps = kWarps, .forced_splits = 1,
      .schedule = TileSchedule::persistent});
  EXPECT_FALSE(one.needs_combine());
  EXPECT_FALSE(one.needs_schedule());
}

TEST(DecodePlan, SharedTailOnlyWithSplits) {
  const DecodePlan two = plan_decode(problem(16, 16384), {.cta_slots = kSlots, .warps = kWarps,
      .schedule = TileSchedule::shared_tail});
  EXPECT_EQ(two.num_splits, 2);
  EXPECT_TRUE(two.shared_tail);
  EXPECT_TRUE(two.needs_schedule());
  EXPECT_FALSE(plan_decode(problem(64, 4096), {.cta_slots = kSlots, .warps = kWarps,
      .schedule = TileSchedule::shared_tail}).needs_schedule());
  EXPECT_FALSE(plan_decode(problem(16, 16384), {.cta_slots = kSlots, .warps = kWarps}).needs_schedule());
}

TEST(DecodePlan, GroupChunksAreUnits) {
  // 64 query heads on 2 KV heads: groups of 32, two chunks of 16 rows per KV head.
  EXPECT_EQ(decode_work_pairs(problem(3, 100, 64, 2)), 3 * 2 * 2);
}

// ---- row tiles: a GQA group above 16 in one CTA ----

constexpr int kRowTiles = SplitRows::RowTiles::kMaxRowTiles;

DecodePlan plan_with_row_tiles(const DecodeProblem& p, TileSchedule schedule, int forced_splits = 0) {
  return plan_decode(p, {.cta_slots = kSlots, .warps = kWarps, .forced_splits = forced_splits, .schedule = schedule,
      .chunk_overhead_tiles = DecodePolicy::Partition::kChunkOverheadTiles, .max_row_tiles = kRowTiles});
}

// Groups of 17 to 64 query heads are one CTA of ceil(group / 16) row tiles; a larger group is
// cut into CTAs of at most kMaxRowTiles of them; 16 or fewer stay one row tile (the unchanged
// kernel), whatever the policy allows.
TEST(DecodeRowTiles, LargeGroupsAreOneCtaOfSeveralRowTiles) {
  const struct {
    int q_heads, kv_heads, row_tiles, chunks;
  } cases[] = {{64, 1, 4, 1}, {20, 1, 2, 1}, {32, 1, 2, 1}, {48, 1, 3, 1}, {96, 2, 3, 1}, {80, 1, 4, 2},
               {128, 1, 4, 2}, {16, 1, 1, 1}, {32, 8, 1, 1}, {6, 3, 1, 1}};
  for (const auto& c : cases)
    for (TileSchedule schedule : {TileSchedule::split, TileSchedule::token_balanced}) {
      const DecodeProblem p = problem(3, 700, c.q_heads, c.kv_heads);
      const std::string where = std::to_string(c.q_heads) + "/" + std::to_string(c.kv_heads);
      EXPECT_EQ(decode_row_tiles(p, schedule, kRowTiles), c.row_tiles) << where;
      EXPECT_EQ(decode_group_chunks(p, c.row_tiles), c.chunks) << where;
      EXPECT_EQ(decode_work_pairs(p, c.row_tiles), 3 * c.kv_heads * c.chunks) << where;
      EXPECT_EQ(plan_with_row_tiles(p, schedule).row_tiles, c.row_tiles) << where;
      // A policy without row tiles cuts the group into CTAs of 16 rows, as before.
      EXPECT_EQ(decode_row_tiles(p, schedule, 1), 1) << where;
      EXPECT_EQ(plan_decode(p, {.cta_slots = kSlots, .warps = kWarps, .schedule = schedule}).row_tiles, 1) << where;
    }
  EXPECT_THROW(decode_row_tiles(problem(1, 100), TileSchedule::split, 0), std::invalid_argument);
}

// The persistent and shared-tail schedules hand tiles out one by one from counters and keep
// 16-row units: their plans, units and counters do not change.
TEST(DecodeRowTiles, OnlyTheSplitAndTokenBalancedSchedulesUseThem) {
  const DecodeProblem p = problem(4, 3000, 64, 1);
  for (TileSchedule schedule : {TileSchedule::persistent, TileSchedule::shared_tail}) {
    EXPECT_EQ(decode_row_tiles(p, schedule, kRowTiles), 1);
    EXPECT_EQ(plan_with_row_tiles(p, schedule).row_tiles, 1);
  }
  EXPECT_EQ(decode_work_pairs(p), 4 * 4);
  EXPECT_EQ(decode_schedule_ints(p), 3 * 16 + 2);
}

// MQA 64/1 at batch 128, 16k (the benchmark's shape): 128 CTAs of 4 row tiles, split in 2 to
// fill the 264 slots, where 16-row units made 512 CTAs that each read the whole KV (4x the
// bytes). Forced splits keep the row tiles.
TEST(DecodeRowTiles, MqaSplitPlanReadsTheKvOnce) {
  const DecodeProblem p = problem(128, 16384, 64, 1);
  const DecodePlan plan = plan_with_row_tiles(p, TileSchedule::split);
  EXPECT_EQ(plan.row_tiles, 4);
  EXPECT_EQ(plan.num_splits, 2);
  EXPECT_EQ(plan.tiles_per_split, 512);
  const DecodePlan rows16 = plan_decode(p, {.cta_slots = kSlots, .warps = kWarps});
  EXPECT_EQ(rows16.row_tiles, 1);
  EXPECT_EQ(rows16.num_splits, 1);  // 512 CTAs already past the slots
  EXPECT_EQ(decode_work_pairs(p, rows16.row_tiles), 4 * decode_work_pairs(p, plan.row_tiles));
  const DecodePlan forced = plan_with_row_tiles(p, TileSchedule::token_balanced, 3);
  EXPECT_FALSE(forced.balanced());
  EXPECT_EQ(forced.row_tiles, 4);
  EXPECT_EQ(forced.num_splits, 3);
  EXPECT_FALSE(forced.needs_schedule());  // no shared tail: the row-tile body keeps fixed ranges
}

// The token-balanced work list over units of row tiles: every unit of the (sequence, KV head,
// chunk of 16 x row_tiles heads) numbering appears with its own partial count, and the cut is
// the one a batch of that many units of 16 rows would get.
TEST(DecodeRowTiles, TokenBalancedWorkListCountsRowTileUnits) {
  const DecodeProblem p = make_decode_problem(4, 80, 1, 128, 16, {1, 300, 17, 20000}, DType::bf16, 1);  // group 80
  const DecodePlan plan = plan_with_row_tiles(p, TileSchedule::token_balanced);
  ASSERT_TRUE(plan.balanced());
  EXPECT_EQ(plan.row_tiles, 4);
  const int units = decode_work_pairs(p, plan.row_tiles);  // 4 sequences x 2 chunks (64 + 16 rows)
  ASSERT_EQ(units, 8);
  ASSERT_EQ(plan.work.unit_partials.size(), std::size_t(units));
  ASSERT_EQ(plan.work.combine_merged.size(), std::size_t(units));
  std::vector<int> seen(units, 0);
  for (const DecodeWorkList::Chunk& c : plan.work.chunks) {
    ASSERT_LT(c.unit, units);
    ++seen[c.unit];
  }
  for (int u = 0; u < units; ++u) EXPECT_EQ(seen[u], plan.work.unit_partials[u]) << "unit " << u;
  const DecodeWorkPartition w =
      partition_decode_work(p.context_lens, 2, kDecodeTileTokens, kSlots, kWarps * kMinTilesPerWarp);
  EXPECT_EQ(plan.work.chunks.size(), w.chunks.size());
}

// ---- the token-balanced partition ----

std::vector<int> repeat(int n, int len) { return std::vector<int>(n, len); }
std::vector<int> concat(std::vector<int> a, const std::vector<int>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Every unit's visible tiles are covered once, in order, by chunks 0 .. count-1 of at least
// min_chunk tiles (or the whole unit), none longer than the chunk size aimed at.
// even = false (a filled partition): chunks of one unit may differ, each at least min_chunk
// tiles unless its unit is shorter, and the grid is not longest first.
void expect_covers(const DecodeWorkPartition& w, const std::vector<int>& lens, int heads, int min_chunk, int window = 0,
                   bool even = true) {
  const int units = static_cast<int>(lens.size()) * heads;
  ASSERT_EQ(int(w.partial_count.size()), units);
  ASSERT_EQ(int(w.partial_offset.size()), units);
  std::vector<std::vector<const DecodeWorkChunk*>> by_unit(units);
  for (const DecodeWorkChunk& c : w.chunks) by_unit.at(std::size_t(c.seq) * heads + c.head).push_back(&c);
  int offset = 0, most = 0;
  for (int u = 0; u < units; ++u) {
    const int len = lens[u / heads], first = (window > 0 ? std::max(0, len - window) : 0) / 16, end = (len + 15) / 16;
    auto& cs = by_unit[u];
    std::sort(cs.begin(), cs.end(), [](auto* a, auto* b) { return a->partial < b->partial; });
    ASSERT_EQ(int(cs.size()), w.partial_count[u]) << "unit " << u;
    EXPECT_EQ(w.partial_offset[u], offset) << "unit " << u;
    offset += w.partial_count[u];
    most = std::max(most, w.partial_count[u]);
    int next = first;
    for (int k = 0; k < int(cs.size()); ++k) {
      EXPECT_EQ(cs[k]->partial, k);
      EXPECT_EQ(cs[k]->first_tile, next) << "unit " << u << " chunk " << k;
      EXPECT_GE(cs[k]->tiles, 1);
      EXPECT_LE(cs[k]->tiles, w.chunk_tiles);
      if (cs.size() > 1 && even) EXPECT_GE(cs[k]->tiles, min_chunk / 2) << "unit " << u;  // an even cut of >= min_chunk
      if (!even) EXPECT_GE(cs[k]->tiles, std::min(min_chunk, end - first)) << "unit " << u << " chunk " << k;
      next += cs[k]->tiles;
    }
    EXPECT_EQ(next, end) << "unit " << u;
  }
  EXPECT_EQ(w.max_partials, most);
  if (even)
    for (std::size_t i = 1; i < w.chunks.size(); ++i) EXPECT_GE(w.chunks[i - 1].tiles, w.chunks[i].tiles) << "longest first";
}

// When the last chunk ends if the grid's chunks, in grid order, each go to whichever of `slots`
// frees first (as the hardware hands out CTAs), a chunk costing its tiles plus `overhead`.
std::int64_t grid_end(const DecodeWorkPartition& w, int slots, int overhead) {
  std::vector<std::int64_t> free_at(slots, 0);
  std::int64_t end = 0;
  for (const DecodeWorkChunk& c : w.chunks) {
    auto first_free = std::min_element(free_at.begin(), free_at.end());
    *first_free += c.tiles + overhead;
    end = std::max(end, *first_free);
  }
  return end;
}
std::int64_t total_tiles(const DecodeWorkPartition& w) {
  std::int64_t t = 0;
  for (const DecodeWorkChunk& c : w.chunks) t += c.tiles;
  return t;
}

TEST(DecodeWorkPartition, UniformBatchIsTheOneWaveSplit) {
  const std::vector<int> lens = repeat(16, 16384);
  const DecodeWorkPartition w = partition_decode_work(lens, 8, 16, kSlots, 16);
  expect_covers(w, lens, 8, 16);
  EXPECT_EQ(w.chunks.size(), 256u);  // 128 units x 2, as the split grid at this shape
  EXPECT_EQ(w.max_partials, 2);
  EXPECT_EQ(w.chunk_tiles, 512);
}

// fp8's chunk overhead (DecodePolicy::Partition::kChunkOverheadTilesFp8) keeps a uniform batch that
// already fills most of the slots in one chunk per unit, as the split grid, where the 16-bit
// overhead cuts it into several waves of short chunks (which ran slower with fp8 KV); and it
// still cuts a batch's one long sequence finer than one wave allows (whose long chunks ran on
// too few warps).
TEST(DecodeWorkPartition, ChunkOverheadDecidesTheCutOfAUniformBatch) {
  const std::vector<int> lens = repeat(32, 2592);
  constexpr int kFp8Slots = 396;  // 3 CTAs on each of 132 SMs
  const DecodeWorkPartition fp8 =
      partition_decode_work(lens, 8, 16, kFp8Slots, 16, 0, DecodePolicy::Partition::kChunkOverheadTilesFp8);
  expect_covers(fp8, lens, 8, 16);
  EXPECT_EQ(fp8.chunks.size(), 256u);
  EXPECT_EQ(fp8.max_partials, 1);
  const DecodeWorkPartition cheap = partition_decode_work(lens, 8, 16, kFp8Slots, 16, 0, 4);
  expect_covers(cheap, lens, 8, 16);
  EXPECT_GT(cheap.chunks.size(), 256u);
  EXPECT_THROW(partition_decode_work(lens, 8, 16, kFp8Slots, 16, 0, -1), std::invalid_argument);
  const std::vector<int> one_long = concat(repeat(31, 1024), {51200});
  const DecodeWorkPartition rag =
      partition_decode_work(one_long, 8, 16, kFp8Slots, 16, 0, DecodePolicy::Partition::kChunkOverheadTilesFp8);
  expect_covers(rag, one_long, 8, 16);
  EXPECT_GT(rag.chunks.size(), std::size_t(kFp8Slots));
  EXPECT_GT(rag.partial_count[31 * 8], (kFp8Slots - 31 * 8) / 8);
}

TEST(DecodeWorkPartition, OneLongSequenceGetsManyChunks) {
  const std::vector<int> lens = concat(repeat(31, 1024), {51200});
  const DecodeWorkPartition w = partition_decode_work(lens, 8, 16, kSlots, 16);
  expect_covers(w, lens, 8, 16);
  const std::int64_t total = (31 * 64 + 3200) * 8;
  for (int h = 0; h < 8; ++h) EXPECT_GE(w.partial_count[31 * 8 + h], 3200 / w.chunk_tiles) << "long head " << h;
  for (int u = 0; u < 31 * 8; ++u) EXPECT_EQ(w.partial_count[u], 1) << "short unit " << u;
  // No chunk above twice the fair share of a slot: the split grid gives this batch 1 split and
  // its long sequence 3200 tiles per CTA.
  EXPECT_LE(w.chunk_tiles, 2 * (total + kSlots - 1) / kSlots);
}

TEST(DecodeWorkPartition, SpanOfLengthsFromOneTo65536) {
  const std::vector<int> lens = {1, 16, 256, 2048, 8192, 16384, 32768, 65536};
  const DecodeWorkPartition w = partition_decode_work(lens, 8, 16, kSlots, 16);
  expect_covers(w, lens, 8, 16);
  EXPECT_EQ(w.partial_count[0], 1);                    // length 1: one tile, one chunk
  EXPECT_GT(w.partial_count[7 * 8], w.partial_count[4 * 8]);  // 65536 cut finer than 8192
  EXPECT_LE(w.chunks.size(), std::size_t(8) * kSlots);
}

TEST(DecodeWorkPartition, LengthOneAndWindowsAndTinyGrids) {
  const std::vector<int> ones = repeat(5, 1);
  const DecodeWorkPartition w1 = partition_decode_work(ones, 3, 16, kSlots);
  expect_covers(w1, ones, 3, 1);
  EXPECT_EQ(w1.chunks.size(), 15u);
  EXPECT_EQ(w1.max_partials, 1);
  const std::vector<int> ragged = {1, 15, 17, 3000, 9000, 250};
  for (int slots : {1, 7, 64, 264, 1000})
    for (int window : {0, 100}) {
      const DecodeWorkPartition w = partition_decode_work(ragged, 4, 16, slots, 1, window);
      expect_covers(w, ragged, 4, 1, window);
      if (slots == 1) EXPECT_EQ(w.max_partials, 1) << "one slot: nothing to gain from cutting";
    }
}

// Whether two partitions list the same chunks (first tile and size) in the same order.
bool same_chunks(const DecodeWorkPartition& a, const DecodeWorkPartition& b) {
  if (a.chunks.size() != b.chunks.size()) return false;
  for (std::size_t i = 0; i < a.chunks.size(); ++i)
    if (a.chunks[i].first_tile != b.chunks[i].first_tile || a.chunks[i].tiles != b.chunks[i].tiles) return false;
  return true;
}

// The long-tailed batch at fp8's slots and overhead: cut evenly, its 81-tile chunks fill the
// first wave and 180 short units run after them on part of the GPU (the model's end 144
// against total / slots + overhead = 104); filled, each slot takes a short unit whole and a
// piece of a long one (two overheads for such a slot), and in grid order it ends at 120.
TEST(DecodeWorkPartition, FilledSlotsEvenOutALongTailedBatch) {
  const std::vector<int> lens = concat(concat(concat(concat(repeat(16, 128), repeat(8, 512)), repeat(4, 2048)),
                                             repeat(2, 8192)), {32768});
  constexpr int kFp8Slots = 396, kOverhead = DecodePolicy::Partition::kChunkOverheadTilesFp8;
  const DecodeWorkPartition even = partition_decode_work(lens, 8, 16, kFp8Slots, 16, 0, kOverhead, false);
  const DecodeWorkPartition filled = partition_decode_work(lens, 8, 16, kFp8Slots, 16, 0, kOverhead, true);
  expect_covers(filled, lens, 8, 16, 0, /*even=*/false);
  EXPECT_EQ(total_tiles(filled), total_tiles(even));
  const std::int64_t ideal = (total_tiles(even) + kFp8Slots - 1) / kFp8Slots + kOverhead;
  EXPECT_EQ(grid_end(even, kFp8Slots, kOverhead), 144);
  EXPECT_LT(grid_end(filled, kFp8Slots, kOverhead), ideal + 2 * kOverhead);
  EXPECT_LT(grid_end(filled, kFp8Slots, kOverhead), grid_end(even, kFp8Slots, kOverhead) * 17 / 20);
  // Units of 8 and 32 tiles are never cut.
  for (int u = 0; u < 24 * 8; ++u) EXPECT_EQ(filled.partial_count[u], 1) << "unit " << u;
}

// A batch the even cut already balances keeps it: the same chunks with and without filling.
TEST(DecodeWorkPartition, FilledSlotsKeepABalancedEvenCut) {
  for (const auto& lens : {repeat(16, 16384), repeat(64, 4096)}) {
    const DecodeWorkPartition even = partition_decode_work(lens, 8, 16, kSlots, 16, 0, 4, false);
    const DecodeWorkPartition filled = partition_decode_work(lens, 8, 16, kSlots, 16, 0, 4, true);
    ASSERT_EQ(filled.chunks.size(), even.chunks.size());
    for (std::size_t i = 0; i < even.chunks.size(); ++i) {
      EXPECT_EQ(filled.chunks[i].first_tile, even.chunks[i].first_tile);
      EXPECT_EQ(filled.chunks[i].tiles, even.chunks[i].tiles);
    }
  }
}

// Filled partitions of awkward batches still cover every tile once, with pieces of at least
// the least chunk, whatever the slots and windows, and never end later in grid order than the
// even cut's model.
TEST(DecodeWorkPartition, FilledSlotsCoverEveryTileOnce) {
  const std::vector<int> ragged = {1, 15, 17, 3000, 9000, 250, 65536, 40, 40, 700};
  int filled = 0;  // cases where the filled partition was taken, not the even cut
  for (int slots : {1, 2, 7, 64, 264, 396, 1000})
    for (int window : {0, 100, 5000})
      for (int overhead : {0, 4, 24}) {
        const std::string where = "slots " + std::to_string(slots) + " window " + std::to_string(window) +
                                  " overhead " + std::to_string(overhead);
        const DecodeWorkPartition even = partition_decode_work(ragged, 4, 16, slots, 16, window, overhead, false);
        const DecodeWorkPartition w = partition_decode_work(ragged, 4, 16, slots, 16, window, overhead, true);
        SCOPED_TRACE(where);
        const bool same = same_chunks(w, even);
        expect_covers(w, ragged, 4, 16, window, /*even=*/same);
        EXPECT_LE(grid_end(w, slots, overhead), grid_end(even, slots, overhead));
        filled += !same;
      }
  EXPECT_GE(filled, 3) << "of 63 cases";
}

// The filled plan only where the even cut runs in more than one wave and no unit gets more
// partials: of the ragged benchmark batches at an H200's slots (264 for 16-bit KV and the row
// tiles, 396 for fp8 at 32/8), the long-tailed fp8 batch alone. Its bf16 twin and the one-long
// batches would be filled with more partials a unit (on the H200 the filled plan was slower
// on those), the uniform twins fit one wave.
TEST(DecodeWorkPartition, FilledSlotsOnlyWhereTheEvenCutRunsInWaves) {
  const std::vector<int> long_tailed = concat(
      concat(concat(concat(repeat(16, 128), repeat(8, 512)), repeat(4, 2048)), repeat(2, 8192)), {32768});
  const std::vector<int> one_long = concat(repeat(31, 1024), {51200});
  const std::vector<int> span = {1, 16, 256, 2048, 8192, 16384, 32768, 65536};
  struct Case {
    std::vector<int> lens;
    int heads;
    bool fp8, filled;
  };
  const std::vector<Case> cases = {
      {long_tailed, 8, true, true},  {long_tailed, 8, false, false}, {repeat(31, 2048), 8, true, false},
      {one_long, 8, true, false},    {one_long, 8, false, false},    {one_long, 2, false, false},
      {span, 8, true, false},        {span, 8, false, false},        {repeat(128, 16384), 1, true, false},
      {repeat(16, 16384), 8, false, false}};
  for (const Case& c : cases) {
    const int slots = c.fp8 && c.heads == 8 ? 396 : kSlots;
    const int overhead = c.fp8 ? DecodePolicy::Partition::kChunkOverheadTilesFp8 : DecodePolicy::Partition::kChunkOverheadTiles;
    const DecodeWorkPartition even = partition_decode_work(c.lens, c.heads, 16, slots, 16, 0, overhead, false);
    const DecodeWorkPartition w = partition_decode_work(c.lens, c.heads, 16, slots, 16, 0, overhead, true);
    const bool same = same_chunks(w, even);
    const std::string where = std::to_string(c.lens.size()) + " sequences, " + std::to_string(c.heads) + " heads, " +
                              (c.fp8 ? "fp8" : "bf16");
    EXPECT_EQ(!same, c.filled) << where;
    if (!same) EXPECT_LE(w.max_partials, even.max_partials) << where;
  }
}

TEST(DecodeWorkPartition, RejectsBadInput) {
  EXPECT_THROW(partition_decode_work({4, 0}, 8, 16, kSlots), std::invalid_argument);
  EXPECT_THROW(partition_decode_work({4}, 8, 16, 0), std::invalid_argument);
  EXPECT_THROW(partition_decode_work({4}, 0, 16, kSlots), std::invalid_argument);
}

TEST(DecodePlan, TokenBalancedUploadsItsWorkList) {
  const DecodeProblem p = make_decode_problem(4, 8, 2, 128, 16, {1, 300, 17, 20000}, DType::bf16, 1);
  const DecodePlan plan = plan_decode(p, {.cta_slots = kSlots, .warps = kWarps,
      .schedule = TileSchedule::token_balanced});
  ASSERT_TRUE(plan.balanced());
  EXPECT_FALSE(plan.dynamic());
  const int units = decode_work_pairs(p);  // 4 sequences x 2 KV heads
  ASSERT_EQ(plan.work.unit_partials.size(), std::size_t(units));
  int most = 0;
  std::vector<int> seen(units, 0);
  for (const DecodeWorkList::Chunk& c : plan.work.chunks) {
    ASSERT_LT(c.unit, units);
    EXPECT_LT(c.partial, plan.work.unit_partials[c.unit]);
    ++seen[c.unit];
  }
  for (int u = 0; u < units; ++u) {
    EXPECT_EQ(seen[u], plan.work.unit_partials[u]) << "unit " << u;
    EXPECT_FALSE(plan.work.combine_merged[u]) << "unit " << u;
    most = std::max(most, seen[u]);
  }
  // The device buffer: the chunks' 4 ints, then the counts (none negated: no unit goes to the
  // combine kernel).
  const std::vector<int> words = plan.work.device_words();
  ASSERT_EQ(words.size(), 4 * plan.work.chunks.size() + units);
  EXPECT_EQ(words[4], plan.work.chunks[1].unit);
  EXPECT_EQ(words[7], plan.work.chunks[1].partial);
  EXPECT_EQ(words[4 * plan.work.chunks.size() + units - 1], plan.work.unit_partials.back());
  EXPECT_EQ(plan.num_splits, most);
  EXPECT_GT(plan.num_splits, 1);  // the 20000-token sequence is cut
  // Its chunks write partials and count their arrivals on one counter per unit (the schedule
  // buffer); the last to arrive merges them in the kernel, so no combine kernel is launched.
  EXPECT_TRUE(plan.needs_partials());
  EXPECT_TRUE(plan.needs_schedule());
  EXPECT_TRUE(plan.kernel_merges);
  EXPECT_FALSE(plan.combine_merges);
  EXPECT_FALSE(plan.needs_combine());
  EXPECT_GE(decode_schedule_ints(p), units);
  // Units of many rows cut into many chunks (groups of 32 in two 16-row units, the long
  // sequence in dozens of chunks): a merge too long for one CTA goes to the combine kernel,
  // and no arrival counters are needed.
  const DecodeProblem wide = make_decode_problem(4, 64, 2, 128, 16, {1, 300, 17, 20000}, DType::bf16, 1);
  const DecodePlan combined = plan_decode(wide, {.cta_slots = kSlots, .warps = kWarps,
      .schedule = TileSchedule::token_balanced});
  ASSERT_TRUE(combined.balanced());
  ASSERT_GT((kDecodeMaxGroup + kWarps - 1) / kWarps * combined.num_splits, kMaxInKernelMergeSteps);
  EXPECT_FALSE(combined.kernel_merges);
  EXPECT_TRUE(combined.combine_merges);
  EXPECT_TRUE(combined.needs_partials() && combined.needs_combine());
  EXPECT_FALSE(combined.needs_schedule());
  // Every cut unit is merged by the combine kernel (its count negated in the device buffer);
  // whole units keep 1.
  const std::vector<int> combined_words = combined.work.device_words();
  for (int u = 0; u < decode_work_pairs(wide); ++u) {
    const int parts = combined.work.unit_partials[u];
    EXPECT_EQ(combined.work.combine_merged[u], parts > 1) << "unit " << u << ": " << parts;
    EXPECT_EQ(combined_words[4 * combined.work.chunks.size() + u], parts > 1 ? -parts : parts) << "unit " << u;
  }
  // With every unit in one chunk there is nothing to merge: no partials, no counters.
  const DecodeProblem short_only = make_decode_problem(4, 64, 2, 128, 16, {1, 30, 17, 64}, DType::bf16, 1);
  const DecodePlan whole = plan_decode(short_only, {.cta_slots = kSlots, .warps = kWarps,
      .schedule = TileSchedule::token_balanced});
  ASSERT_TRUE(whole.balanced());
  EXPECT_EQ(whole.num_splits, 1);
  EXPECT_FALSE(whole.needs_partials() || whole.needs_schedule() || whole.needs_combine());
  // Forced splits use the split grid, as for the other schedules.
  EXPECT_FALSE(plan_decode(p, {.cta_slots = kSlots, .warps = kWarps, .forced_splits = 3,
      .schedule = TileSchedule::token_balanced}).balanced());
}

// DecodePolicy::Merge::kMaxInKernelMergeRowsPerWarp: a unit of more query rows a warp than that
// merges in the combine kernel whatever its partials. The uniform group-32 batch (units of 32
// rows, 8 a warp, cut in four) merges in its last CTAs by default, in the combine kernel at a
// limit of 4 rows; a group of 4 (one row a warp) merges in the kernel either way.
TEST(DecodePlan, RowsPerWarpLimitSendsRowTileMergesToTheCombine) {
  const DecodeProblem g32 = make_decode_problem(32, 64, 2, 128, 16, std::vector<int>(32, 2592), DType::bf16, 1);
  const DecodeProblem g4 = make_decode_problem(8, 32, 8, 128, 16, std::vector<int>(8, 2592), DType::bf16, 1);
  auto plan = [](const DecodeProblem& p, int rows) {
    return plan_decode(p, {.cta_slots = kSlots, .warps = kWarps, .schedule = TileSchedule::token_balanced,
        .chunk_overhead_tiles = DecodePolicy::Partition::kChunkOverheadTiles, .max_row_tiles = 4,
        .max_merge_rows_per_warp = rows});
  };
  const DecodePlan g32_kernel = plan(g32, DecodePolicy::Merge::kMaxInKernelMergeRowsPerWarp), g32_combine = plan(g32, 4);
  ASSERT_EQ(g32_kernel.row_tiles, 2);
  ASSERT_GT(g32_kernel.num_splits, 1);
  EXPECT_EQ(g32_kernel.work.chunks, g32_combine.work.chunks);  // the same cut
  EXPECT_TRUE(g32_kernel.kernel_merges && !g32_kernel.combine_merges && !g32_kernel.needs_combine());
  EXPECT_TRUE(!g32_combine.kernel_merges && g32_combine.combine_merges && g32_combine.needs_combine());
  EXPECT_FALSE(g32_combine.needs_schedule());
  const DecodePlan g4_limited = plan(g4, 4);
  if (g4_limited.num_splits > 1) {
    EXPECT_TRUE(g4_limited.kernel_merges && !g4_limited.combine_merges);
  }
  EXPECT_THROW(plan(g32, 0), std::invalid_argument);
}

// DecodePolicy::Merge::kCombineRowList: the plan lists every row of every unit the combine kernel
// merges, once, with its unit's partial count (negated, as the unit's own), rows of more than
// the warp limit's partials first, and nothing else; the
// work list before it is the plan without the list. On the group-32 one-long batch the list
// makes 64 CTAs of the long sequence's rows and at most 248 of the short ones', where the
// (sequence, slice) grid has 2304 CTAs.
TEST(DecodePlan, CombineRowListHoldsTheCombinedRowsLongFirst) {
  using x = ServingDecode;  // the row-list combine
  constexpr int kWarpParts = x::Merge::kCombineWarpRowMaxPartials;
  auto plan = [](const DecodeProblem& p, int warp_parts) {
    return plan_decode(p, {.cta_slots = kSlots, .warps = kWarps, .schedule = TileSchedule::token_balanced,
        .chunk_overhead_tiles = DecodePolicy::Partition::kChunkOverheadTiles,
        .max_row_tiles = x::RowTiles::kMaxRowTiles, .max_merge_rows_per_warp = x::Merge::kMaxInKernelMergeRowsPerWarp,
        .combine_warp_row_parts = warp_parts});
  };
  std::vector<int> one_long(31, 1024);
  one_long.push_back(51200);
  const std::vector<DecodeProblem> problems = {
      make_decode_problem(32, 64, 2, 128, 16, one_long, DType::bf16, 1),
      make_decode_problem(5, 64, 2, 128, 16, {20000, 1000, 1000, 1, 200}, DType::bf16, 1),
      make_decode_problem(4, 36, 2, 128, 16, {9000, 300, 1, 2500}, DType::bf16, 1),
      make_decode_problem(3, 64, 1, 128, 16, {60000, 500, 1}, DType::bf16, 1),
      make_decode_problem(32, 64, 2, 128, 16, std::vector<int>(32, 2592), DType::bf16, 1)};
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const DecodeProblem& p = problems[i];
    const DecodePlan listed = plan(p, kWarpParts), bare = plan(p, 0);
    ASSERT_TRUE(listed.balanced() && listed.combine_merges) << "batch " << i;
    EXPECT_EQ(bare.combine_cta_rows + bare.combine_warp_rows, 0) << "batch " << i;
    const std::vector<DecodeWorkList::CombineRow>& rows = listed.work.combine_rows;
    ASSERT_EQ(rows.size(), std::size_t(listed.combine_cta_rows + listed.combine_warp_rows)) << "batch " << i;
    EXPECT_TRUE(bare.work.combine_rows.empty()) << "batch " << i;
    EXPECT_EQ(bare.work.chunks, listed.work.chunks) << "batch " << i;
    EXPECT_EQ(bare.work.unit_partials, listed.work.unit_partials) << "batch " << i;
    EXPECT_EQ(bare.work.combine_merged, listed.work.combine_merged) << "batch " << i;
    // The rows each unit the combine merges should list, by its partial count.
    const int group = p.q_heads / p.kv_heads, unit_rows = kDecodeMaxGroup * listed.row_tiles;
    const int chunks = decode_group_chunks(p, listed.row_tiles);
    std::vector<int> want_parts(std::size_t(p.batch) * p.q_heads, 0);
    for (int seq = 0; seq < p.batch; ++seq)
      for (int h = 0; h < p.q_heads; ++h) {
        const int unit = (seq * p.kv_heads + h / group) * chunks + h % group / unit_rows;
        if (listed.work.combine_merged[unit]) want_parts[std::size_t(seq) * p.q_heads + h] = listed.work.unit_partials[unit];
      }
    std::vector<int> seen(want_parts.size(), 0);
    for (int k = 0; k < listed.combine_cta_rows + listed.combine_warp_rows; ++k) {
      const int row = rows[k].row;
      ASSERT_GE(row, 0);
      ASSERT_LT(std::size_t(row), want_parts.size());
      ++seen[row];
      EXPECT_EQ(rows[k].partials, want_parts[row]) << "batch " << i << ", row " << row;
      const bool cta_row = k < listed.combine_cta_rows;
      EXPECT_GT(want_parts[row], 0) << "batch " << i << ", row " << row << ": not merged by the combine";
      EXPECT_EQ(cta_row, want_parts[row] > kWarpParts) << "batch " << i << ", row " << row << ": " << want_parts[row];
    }
    for (std::size_t r = 0; r < want_parts.size(); ++r)
      EXPECT_EQ(seen[r], want_parts[r] > 0 ? 1 : 0) << "batch " << i << ", row " << r;
    if (i == 0) {  // the long sequence's rows a CTA each; the short ones cut in a few chunks, a warp each
      EXPECT_EQ(listed.combine_cta_rows, 64);
      EXPECT_LE(listed.combine_warp_rows, 31 * 64);
    }
    if (i == 4) EXPECT_EQ(listed.combine_cta_rows, 0);  // uniform: rows of few partials, a warp each
  }
  EXPECT_THROW(plan(problems[0], -1), std::invalid_argument);
}

// DecodePolicy::Merge::kMaxInKernelMergeSteps: on the long-tailed fp8 batch (32/8, a row a warp) the
// long sequence's units are cut into more than eight chunks (26 at three CTAs an SM). At a limit
// of eight steps their merges are too long for one CTA, so every cut unit goes to the combine
// kernel, whose row list holds exactly their rows; at the default limit every unit merges in
// its last CTA.
TEST(DecodePlan, MergeStepLimitSendsCutUnitsToTheCombine) {
  std::vector<int> lens;
  for (auto [n, len] : {std::pair{16, 128}, {8, 512}, {4, 2048}, {2, 8192}, {1, 32768}}) lens.insert(lens.end(), n, len);
  const DecodeProblem p = make_decode_problem(static_cast<int>(lens.size()), 32, 8, 128, 16, lens, DType::fp8_e4m3, 1);
  constexpr int kSlots3 = 396;  // fp8: three CTAs an SM
  constexpr int kWarpParts = DecodePolicy::Merge::kCombineWarpRowMaxPartials;
  auto plan = [&](int steps) {
    return plan_decode(p, {.cta_slots = kSlots3, .warps = kWarps, .schedule = TileSchedule::token_balanced,
        .chunk_overhead_tiles = DecodePolicy::Partition::kChunkOverheadTilesFp8, .max_row_tiles = 1,
        .max_merge_rows_per_warp = DecodePolicy::Merge::kMaxInKernelMergeRowsPerWarp, .max_merge_steps = steps,
        .combine_warp_row_parts = kWarpParts});
  };
  const DecodePlan limited = plan(8), plain = plan(kMaxInKernelMergeSteps);
  ASSERT_EQ(limited.work.chunks, plain.work.chunks);  // the same cut
  int listed = 0, longest = 0;
  for (int u = 0; u < decode_work_pairs(p); ++u) {
    const int plain_parts = plain.work.unit_partials[u];
    EXPECT_EQ(limited.work.unit_partials[u], plain_parts) << "unit " << u;
    EXPECT_EQ(limited.work.combine_merged[u], plain_parts > 1) << "unit " << u << ": " << plain_parts << " partials";
    EXPECT_FALSE(plain.work.combine_merged[u]) << "unit " << u;
    if (limited.work.combine_merged[u]) listed += 4;  // 4 query heads a KV head: its rows
    longest = std::max(longest, plain_parts);
  }
  EXPECT_GT(longest, 8);
  EXPECT_GT(listed, 0);
  EXPECT_TRUE(!limited.kernel_merges && limited.combine_merges);
  EXPECT_EQ(limited.combine_cta_rows + limited.combine_warp_rows, listed);
  EXPECT_TRUE(plain.kernel_merges && !plain.combine_merges);
  EXPECT_THROW(plan(0), std::invalid_argument);
}

std::int64_t total_keys(const DecodeShape& s) {
  return std::accumulate(s.context_lens.begin(), s.context_lens.end(), std::int64_t(0));
}

// decode_work_partition's tiers: every ragged batch parses, and beside each is a uniform batch
// of the same heads and total keys, up to one key per sequence (the bandwidth comparison's
// premise).
TEST(DecodeRaggedTiers, EveryRaggedBatchHasAUniformTwin) {
  for (harness::Tier tier : {harness::Tier::quick, harness::Tier::standard, harness::Tier::full}) {
    const std::vector<DecodeShape> shapes = decode_shapes({tier, ""}, decode_ragged_tiers());
    int ragged = 0;
    for (const DecodeShape& s : shapes) {
      if (s.lengths.empty()) continue;
      ++ragged;
      const std::int64_t keys = total_keys(s);
      bool twin = false;
      for (const DecodeShape& u : shapes)
        if (u.lengths.empty() && u.kv_dtype == s.kv_dtype && u.page_size == s.page_size && u.q_heads == s.q_heads &&
            u.kv_heads == s.kv_heads) {
          const std::int64_t ukeys = std::int64_t(u.batch) * u.context_lens[0];
          twin = twin || (ukeys <= keys && keys - ukeys < u.batch) || s.lengths == "8x2048";
        }
      EXPECT_TRUE(twin) << s.lengths << " (" << dtype_name(s.kv_dtype) << ", " << s.q_heads << "/" << s.kv_heads
                        << ") has no uniform batch of its keys";
    }
    EXPECT_GT(ragged, 0);
  }
  EXPECT_EQ(decode_shapes({harness::Tier::standard, ""}, decode_ragged_tiers()).size(), 19u);
}

// Every shape whose GQA group is above 16 has, in the same tier, a GQA 32/8 shape of the same KV
// dtype, page and KV bytes (keys x KV heads): the row-tile figure reads from one results file.
TEST(DecodeRaggedTiers, EveryLargeGroupHasAGqaBatchOfItsKvBytes) {
  for (harness::Tier tier : {harness::Tier::quick, harness::Tier::standard, harness::Tier::full}) {
    const std::vector<DecodeShape> shapes = decode_shapes({tier, ""}, decode_ragged_tiers());
    int large = 0;
    for (const DecodeShape& s : shapes) {
      if (s.q_heads / s.kv_heads <= kDecodeMaxGroup) continue;
      ++large;
      bool twin = false;
      for (const DecodeShape& g : shapes)
        twin = twin || (g.q_heads == 32 && g.kv_heads == 8 && g.kv_dtype == s.kv_dtype && g.page_size == s.page_size &&
                        total_keys(g) * g.kv_heads == total_keys(s) * s.kv_heads);
      EXPECT_TRUE(twin) << decode_shape_name(s) << " has no GQA 32/8 batch of its KV bytes";
    }
    EXPECT_GT(large, 0);
  }
}

// A bad batch description is an error of the plan, which every launch needs and which runs
// before anything is allocated or written; the message names the sequence and the entry.
void expect_rejected(const DecodeProblem& p, const std::string& field, const std::string& names) {
  for (TileSchedule schedule : {TileSchedule::split, TileSchedule::persistent, TileSchedule::token_balanced}) {
    try {
      plan_decode(p, {.cta_slots = kSlots, .warps = kWarps, .schedule = schedule});
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

TEST(DecodePlan, AShapeOutsideTheKernelsLimitsIsUnsupported) {
  // Page lookups shift and mask: a page size that is no power of two is outside the kernel.
  const DecodeProblem p = make_decode_problem(2, 32, 8, 128, 24, {5, 40}, DType::bf16, 1);
  EXPECT_THROW(plan_decode(p, {.cta_slots = kSlots, .warps = kWarps, .schedule = TileSchedule::token_balanced}),
      UnsupportedProblem);
  // Pages smaller than a tile down to one key a page are inside it (each row gathered).
  for (int page : {1, 2, 4, 8}) {
    const DecodeProblem small = make_decode_problem(2, 32, 8, 128, page, {5, 40}, DType::bf16, 1);
    EXPECT_NO_THROW(plan_decode(small, {.cta_slots = kSlots, .warps = kWarps,
        .schedule = TileSchedule::token_balanced})) << "page " << page;
  }
}

TEST(DecodePlan, RejectsNoSlots) {
  EXPECT_THROW(plan_decode(problem(1, 100), {.cta_slots = 0, .warps = kWarps}), std::invalid_argument);
  EXPECT_THROW(plan_decode(problem(1, 100), {.cta_slots = kSlots, .warps = 0, .schedule = TileSchedule::persistent}),
      std::invalid_argument);
}

// Policies of more bytes than the default, as decode_lds_buffers and decode_tile_schedule time
// them: a third stage per warp, the stages filled by bulk copies, and one wide CTA an SM.
struct TripleStages : SplitWarps {
  struct Warp : SplitWarps::Warp {
    /* KvBuffers = */ static constexpr int kKvBuffers = 3;
  };
};
struct BulkStages : SplitWarps {
  struct Warp : SplitWarps::Warp {
    /* BulkCopy = */ static constexpr bool kBulkCopy = true;
  };
};
struct WideCta : SplitWarps {
  struct Warp : SplitWarps::Warp {
    /* Warps = */ static constexpr int kWarps = 8;
    /* WarpsFp8 = */ static constexpr int kWarpsFp8 = 12;
    /* MinCtasPerSm = */ static constexpr int kMinCtasPerSm = 1;
    /* MinCtasPerSmFp8 = */ static constexpr int kMinCtasPerSmFp8 = 1;
  };
};

// Shared memory per architecture, counted on the host as the kernel lays it out (the kernel
// asserts the same bytes): a policy that does not fit an architecture is refused at plan time.
TEST(DecodeSmem, BytesOfStagesWarpsAndBodies) {
  using gpu::GpuArch;
  // Two stages of K and V, 16 tokens x 256 bytes, per warp, four warps: 64 KiB at head dim 128.
  EXPECT_EQ(decode_smem_bytes<DecodePolicy>(128, DType::bf16, GpuArch::gfx942), 64 * 1024);
  EXPECT_EQ(decode_smem_bytes<DecodePolicy>(128, DType::fp8_e4m3, GpuArch::gfx942), 64 * 1024);
  EXPECT_EQ(decode_smem_bytes<TripleStages>(128, DType::bf16, GpuArch::gfx942),
            96 * 1024);
  EXPECT_EQ(decode_smem_bytes<WideCta>(128, DType::bf16, GpuArch::gfx950), 128 * 1024);
  EXPECT_EQ(decode_smem_bytes<WideCta>(128, DType::fp8_e4m3, GpuArch::gfx950),
            192 * 1024);
  // Bulk copies add one mbarrier per stage and warp where the architecture has them.
  using Bulk = BulkStages;
  EXPECT_EQ(decode_smem_bytes<Bulk>(128, DType::bf16, GpuArch::sm_90a), 64 * 1024 + 4 * 2 * 8);
  EXPECT_EQ(decode_smem_bytes<Bulk>(128, DType::bf16, GpuArch::gfx950), 64 * 1024);
  // The warpgroup row-tile body (sm_90a): three 64-key steps of K and V and Q's 64 rows, 112 KiB;
  // fp8 at head dim 128, reading its raw K: four raw steps, two converted V steps, Q's two e4m3
  // parts and the rows' 64 scales, 112 KiB and 256 bytes; fp8 at head dim 64, K converted as V is
  // (two raw steps, two converted ones): half of the bf16 body's 112 KiB at head dim 128. On AMD a
  // group above 16 runs the warps' own stages.
  using Wg = TokenBalancedRows;
  EXPECT_EQ(decode_smem_bytes<Wg>(128, DType::bf16, GpuArch::sm_90a, true), 112 * 1024);
  EXPECT_EQ(decode_smem_bytes<Wg>(128, DType::fp8_e4m3, GpuArch::sm_90a, true), 112 * 1024 + 64 * 4);
  EXPECT_EQ(decode_smem_bytes<Wg>(64, DType::fp8_e4m3, GpuArch::sm_90a, true), 56 * 1024);
  EXPECT_EQ(decode_smem_bytes<Wg>(128, DType::bf16, GpuArch::gfx942, true),
            decode_smem_bytes<Wg>(128, DType::bf16, GpuArch::gfx942));
}

TEST(DecodeSmem, PolicyThatDoesNotFitIsRefusedAtPlanTime) {
  using gpu::GpuArch;
  auto at = [](DType kv, int head_dim = 128) {
    return make_decode_problem(2, 32, 8, head_dim, 16, {64, 64}, kv, 1);
  };
  using Triple = TripleStages;
  using Wide = WideCta;
  for (DType kv : {DType::bf16, DType::f16, DType::fp8_e4m3}) {
    for (GpuArch arch : gpu::kGpuArchs) EXPECT_NO_THROW(require_decode_fits<DecodePolicy>(at(kv), arch));
    EXPECT_THROW(require_decode_fits<Triple>(at(kv), GpuArch::gfx942), UnsupportedProblem);
    EXPECT_THROW(require_decode_fits<Wide>(at(kv), GpuArch::gfx942), UnsupportedProblem);
    EXPECT_NO_THROW(require_decode_fits<Triple>(at(kv), GpuArch::gfx950));
    EXPECT_NO_THROW(require_decode_fits<Wide>(at(kv), GpuArch::sm_90a));
    EXPECT_NO_THROW(require_decode_fits<Triple>(at(kv, 64), GpuArch::gfx942));
  }
  EXPECT_NO_THROW(require_decode_fits<Wide>(at(DType::bf16), GpuArch::gfx950));
  EXPECT_NO_THROW(require_decode_fits<Wide>(at(DType::bf16, 64), GpuArch::gfx942));
  EXPECT_THROW(require_decode_fits<Wide>(at(DType::fp8_e4m3, 64), GpuArch::gfx942), UnsupportedProblem);  // 96 KiB
  try {
    require_decode_fits<Wide>(at(DType::fp8_e4m3), GpuArch::gfx950);
    ADD_FAILURE() << "no UnsupportedProblem for 192 KiB on gfx950";
  } catch (const UnsupportedProblem& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("196608"), std::string::npos) << what;
    EXPECT_NE(what.find("gfx950 allows 163840"), std::string::npos) << what;
  }
  // A device that allows less than its architecture is held to its own limit.
  EXPECT_THROW(require_decode_fits<DecodePolicy>(at(DType::bf16), GpuArch::gfx950, 48 * 1024), UnsupportedProblem);
}

}  // namespace
}  // namespace schedlab::kernels
