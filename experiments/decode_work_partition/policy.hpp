// Ragged decode batches: the split grid cuts every sequence into the same number of splits,
// chosen from the batch size, so one long sequence among short ones is read by a handful of
// CTAs while the rest of the GPU idles. Against it: chunks of about the same number of tiles
// planned from the lengths (token_balanced), and the persistent grid whose warps move on to
// unfinished sequences. The split and token-balanced variants keep a GQA group above 16 (MQA)
// in one CTA of up to 4 row tiles, so such a batch reads its KV once (kMaxRowTiles), computed
// by the CTA as one warpgroup (kRowTileMma); token_balanced_warp_rows computes those row tiles
// warp by warp instead, the same plan otherwise; token_balanced_convert_ahead converts fp8
// tiles a step before the step that uses them (kRowTileConvertAhead); token_balanced_plain_step
// computes the warpgroup body's step with the warp body's instructions (kRowTileLeanStep);
// token_balanced_q_regs holds Q in registers for S = Q K^T (kRowTileQInRegisters);
// token_balanced_fp8_three_ctas keeps fp8's raw tiles in one and a half steps of slots so that a
// third CTA fits an SM (kRowTileFp8RawSlots), converting in the computing warps as
// token_balanced_fp8_in_warps does, where the default converts fp8 in a producer warpgroup
// beside the computing one (kRowTileFp8Producers); token_balanced_merge_by_unit sends only the
// units whose merge is too long for one CTA to the combine kernel (kMergeByUnit), and
// token_balanced_row_tiles_combine every unit of more than four rows a warp
// (kMaxInKernelMergeRowsPerWarp); token_balanced_l2_prefetch(4) prefetches each warp's tile of
// two (four) steps later into L2 beside its copies (kRowTileL2PrefetchSteps);
// token_balanced_staged_rows writes a row-tile CTA's rows through shared memory
// (kRowsFromRegisters false); token_balanced_converted_keys computes fp8's S on K converted to
// f16 as V is, where the default reads the raw e4m3 K tiles (kRowTileFp8RawKeys);
// token_balanced_s_behind_pv issues each step's S behind the P V of the
// step before (kRowTileSBehindPV), token_balanced_keys_freed refills a step's raw slots once its
// S is done (kRowTileKeysFreedAfterS), token_balanced_half_exp2 takes the softmax's
// exponentials as f16 pairs (kRowTileHalfExp2), and token_balanced_exact_max takes every
// step's exact row max, where the default keeps the running max while the step's scores stay
// within a slack of it (kRowTileMaxSlack).
#pragma once
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_work_partition {

using kernels::RowTileMma;
using kernels::TileSchedule;

struct split : kernels::DecodePolicy {
  /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::split;
  /* MaxRowTiles = */ static constexpr int kMaxRowTiles = 4;
  /* RowTileMma = */ static constexpr RowTileMma kRowTileMma = RowTileMma::warpgroup;
};
struct token_balanced : kernels::DecodePolicy {
  /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::token_balanced;
  /* MaxRowTiles = */ static constexpr int kMaxRowTiles = 4;
  /* RowTileMma = */ static constexpr RowTileMma kRowTileMma = RowTileMma::warpgroup;
};
struct token_balanced_warp_rows : token_balanced {
  /* RowTileMma = */ static constexpr RowTileMma kRowTileMma = RowTileMma::warp;
};
// fp8 KV in the warpgroup body: each step's raw tiles converted a step ahead, while the
// previous step's S is computed, instead of just before the step's products.
struct token_balanced_convert_ahead : token_balanced {
  /* RowTileConvertAhead = */ static constexpr bool kRowTileConvertAhead = true;
};
// The warpgroup body's step as the warp body writes its softmax: every step masked, the scale
// multiplied into each score, O rescaled every step, page lookups by division.
struct token_balanced_plain_step : token_balanced {
  /* RowTileLeanStep = */ static constexpr bool kRowTileLeanStep = false;
};
// The warpgroup body's S = Q K^T with Q's A fragments held in registers for the whole loop.
struct token_balanced_q_regs : token_balanced {
  /* RowTileQInRegisters = */ static constexpr bool kRowTileQInRegisters = true;
  /* RowTileFp8Producers = */ static constexpr bool kRowTileFp8Producers = false;  // Q is read from shared memory there
};
// fp8 KV in the warpgroup body: raw K and V in a ring of three one-step slots, so three CTAs
// fit an SM (72 KiB each at head dim 128) instead of two with four steps of raw tiles.
struct token_balanced_fp8_three_ctas : token_balanced {
  /* RowTileFp8Producers = */ static constexpr bool kRowTileFp8Producers = false;
  /* RowTileFp8RawSlots = */ static constexpr int kRowTileFp8RawSlots = 3;
  /* MinCtasPerSmRowTilesFp8 = */ static constexpr int kMinCtasPerSmRowTilesFp8 = 3;
};
// fp8 KV in the warpgroup body converted by the computing warps themselves, each its own tile,
// between two CTA barriers a step (kRowTileFp8Producers false; the default has a producer
// warpgroup convert while the computing one takes each converted step through named barriers).
struct token_balanced_fp8_in_warps : token_balanced {
  /* RowTileFp8Producers = */ static constexpr bool kRowTileFp8Producers = false;
};
// A unit cut into more chunks than its last CTA merges quickly goes to the combine kernel
// alone; the others still merge in the decode kernel (the default sends every cut unit of such
// a plan to the combine kernel, which then launches a CTA per query row of the batch).
struct token_balanced_merge_by_unit : token_balanced {
  /* MergeByUnit = */ static constexpr bool kMergeByUnit = true;
};
// Units of more than four query rows a warp (groups above 16 in row tiles) merge in the
// combine kernel, a CTA per row, instead of in their last CTA, a warp walking eight or sixteen
// rows in series.
struct token_balanced_row_tiles_combine : token_balanced {
  /* MaxInKernelMergeRowsPerWarp = */ static constexpr int kMaxInKernelMergeRowsPerWarp = 4;
};
// Row-tile units to the combine kernel as token_balanced_row_tiles_combine, which merges them
// a warp per row, eight rows a CTA (kCombineWarpPerRow) instead of a CTA per row.
struct token_balanced_warp_combine : token_balanced_row_tiles_combine {
  /* CombineWarpPerRow = */ static constexpr bool kCombineWarpPerRow = true;
};
// The combine a warp per row as token_balanced_warp_combine, its grid the plan's list of the
// rows it merges (long rows' CTAs first) and a long row's partials loaded in one round
// (kCombineRowList).
struct token_balanced_row_list : token_balanced_warp_combine {
  /* CombineRowList = */ static constexpr bool kCombineRowList = true;
};
// The combine over the plan's row list as token_balanced_row_list, cut so that every CTA slot
// gets about the same tiles (kFillSlots): a short unit whole, the rest of its slot a piece of a
// long unit, each slot's pieces run one after another.
struct token_balanced_filled : token_balanced_row_list {
  /* FillSlots = */ static constexpr bool kFillSlots = true;
};
// The row-list combine's plan cut for two (four) waves of the resident slots (kPlanWaves): where
// the even cut gives each slot one chunk, the hardware's next-free-slot hand-out of the later
// waves balances SMs that stream at different rates.
struct token_balanced_two_waves : token_balanced_row_list {
  /* PlanWaves = */ static constexpr int kPlanWaves = 2;
};
struct token_balanced_four_waves : token_balanced_row_list {
  /* PlanWaves = */ static constexpr int kPlanWaves = 4;
};
// The combine over the plan's row list as token_balanced_row_list, and only the units of more
// than eight partials (a row a warp at 32/8) sent there (kMaxInKernelMergeSteps 8,
// kMergeByUnit): a long sequence of a 32/8 batch cut into a few dozen chunks no longer leaves
// its last CTA's warps walking its partials four loads at a time after the rest of the grid is
// done; the combine's CTA per row loads them in one round.
struct token_balanced_short_merges : token_balanced_row_list {
  /* MaxInKernelMergeSteps = */ static constexpr int kMaxInKernelMergeSteps = 8;
  /* MergeByUnit = */ static constexpr bool kMergeByUnit = true;
};
// fp8: S of step j + 1 issued before P V of step j, the softmax of j + 1 under that product
// (kRowTileOverlapPV); 16-bit batches run the token_balanced kernels.
struct token_balanced_overlap_pv : token_balanced {
  /* RowTileOverlapPV = */ static constexpr bool kRowTileOverlapPV = true;
};
// The warpgroup body prefetching into L2 the tile each warp will copy two (four) steps later
// (kRowTileL2PrefetchSteps), on token_balanced_filled's plan; groups of 16 or fewer run
// token_balanced_filled's kernels.
struct token_balanced_l2_prefetch : token_balanced_filled {
  /* RowTileL2PrefetchSteps = */ static constexpr int kRowTileL2PrefetchSteps = 2;
};
struct token_balanced_l2_prefetch4 : token_balanced_filled {
  /* RowTileL2PrefetchSteps = */ static constexpr int kRowTileL2PrefetchSteps = 4;
};
// token_balanced_filled with a row-tile CTA's rows written through shared memory, an element
// per thread, as a CTA whose warps share rows writes them (kRowsFromRegisters false).
struct token_balanced_staged_rows : token_balanced_filled {
  /* RowsFromRegisters = */ static constexpr bool kRowsFromRegisters = false;
};
// token_balanced_filled with fp8's K converted to f16 as V is, S = Q K^T on the converted tiles
// (kRowTileFp8RawKeys false; the default computes S on the raw e4m3 K tiles, Q split exactly into
// e4m3 high and low parts per row, and its producers convert V alone).
struct token_balanced_converted_keys : token_balanced_filled {
  /* RowTileFp8RawKeys = */ static constexpr bool kRowTileFp8RawKeys = false;
};
// token_balanced_filled with each step's S issued right behind the step before's P V, one
// wait for both (kRowTileSBehindPV).
struct token_balanced_s_behind_pv : token_balanced_filled {
  /* RowTileSBehindPV = */ static constexpr bool kRowTileSBehindPV = true;
};
// token_balanced_filled with a step's raw slots refilled once its S is done, three raw steps
// in flight instead of two (kRowTileKeysFreedAfterS).
struct token_balanced_keys_freed : token_balanced_filled {
  /* RowTileKeysFreedAfterS = */ static constexpr bool kRowTileKeysFreedAfterS = true;
};
// token_balanced_filled with the softmax's exponentials as f16 pairs, straight into P
// (kRowTileHalfExp2).
struct token_balanced_half_exp2 : token_balanced_filled {
  /* RowTileHalfExp2 = */ static constexpr bool kRowTileHalfExp2 = true;
};
// token_balanced_filled with every warpgroup step's exact row max, across the row's four lanes
// (kRowTileMaxSlack 0; the default keeps the running max while a warp's scores stay within
// 2^8 of it).
struct token_balanced_exact_max : token_balanced_filled {
  /* RowTileMaxSlack = */ static constexpr int kRowTileMaxSlack = 0;
};
struct persistent : kernels::DecodePolicy {
  /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::persistent;
};

}  // namespace schedlab::experiments::decode_work_partition
