// The scheduling knobs of the paged decode kernel. An experiment variant is one of these
// with some members changed; the kernel body is shared (kernels/decode/paged_decode.cuh).
#pragma once
#include "common/dtype.hpp"

namespace schedlab::kernels {

// How a sequence's tiles are divided among warps.
//   split:       fixed ranges, one per CTA of a (split, KV head, sequence) grid.
//   shared_tail: the same grid, but the last tiles of each (sequence, KV head) are handed out
//                by a counter its split CTAs share (with one split, as `split`).
//   persistent:  one wave of persistent CTAs whose warps, when their sequence runs out, move to
//                the unfinished one with the most tiles left.
//   token_balanced: a grid of planned chunks, each a range of whole tiles of one (sequence, KV
//                head) of about the same size whatever the lengths (partition_decode_work); a
//                CTA reads its chunk from the uploaded work list.
enum class TileSchedule { split, shared_tail, persistent, token_balanced };

// How the row-tile body (a GQA group above 16 in one CTA, kMaxRowTiles) computes.
//   warp:      each warp its own 16 query rows with the warp-level matrix instruction
//              (m16n8k16), reading every K/V tile of the CTA from shared memory itself and
//              updating its softmax every 16 keys, between CTA barriers every 16 keys.
//   warpgroup: the CTA's four warps as one warpgroup (sm_90a wgmma): one m64 product covers
//              all 64 query rows, reads each K and V step from shared memory once, and a step
//              is 64 keys (one 16-key tile copied by each warp). fp8 KV is converted to f16
//              once per tile, by the warp that copied it. The AMD build keeps `warp`.
enum class RowTileMma { warp, warpgroup };

// Faults injected on purpose, to show that the accuracy gate catches a broken schedule
// (kernels/tests/test_decode_gpu.cpp). No shipped variant sets one: with `none` the kernel
// compiles none of the injection points in, and its machine code is unchanged.
enum class DecodeFault {
  none,
  drop_tile,   // the middle tile of each (sequence, KV head) is copied but never counted
  stale_tile,  // the middle tile's copy reads the tile two before it (what its stage held)
  lose_split,  // the split grid's middle split partial gets no weight in the combine
  stale_max,   // a warpgroup step never rescales O when a row's max moves
  q_high_only,  // fp8 raw keys: S from Q's high e4m3 part alone, Q at e4m3's precision
  max_unchecked,  // a warpgroup step keeps its rows' running max without the slack's check
};

struct DecodePolicy {
  // The warp body: a CTA's warps, each streaming its own 16-token tiles through its own stages.
  struct Warp {
    /* Warps = */ static constexpr int kWarps = 4;            // each streams its own 16-token tiles
    /* WarpsFp8 = */ static constexpr int kWarpsFp8 = 4;       // the same, with fp8 KV
    /* KvBuffers = */ static constexpr int kKvBuffers = 2;     // shared K/V tiles per warp; 1 = seed 000's choice
    /* PrefetchPageIndex = */ static constexpr bool kPrefetchPageIndex = true;  // next page id one tile ahead (seed 000)
    /* StageHints = */ static constexpr bool kStageHints = false;  // issue(1) / qk_softmax(0) / pv(1) priorities (seed 000)
    /* StreamKv = */ static constexpr bool kStreamKv = true;   // K fragments streamed into the dot, V on demand (seed 002)
    // Bulk tensor copies (sm_90 TMA: two 64-column boxes per K or V tile, completed on an
    // mbarrier) instead of 16-byte per-lane async copies; 16-bit KV only (fp8 and AMD keep the
    // per-lane copies).
    /* BulkCopy = */ static constexpr bool kBulkCopy = false;
    // CTAs per SM asked of the compiler (__launch_bounds__), which caps registers. Measured on
    // the H200 (kernels/decode/LOG.md): fp8, which waits on latency rather than on memory,
    // gains from 3 CTAs (12 warps) per SM (151 -> 139 us at batch 16, 16k); 16-bit KV is
    // memory-bound and prefers 2, with fewer, longer splits (batch 1, 64k: 79 -> 76.5 us).
    /* MinCtasPerSm = */ static constexpr int kMinCtasPerSm = 2;
    /* MinCtasPerSmFp8 = */ static constexpr int kMinCtasPerSmFp8 = 3;
  };
  // Who computes which tiles: the grid and, for a token-balanced plan, how the host cuts it.
  struct Partition {
    // Who computes which tiles (TileSchedule, above).
    /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::split;
    // With a shared tail or a persistent grid: the share of each (sequence, KV head)'s tiles split
    // statically among its warps; only the rest pass through its counter.
    /* StaticPercent = */ static constexpr int kStaticPercent = 85;
    // With a token-balanced schedule: cut so that every CTA slot gets about the same tiles
    // (partition_decode_work's filled partition), instead of even chunks handed out longest first.
    // A batch of a few long sequences among short ones, cut evenly, leaves the slots of the short
    // ones idle for most of the kernel, and a second wave of short chunks runs on only part of
    // the GPU after the first: in a per-CTA timeline of the long-tailed fp8 batch the last CTAs
    // started at 34 us and the kernel ended at 49 us, with 17% of the SMs' time idle at the end.
    // Taken only where the even cut runs in more than one wave and the filled plan cuts no unit
    // into more partials (on the H200 it was slower elsewhere: experiments/decode_work_partition).
    /* FillSlots = */ static constexpr bool kFillSlots = false;
    // With a token-balanced schedule: what a CTA's start and its partial cost, in tiles' time, in
    // the partition's model (partition_decode_work). 16-bit KV streams at the memory's pace, so a
    // tile is long next to a CTA's ramp. fp8 tiles are short and its warps wait on latency, so a
    // short chunk is mostly ramp: on the H200 a uniform fp8 batch (32 x 2592, page 16) cut into
    // four waves of 27-tile chunks ran slower than one wave of its whole 162-tile sequences, and a
    // batch with one long sequence cut in one wave (its long chunks on too few warps) ran slower
    // than the uniform one (kernels/decode/LOG.md). From about 20 tiles the model keeps that
    // uniform batch whole; up to about 36 it still cuts the long sequence into two waves' worth.
    /* ChunkOverheadTiles = */ static constexpr int kChunkOverheadTiles = 4;
    /* ChunkOverheadTilesFp8 = */ static constexpr int kChunkOverheadTilesFp8 = 24;
  };
  // Where the partials of a unit cut among CTAs are merged, and the combine kernel's shape.
  struct Merge {
    // The longest merge a token-balanced unit's last CTA does itself, in steps of one warp (one
    // query row of one partial, head_dim columns over the lanes): rows per warp x partials. Each
    // step waits on its loads, so a unit of many rows cut into many chunks (a group of 32 on one
    // long sequence: 8 rows a warp x 70 partials) would leave one CTA merging long after the rest
    // of the grid is done; the combine kernel spreads that merge over one CTA per query row instead.
    /* MaxInKernelMergeSteps = */ static constexpr int kMaxInKernelMergeSteps = 128;
    // The most query rows a warp merges in series in a unit's last CTA: a unit of more rows per
    // warp (a row-tile unit: 8 at a group of 32, 16 at MQA) goes to the combine kernel whatever
    // its partials, which spreads its rows over a CTA each. On the uniform group-32 batch the
    // split grid (combine kernel) and the token-balanced plan (merged in its last CTAs) cut the
    // same chunks, and the split grid was the faster.
    /* MaxInKernelMergeRowsPerWarp = */ static constexpr int kMaxInKernelMergeRowsPerWarp = 16;
    // The combine kernel's shape: a CTA of kCombineWarps warps per (sequence, query head), the
    // row's partials spread over the warps (false), or a warp per row, eight rows a CTA, each
    // warp walking its row's partials in series (true; rows of many partials keep a CTA). A CTA
    // per row suits few rows of many partials (batch 1 cut into dozens of splits); a warp per
    // row suits many rows of few (a group of 32 at batch 32 is 2048 rows, most of two partials:
    // 2048 CTAs, more than a wave).
    /* CombineWarpPerRow = */ static constexpr bool kCombineWarpPerRow = false;
    // With a warp per row: the most partials a warp merges alone; a row of more keeps a CTA
    // (on the group-32 one-long batch, rows of about 70 partials merged by a warp each made the
    // combine about 10 us longer than a CTA each).
    /* CombineWarpRowMaxPartials = */ static constexpr int kCombineWarpRowMaxPartials = 8;
    // With a warp per row and a token-balanced plan: the combine's grid is the plan's list of the
    // rows it merges (DecodePlan::work), the CTAs of long rows first, instead of every (sequence,
    // head) of the batch, most of which return at once when a few long units are all it merges
    // (the group-32 one-long batch: 64 rows of 2304 CTAs). A long row's warps then load all their
    // partials before any arithmetic (a running maximum per warp, no separate pass for it), so
    // the merge waits on about one round of loads instead of one per four partials.
    /* CombineRowList = */ static constexpr bool kCombineRowList = false;
  };
  // A GQA group above 16 in one CTA of several 16-row tiles, and how that CTA computes.
  struct RowTiles {
    // Query rows one CTA covers, in 16-row tiles of the matrix instruction. A GQA group larger
    // than 16 (MQA: 64 query heads on one KV head) is otherwise cut into CTAs of 16 rows that
    // each read the whole KV again. Above 1, such a group is one CTA of up to kMaxRowTiles row
    // tiles: its warps copy each K/V tile once into the stages they share and every row tile is
    // computed from it (split and token_balanced schedules; a second instantiation of the body,
    // launched only for groups above 16, so the kernel of smaller groups is unchanged). Must
    // divide the warp count of each KV type.
    /* MaxRowTiles = */ static constexpr int kMaxRowTiles = 1;
    // CTAs per SM asked of the compiler for the row-tile body (kMaxRowTiles > 1). Its warps each
    // compute every copied tile for their 16 query rows, four times a GQA warp's matrix and
    // softmax work per byte; 3 CTAs per SM (168 registers, a few words spilled at head dim 128)
    // were expected to hide that work's latency but measured no faster than 2 on MQA 64/1 and
    // slower on the group-32 batches (kernels/decode/LOG.md), so the row-tile body keeps 2.
    /* MinCtasPerSmRowTiles = */ static constexpr int kMinCtasPerSmRowTiles = 2;
    // The row-tile body's matrix unit (RowTileMma, above), and the warpgroup form's stages of
    // 64-key K and V steps (32 KiB each at head dim 128, bf16; with Q's 16 KiB, 3 stages leave
    // two CTAs per SM on the H200, and two steps in flight while one is computed; fp8 takes one
    // stage more of its smaller raw tiles beside the converted step).
    /* RowTileMma = */ static constexpr RowTileMma kRowTileMma = RowTileMma::warp;
    /* RowTileStages = */ static constexpr int kRowTileStages = 3;
    // fp8 KV in the warpgroup form has a second warpgroup of producer warps that copy each step's
    // raw tiles and convert V for the computing warpgroup (paged_decode_warpgroup.cuh). Registers
    // move by setmaxnreg: these to the producers and to the computing warps, 256 a thread pair in
    // all so two CTAs of 256 threads fit an SM (ptxas 13.0 fails to allocate the producers'
    // conversion in 64).
    /* RowTileProducerRegs = */ static constexpr int kRowTileProducerRegs = 96;
    /* RowTileConsumerRegs = */ static constexpr int kRowTileConsumerRegs = 160;
  };
  /* Fault = */ static constexpr DecodeFault kFault = DecodeFault::none;  // tests only
};

// Named configurations the experiments derive their variants from, and the GPU tests run, so
// a variant keeps meaning the kernel it was timed as whatever DecodePolicy's defaults become.
// SplitWarps spells out every member of every part (a knob added later comes with its default,
// which must leave the kernel as it was); the others say what they change from it.
//   SplitWarps:        the split grid, each warp streaming its own tiles through two stages; a
//                      GQA group above 16 is cut into 16-row CTAs.
//   SplitRows:         the split grid; a GQA group above 16 is one CTA of up to four row tiles,
//                      computed as one warpgroup where the architecture has wgmma.
//   TokenBalancedRows: the same CTAs over chunks planned from the lengths (partition_decode_work).
//   ServingDecode:     TokenBalancedRows with the row-list combine (a warp a row) and filled
//                      CTA slots: the configuration the serving figures are measured on.
struct SplitWarps : DecodePolicy {
  struct Warp : DecodePolicy::Warp {
    /* Warps = */ static constexpr int kWarps = 4;
    /* WarpsFp8 = */ static constexpr int kWarpsFp8 = 4;
    /* KvBuffers = */ static constexpr int kKvBuffers = 2;
    /* PrefetchPageIndex = */ static constexpr bool kPrefetchPageIndex = true;
    /* StageHints = */ static constexpr bool kStageHints = false;
    /* StreamKv = */ static constexpr bool kStreamKv = true;
    /* BulkCopy = */ static constexpr bool kBulkCopy = false;
    /* MinCtasPerSm = */ static constexpr int kMinCtasPerSm = 2;
    /* MinCtasPerSmFp8 = */ static constexpr int kMinCtasPerSmFp8 = 3;
  };
  struct Partition : DecodePolicy::Partition {
    /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::split;
    /* StaticPercent = */ static constexpr int kStaticPercent = 85;
    /* FillSlots = */ static constexpr bool kFillSlots = false;
    /* ChunkOverheadTiles = */ static constexpr int kChunkOverheadTiles = 4;
    /* ChunkOverheadTilesFp8 = */ static constexpr int kChunkOverheadTilesFp8 = 24;
  };
  struct Merge : DecodePolicy::Merge {
    /* MaxInKernelMergeSteps = */ static constexpr int kMaxInKernelMergeSteps = 128;
    /* MaxInKernelMergeRowsPerWarp = */ static constexpr int kMaxInKernelMergeRowsPerWarp = 16;
    /* CombineWarpPerRow = */ static constexpr bool kCombineWarpPerRow = false;
    /* CombineWarpRowMaxPartials = */ static constexpr int kCombineWarpRowMaxPartials = 8;
    /* CombineRowList = */ static constexpr bool kCombineRowList = false;
  };
  struct RowTiles : DecodePolicy::RowTiles {
    /* MaxRowTiles = */ static constexpr int kMaxRowTiles = 1;
    /* MinCtasPerSmRowTiles = */ static constexpr int kMinCtasPerSmRowTiles = 2;
    /* RowTileMma = */ static constexpr RowTileMma kRowTileMma = RowTileMma::warp;
    /* RowTileStages = */ static constexpr int kRowTileStages = 3;
    /* RowTileProducerRegs = */ static constexpr int kRowTileProducerRegs = 96;
    /* RowTileConsumerRegs = */ static constexpr int kRowTileConsumerRegs = 160;
  };
  /* Fault = */ static constexpr DecodeFault kFault = DecodeFault::none;
};
struct SplitRows : SplitWarps {
  struct RowTiles : SplitWarps::RowTiles {
    /* MaxRowTiles = */ static constexpr int kMaxRowTiles = 4;
    /* RowTileMma = */ static constexpr RowTileMma kRowTileMma = RowTileMma::warpgroup;
  };
};
struct TokenBalancedRows : SplitRows {
  struct Partition : SplitRows::Partition {
    /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::token_balanced;
  };
};
struct ServingDecode : TokenBalancedRows {
  struct Partition : TokenBalancedRows::Partition {
    /* FillSlots = */ static constexpr bool kFillSlots = true;
  };
  struct Merge : TokenBalancedRows::Merge {
    /* MaxInKernelMergeRowsPerWarp = */ static constexpr int kMaxInKernelMergeRowsPerWarp = 4;
    /* CombineWarpPerRow = */ static constexpr bool kCombineWarpPerRow = true;
    /* CombineRowList = */ static constexpr bool kCombineRowList = true;
  };
};

// Tokens per warp tile: one page at page size 16, so a tile never spans two pages.
inline constexpr int kDecodeTileTokens = 16;
// Rows of the matrix instruction: a GQA group (query heads sharing a KV head) is padded to it.
inline constexpr int kDecodeMaxGroup = 16;

}  // namespace schedlab::kernels
