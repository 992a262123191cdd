// The scheduling knobs of the paged decode kernel. An experiment variant is one of these
// with some members changed; the kernel body is shared (kernels/decode/paged_decode.cuh).
#pragma once
#include "common/dtype.hpp"
#include "common/gpu/arch.hpp"

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
// (kernels/tests/test_decode_gpu.cu). No shipped variant sets one: with `none` the kernel
// compiles none of the injection points in, and its machine code is unchanged.
enum class DecodeFault {
  none,
  drop_tile,   // the middle tile of each (sequence, KV head) is copied but never counted
  stale_tile,  // the middle tile's copy reads the tile two before it (what its stage held)
  lose_split,  // the split grid's middle split partial gets no weight in the combine
  stale_max,   // a lean warpgroup step never rescales O when a row's max moves (kRowTileLeanStep)
  q_high_only,  // raw keys (kRowTileFp8RawKeys): S from Q's high e4m3 part alone, Q at e4m3's precision
  max_unchecked,  // a lean warpgroup step keeps its rows' running max without the slack's check (kRowTileMaxSlack)
};

struct DecodePolicy {
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
  // Who computes which tiles (TileSchedule, above).
  /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::split;
  // With a shared tail or a persistent grid: the share of each (sequence, KV head)'s tiles split
  // statically among its warps; only the rest pass through its counter.
  /* StaticPercent = */ static constexpr int kStaticPercent = 85;
  // CTAs per SM asked of the compiler (__launch_bounds__), which caps registers. Measured on
  // the H200 (kernels/decode/LOG.md): fp8, which waits on latency rather than on memory,
  // gains from 3 CTAs (12 warps) per SM (151 -> 139 us at batch 16, 16k); 16-bit KV is
  // memory-bound and prefers 2, with fewer, longer splits (batch 1, 64k: 79 -> 76.5 us).
  /* MinCtasPerSm = */ static constexpr int kMinCtasPerSm = 2;
  /* MinCtasPerSmFp8 = */ static constexpr int kMinCtasPerSmFp8 = 3;
  // With a token-balanced schedule: cut so that every CTA slot gets about the same tiles
  // (partition_decode_work's filled partition), instead of even chunks handed out longest first.
  // A batch of a few long sequences among short ones, cut evenly, leaves the slots of the short
  // ones idle for most of the kernel, and a second wave of short chunks runs on only part of
  // the GPU after the first: in a per-CTA timeline of the long-tailed fp8 batch the last CTAs
  // started at 34 us and the kernel ended at 49 us, with 17% of the SMs' time idle at the end.
  // Taken only where the even cut runs in more than one wave and the filled plan cuts no unit
  // into more partials (on the H200 it was slower elsewhere: experiments/decode_work_partition).
  /* FillSlots = */ static constexpr bool kFillSlots = false;
  // With a token-balanced schedule: the plan cuts for this many times the resident CTA slots,
  // so a batch the even cut would run in one wave of one chunk a slot runs in about this many
  // waves of smaller chunks, each next chunk going to whichever slot frees first. In one wave
  // the chunks are fixed to their SMs, and per-CTA timelines of the bf16 batch of lengths one to
  // 65536 on the H200 showed the same pair of chunks on the same SM ending up to 17 us apart
  // from launch to launch, the grid's placement on the SMs (which rotates between launches)
  // deciding the kernel's end; later waves let the SMs that stream faster take more.
  /* PlanWaves = */ static constexpr int kPlanWaves = 1;
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
  // The longest merge a token-balanced unit's last CTA does itself, in steps of one warp (one
  // query row of one partial, head_dim columns over the lanes): rows per warp x partials. Each
  // step waits on its loads, so a unit of many rows cut into many chunks (a group of 32 on one
  // long sequence: 8 rows a warp x 70 partials) would leave one CTA merging long after the rest
  // of the grid is done; the combine kernel spreads that merge over one CTA per query row instead.
  /* MaxInKernelMergeSteps = */ static constexpr int kMaxInKernelMergeSteps = 128;
  // With a token-balanced schedule, where a unit cut into chunks is merged: by its last chunk's
  // CTA (a warp per row over the unit's partials) unless that merge is too long for one CTA
  // (kMaxInKernelMergeSteps); such a unit is merged by the combine kernel.
  // false: once one unit needs the combine kernel, every cut unit goes there (the combine then
  // launches a CTA per query row of the batch). true: only those units do, the others still
  // merge in the decode kernel, and the combine's other CTAs return at once.
  /* MergeByUnit = */ static constexpr bool kMergeByUnit = false;
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
  // fp8 KV in the warpgroup form: each warp converts its raw tile of step j just before the
  // step's products, between two CTA barriers (false); or converts step j + 1 into a second
  // converted step while S = Q K^T of step j runs on the matrix unit, one barrier a step and one
  // raw stage fewer (true). On the H200 converting ahead was 3% slower on MQA 64/1 (its
  // conversion's shared-memory traffic meets S's operand reads) and about level on group 32
  // (experiments/decode_work_partition/README.md), so the default converts in the step.
  /* RowTileConvertAhead = */ static constexpr bool kRowTileConvertAhead = false;
  // The warpgroup form's step with fewer instructions per warp (true): a step whose 64 keys all
  // lie inside the range skips the mask, the softmax scale goes into the exponent's FFMA (the
  // max is taken over unscaled scores), O *= corr is skipped when no row of the warp moved its
  // max, and page lookups shift and mask by the power-of-two page size instead of dividing.
  // false: the same step as the warp body's softmax, 16 tiles wide.
  /* RowTileLeanStep = */ static constexpr bool kRowTileLeanStep = true;
  // The warpgroup form's S = Q K^T with Q from registers (true: each warp loads its rows' A
  // fragments once, 32 registers at head dim 128) or from shared memory (false: every k16 step
  // reads Q's 64 x 16 operand again, 16 KiB a step at head dim 128 beside K's 16 KiB). On the
  // H200 registers measured no faster on fp8 MQA (experiments/decode_work_partition/README.md),
  // and ptxas 13.0 reused Q's registers for P in one instantiation (the plain step, bf16, head
  // dim 64: the next step's S read P; the GPU tests caught it), so shared memory is the default.
  /* RowTileQInRegisters = */ static constexpr bool kRowTileQInRegisters = false;
  // fp8 KV in the warpgroup form, converting in the step: the raw K and V tiles land in a ring
  // of this many slots, each one step's K or V (8 KiB at head dim 128), K of step j in slot
  // 2j mod n and V in 2j + 1 mod n, each slot refilled as soon as its tile is converted. 0: two
  // slots a stage (kRowTileStages + 1 stages, 64 KiB at head dim 128: with the converted step
  // and Q, 112 KiB, two CTAs per SM). 3: one and a half steps (24 KiB, 72 KiB in all), so three
  // CTAs fit an SM (kMinCtasPerSmRowTilesFp8 3): a third warp per scheduler for each warp's
  // chain of conversion, barrier, S, softmax and P V, against less of the memory's latency
  // covered per CTA.
  /* RowTileFp8RawSlots = */ static constexpr int kRowTileFp8RawSlots = 0;
  /* MinCtasPerSmRowTilesFp8 = */ static constexpr int kMinCtasPerSmRowTilesFp8 = 2;
  // fp8 KV in the warpgroup form: a second warpgroup of producer warps (true) copies and
  // converts each step's raw tiles into one of two converted steps, handing them to the
  // computing warpgroup through named barriers (full / empty per converted step), as
  // FlashAttention-3's producer warps transpose fp8 V; the computing warps' chain is then S,
  // softmax and P V alone. Registers move by setmaxnreg (kRowTileProducerRegs to the
  // producers, kRowTileConsumerRegs to the computing warps, 256 a thread pair in all so two
  // CTAs of 256 threads fit an SM; ptxas 13.0 fails to allocate the producers' conversion in
  // 64). Raw tiles: two steps (kRowTileFp8RawSlots 0 means 4 here).
  // On the H200 the producer warpgroup measured about 12% faster on fp8 MQA than converting in
  // the computing warps (experiments/decode_work_partition/README.md), so it is the default.
  /* RowTileFp8Producers = */ static constexpr bool kRowTileFp8Producers = true;
  /* RowTileProducerRegs = */ static constexpr int kRowTileProducerRegs = 96;
  /* RowTileConsumerRegs = */ static constexpr int kRowTileConsumerRegs = 160;
  // With the producer warpgroup (fp8): the computing warps issue S = Q K^T of step j + 1 before
  // O += P V of step j, and the softmax of step j + 1 runs while that product is on the matrix
  // unit (FlashAttention-3's overlap inside a warpgroup); O takes the step's rescale once the
  // product is done. The K and V halves of a converted step then go through rings of their own
  // (K freed once S is read, V once P V is), so the producers refill a step's K while its V is
  // still being read. false: S, softmax and P V of a step in series, the step freed at its end.
  // (16-bit KV has no producer warpgroup and ignores it.)
  /* RowTileOverlapPV = */ static constexpr bool kRowTileOverlapPV = false;
  // With the producer warpgroup (fp8, head dim 128, S and P V in series): S = Q K^T reads the
  // raw e4m3 K tiles as they landed (their per-lane swizzle is wgmma's 128-byte one at 128-byte
  // rows), as two e4m3 products of Q's exact split Q s = hi + lo (s a power of two per query
  // row, hi and lo e4m3: a bf16 value is two e4m3 values of four significant bits each), so the
  // producers convert only V. Per key that drops K's conversion (its load and two-byte store)
  // and halves K's operand read: about 30% fewer shared-memory bytes, the pipe fp8 MQA is
  // busiest on. The raw ring then holds four steps (a step's K is read until its S is done),
  // the space of the converted K steps it no longer needs. false: K converted as V is. On the
  // H200 fp8 MQA measured about 5% faster (not the 30% the bytes predicted), the group-32 fp8
  // batches about 3% (experiments/decode_work_partition/README.md), so it is the default.
  /* RowTileFp8RawKeys = */ static constexpr bool kRowTileFp8RawKeys = true;
  // With the producer warpgroup, S and P V in series (not kRowTileOverlapPV): S = Q K^T of step
  // j + 1 is issued right behind O += P V of step j, and the computing warps wait once for both
  // (true), instead of waiting for P V before they take step j + 1 (false). The matrix unit then
  // runs the two back to back, and a step's chain loses one round trip from the warps to the
  // unit; step j is released once that wait is over, a step later.
  /* RowTileSBehindPV = */ static constexpr bool kRowTileSBehindPV = false;
  // Raw keys (kRowTileFp8RawKeys): a step's raw K slot goes back to the producers as soon as
  // its S is done (a named barrier per raw step), and its V slot once they converted it, so
  // the ring of four raw steps keeps three in flight, each issued a step sooner (true). false:
  // a step's raw slots wait for its P V, two in flight.
  /* RowTileKeysFreedAfterS = */ static constexpr bool kRowTileKeysFreedAfterS = false;
  // fp8 KV in the warpgroup body (its P is an f16 operand): the softmax's exponentials as f16
  // pairs (ex2.approx.f16x2 on the pair of exponents the P word holds), two a
  // transcendental-unit instruction and no separate pack, a row's share of the sum added as f16
  // pairs before it joins the f32 sum (true); or each in f32, then packed (false).
  /* RowTileHalfExp2 = */ static constexpr bool kRowTileHalfExp2 = false;
  // The warpgroup body's lean step whose 64 keys all lie in the range: where no lane of a warp
  // holds a scaled score more than kRowTileMaxSlack (log2 units) above its row's running max,
  // one vote says so and the step keeps that max as its exponents' offset. It then takes no
  // cross-lane max (two shuffle rounds, each waited for, on the computing warps' chain of S,
  // softmax and P V) and rescales nothing; P's values stay below 2^kRowTileMaxSlack, in f16's
  // range, and the sum and O are the same up to rounding, since the online softmax's result
  // does not depend on the offset (FlashAttention-4 rescales only past such a threshold).
  // Otherwise, and always at 0, the step takes its rows' exact max as before. On the H200 the
  // slack of 8 measured about 8% faster on fp8 MQA and 5% on the group-32 fp8 batches, no
  // difference elsewhere (experiments/decode_work_partition/README.md), so it is the default.
  /* RowTileMaxSlack = */ static constexpr int kRowTileMaxSlack = 8;
  // The warpgroup body: when a warp issues the copies of its tile of step j it also asks L2 to
  // fetch its tile of step j + kRowTileL2PrefetchSteps (one bulk prefetch each for K and V, no
  // shared memory or registers held), so that copy, issued that many steps later, reads L2
  // instead of waiting for the memory. With fp8 producers a CTA's shared memory holds two raw
  // steps in flight beside two converted ones, and Nsight Compute found the producers' loads
  // waiting on those copies once the computing warps asked sooner (kRowTileOverlapPV). 0: none.
  /* RowTileL2PrefetchSteps = */ static constexpr int kRowTileL2PrefetchSteps = 0;
  // How a CTA whose rows are each one warp's (row tiles: a warp per 16-row tile) writes its
  // output or partial: each lane its own columns straight from its registers, scaled once per
  // row (true); or, as a CTA whose warps split the keys of the same rows must, every warp's rows
  // through shared memory and then an element per thread, with an exp2 and a division each
  // (false). Nsight Compute put that round trip at about a tenth of fp8 MQA's warp samples.
  /* RowsFromRegisters = */ static constexpr bool kRowsFromRegisters = true;
  /* Fault = */ static constexpr DecodeFault kFault = DecodeFault::none;  // tests only
};

// Tokens per warp tile: one page at page size 16, so a tile never spans two pages.
inline constexpr int kDecodeTileTokens = 16;
// Rows of the matrix instruction: a GQA group (query heads sharing a KV head) is padded to it.
inline constexpr int kDecodeMaxGroup = 16;

// Shared memory of the paged decode kernel for a policy at a head dim and KV dtype on an
// architecture, in the layout of its storage (kernels/decode/paged_decode.cuh, whose kernel
// asserts that its storage has exactly this size on every architecture the build holds), so
// the plan can refuse a policy that does not fit before anything is launched.
// `group_body`: the body a GQA group above 16 runs under a row-tile policy (the warpgroup
// form's BoxTile steps where the architecture has wgmma, else the warps' own stages).
template <class Policy>
constexpr int decode_smem_bytes(int head_dim, DType kv, gpu::GpuArch arch, bool group_body = false) {
  const bool fp8 = kv == DType::fp8_e4m3;
  const int warps = fp8 ? Policy::kWarpsFp8 : Policy::kWarps;
  const int raw_tile = kDecodeTileTokens * head_dim * (fp8 ? 1 : 2);  // one warp's 16 tokens of K (or V)
  const int combine = warps * kDecodeMaxGroup * (head_dim + 2) * 4;   // combine_warps, after the loop
  auto larger = [](int a, int b) { return a > b ? a : b; };
  if (group_body && Policy::kMaxRowTiles > 1 && Policy::kRowTileMma == RowTileMma::warpgroup &&
      gpu::has_warpgroup_mma(arch)) {
    // kStages steps of K and V (16-bit: BoxTiles of all warps' tokens; fp8: each warp's raw
    // tiles), fp8's converted 16-bit steps, then Q's BoxTile.
    const bool ahead = fp8 && Policy::kRowTileConvertAhead;
    const bool producers = fp8 && !ahead && Policy::kRowTileFp8Producers;
    const int stages = Policy::kRowTileStages + (fp8 ? (ahead ? -1 : 1) : 0);
    const int box = warps * kDecodeTileTokens * head_dim * 2;  // BoxTile<warps x 16 rows, head_dim>
    const int q_box = warps * kDecodeMaxGroup * head_dim * 2;
    // fp8: slots of one step's raw K or V tiles (kRowTileFp8RawSlots; 0: two a stage, or two
    // steps' with producer warps)
    const bool raw_keys = producers && Policy::kRowTileFp8RawKeys && !Policy::kRowTileOverlapPV && head_dim == 128;
    const int slots = !fp8 ? 0
                      : raw_keys ? 8
                      : Policy::kRowTileFp8RawSlots > 0 && !ahead ? Policy::kRowTileFp8RawSlots
                      : producers ? 4 : 2 * stages;
    const int raw_bytes = fp8 ? slots * warps * raw_tile : stages * 2 * box;
    // converted steps: K and V, or V alone with raw keys; after Q, raw keys' row scales
    const int q_offset = raw_bytes + (fp8 ? (ahead || producers ? 2 : 1) * (raw_keys ? 1 : 2) * box : 0);
    return larger(q_offset + q_box + (raw_keys ? warps * kDecodeMaxGroup * 4 : 0), combine);
  }
  // Per warp kKvBuffers K+V stages (twice as many of fp8's half-size tiles), then with bulk
  // copies one mbarrier per stage.
  const int stages = Policy::kKvBuffers * (fp8 ? 2 : 1);
  const bool bulk = Policy::kBulkCopy && gpu::has_bulk_copy(arch) && !fp8;
  return larger(stages * 2 * raw_tile * warps, combine) + (bulk ? warps * stages * 8 : 0);
}

}  // namespace schedlab::kernels
