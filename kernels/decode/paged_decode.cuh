// Paged-KV decode attention on the portability layer. One CTA per (split, KV head,
// sequence), or per planned chunk of one (token_balanced); each warp streams its own 16-token
// tiles (one page at page size 16) from the KV pool into shared memory with async copies,
// computes S = Q K^T for the GQA group (padded to the 16 rows of the matrix instruction), an
// online softmax, and O += P V. A group above 16 under a policy with row tiles
// (kMaxRowTiles) is one CTA whose warps each hold 16 of its query rows and share every copied
// tile (decode_row_tiles). Warps combine in shared memory; splits combine in a second, small
// kernel. (Fusing that merge into the last CTA to finish was tried for the split grid: one
// thread per column then walked every split serially, and at batch 1 with 32 splits it cost
// more than the launch it saved.) Token-balanced chunks do merge in the last CTA of each unit,
// a warp per row over the unit's own partials (merge_unit_if_last), unless the plan finds that
// merge too long for one CTA and leaves the unit to the combine kernel (DecodePlan).
// Scheduling knobs come from the Policy (decode_policy.hpp); the body is shared.
#pragma once
#include <climits>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "common/gpu/device.hpp"
#include "common/gpu/kernel_traits.hpp"
#include "common/gpu/launch.hpp"
#include "common/gpu/probe.hpp"
#include "common/gpu/timeline.hpp"
#include "common/gpu/warp_mma.hpp"
#include "common/gpu/warpgroup.hpp"
#include "common/harness/variant_list.hpp"
#include "kernels/attention/pipeline.hpp"
#include "kernels/common/element.hpp"
#include "kernels/decode/decode_policy.hpp"
#include "kernels/decode/paged_decode.hpp"

namespace schedlab::kernels::decode_detail {

using gpu::kWarpSize;
inline constexpr float kLog2e = 1.4426950408889634f;

struct Params {
  const void* q;
  const unsigned char* k_pool;
  const unsigned char* v_pool;
  const int* block_table;
  const int* context_lens;
  const float* k_scale;
  const float* v_scale;
  void* o;
  float* partial_o;
  float* partial_lse;
  unsigned long long* probe_slots;  // gpu::kProbeSlots counters; null unless probes are built in
  int* schedule;                    // shared tail or persistent: the counters of struct Schedule; token-balanced
                                    // with partials: one arrival counter per unit; else null
  const int* work;                  // token-balanced: 4 ints per CTA (unit, first tile, tiles, partial), else null
  const int* unit_partials;         // token-balanced: the partials of each unit (negated: merged by the combine kernel), else null
  int units;                        // (sequence, KV head, chunk) work units
  bool persistent;                  // the grid is persistent (the combine reads its join counts)
  int q_heads, kv_heads, page_size, max_pages_per_seq, window, num_splits, tiles_per_split;
  float scale_log2;  // softmax scale * log2(e): scores live in the log2 domain (exp2)
  int row_tiles;     // 16-row tiles of query heads per unit (DecodePlan::row_tiles)
  // With a combine row list (DecodePlan::combine_cta_rows): the rows the combine kernel merges,
  // CTA rows first. In the padding before the 64-byte aligned tensor maps, so that every other
  // kernel keeps its parameter block as it was.
  const int* combine_rows;
  int combine_cta_rows, combine_warp_rows;
  // Bulk tensor copies: the K and V pools as 2D tensors of 16-bit elements, [pages x KV heads
  // x page slots, head_dim] (encoded only for a policy that uses them).
  gpu::api::TensorMap k_map, v_map;
#if SCHEDLAB_CTA_TIMELINE
  harness::CtaSpan* timeline;  // the decode kernel's CTAs, then the combine's (kernels 0 and 1); or null
#endif
};
static_assert(offsetof(Params, k_map) == (offsetof(Params, row_tiles) + sizeof(int) + alignof(gpu::api::TensorMap) - 1) /
                                             alignof(gpu::api::TensorMap) * alignof(gpu::api::TensorMap),
              "the combine row list's fields fit the padding before the tensor maps");

// kRows rows of 16-bit head-dim values as bulk tensor copies write them and wgmma reads them:
// 64-column boxes of kRows rows x 128 bytes, each 128-byte swizzled (chunk c of row r at
// c ^ (r % 8): rows 8 apart are 1024 bytes apart, and the 8 rows of an ldmatrix hit 8 bank
// groups), one box after another.
template <int kRows, int kHeadDim>
struct BoxTile {
  static constexpr int kBoxCols = 64, kBoxBytes = kRows * 128;
  static constexpr int kBytes = kHeadDim / kBoxCols * kBoxBytes;
  static __device__ int offset(int row, int chunk) {
    return (chunk / 8) * kBoxBytes + row * 128 + (((chunk % 8) ^ (row % 8)) * 16);
  }
};

// Byte geometry of one 16-token tile of K (or V) for a KV dtype and head dim. kBoxes: the
// layout bulk tensor copies write (BoxTile of the tile's 16 rows); else the per-lane XOR
// swizzle of whole rows, which puts the 8 rows of an ldmatrix in 8 bank groups the same way.
template <DType kKv, int kHeadDim, bool kBoxes = false>
struct Tile {
  static constexpr bool kFp8 = kKv == DType::fp8_e4m3;
  static_assert(!(kBoxes && kFp8), "fp8 tiles are read by lanes through their own swizzle");
  static constexpr int kRawRowBytes = kHeadDim * (kFp8 ? 1 : 2);
  static constexpr int kRawBytes = kDecodeTileTokens * kRawRowBytes;
  static constexpr int kRawChunksPerLane = kRawBytes / 16 / kWarpSize;
  static constexpr int kRowBytes = kHeadDim * 2;  // 16-bit operands of the matrix unit
  static constexpr int kStageBytes = kRawBytes;   // one tile in shared memory
  using Boxes = BoxTile<kDecodeTileTokens, kHeadDim>;
  static constexpr int kBoxCols = Boxes::kBoxCols, kBoxBytes = Boxes::kBoxBytes;
  static constexpr int kKSteps = kHeadDim / 16;   // k16 steps of S = Q K^T
  static_assert(kRawBytes % (16 * kWarpSize) == 0, "a tile must split into 16-byte chunks per lane");
  // XOR swizzle of 16-byte chunks by row: the 8 rows one ldmatrix reads hit 8 bank groups.
  static __device__ int offset(int row, int chunk) {
    if constexpr (kBoxes) return Boxes::offset(row, chunk);
    else return row * kRowBytes + ((chunk ^ (row & 7)) * 16);
  }
  // fp8 tiles are read by the lanes themselves (ldmatrix has no 8-bit form on sm_90): their
  // chunks are swizzled within the row the same way.
  static constexpr int kRawChunksPerRow = kRawRowBytes / 16;
  static __device__ int raw_offset(int row, int chunk) {
    return row * kRawRowBytes + ((chunk ^ (row % kRawChunksPerRow)) * 16);
  }
  // fp8 head-dim permutation shared by Q and K (the dot product does not see it): lane t's k
  // values 2t, 2t+1, 2t+8, 2t+9 of step kk sit at bytes 64(kk/4) + 16t + 4(kk%4) + {0..3}, so
  // one 16-byte load of a K row gives a lane its fragments for four k steps.
  static __device__ int k_column(int kk, int t, int j) { return 64 * (kk / 4) + 16 * t + 4 * (kk % 4) + j; }
  // fp8 output-column permutation: for P V, lane g owns head-dim columns [kNT g, kNT (g+1)),
  // n8 tile j holding column kNT c + j in its C-fragment column c.
  static constexpr int kNT = kHeadDim / 8;
  static __device__ int o_column(int tile, int c) { return kFp8 ? kNT * c + tile : tile * 8 + c; }
};

// Stages of raw tiles a warp keeps in flight. A stage holds the bytes of kKvBuffers 16-bit
// tiles: an fp8 tile is half as large, so fp8 gets twice the stages and the same bytes in
// flight (a memory-bound loop runs at bytes in flight / latency).
template <class Policy, DType kKv>
inline constexpr int kStages = Policy::kKvBuffers * (kKv == DType::fp8_e4m3 ? 2 : 1);

template <class Policy, DType kKv>
inline constexpr int kMinCtas = kKv == DType::fp8_e4m3 ? Policy::kMinCtasPerSmFp8 : Policy::kMinCtasPerSm;
template <class Policy, DType kKv>
inline constexpr int kWarpsOf = kKv == DType::fp8_e4m3 ? Policy::kWarpsFp8 : Policy::kWarps;

// Bulk tensor copies (Policy::kBulkCopy) where the backend has them, for 16-bit KV; fp8 tiles
// keep the per-lane copies, whose swizzle their lane-wise reads need.
template <class Policy, DType kKv>
inline constexpr bool kBulk = Policy::kBulkCopy && gpu::kHasBulkCopy && kKv != DType::fp8_e4m3;
template <class Policy, DType kKv, int kHeadDim>
using TileOf = Tile<kKv, kHeadDim, kBulk<Policy, kKv>>;

// Per warp: kStages K+V stages, then (bulk copies) one mbarrier per stage after every warp's
// stages and the combine space.
template <class Policy, DType kKv, int kHeadDim>
struct Smem {
  using T = TileOf<Policy, kKv, kHeadDim>;
  static constexpr int kPerWarp = kStages<Policy, kKv> * 2 * T::kStageBytes;
  static constexpr int kCombine = kWarpsOf<Policy, kKv> * kDecodeMaxGroup * (kHeadDim + 2) * 4;
  static constexpr int kBarriers = kPerWarp * kWarpsOf<Policy, kKv> > kCombine ? kPerWarp * kWarpsOf<Policy, kKv> : kCombine;
  static constexpr int kBytes = kBarriers + (kBulk<Policy, kKv> ? kWarpsOf<Policy, kKv> * kStages<Policy, kKv> * 8 : 0);
};

// fp8 KV in the warpgroup body has a producer warpgroup beside the computing one.
template <class Policy, DType kKv>
inline constexpr bool kFp8Producers = kKv == DType::fp8_e4m3;

// The warpgroup row-tile body (RowTileMma::warpgroup): where it runs, and its shared memory.
// A step is one 16-token tile per warp, 64 keys; K and V of a step, and Q's 64 rows, are
// BoxTiles, each box 1024-byte aligned, as wgmma's 16-bit operands want them. fp8 KV lands in
// per-warp raw tiles first; each warp converts its own tile to f16 rows of the one 16-bit step.
template <class Policy, DType kKv>
inline constexpr bool kWarpgroupRows =
    SCHEDLAB_GPU_HAS_WGMMA && Policy::kRowTileMma == RowTileMma::warpgroup && Policy::kMaxRowTiles > 1;
// 16-bit KV: kStages steps of K then V as BoxTiles, then Q. fp8: a ring of raw slots (each
// one step's K or V tiles of every warp), two converted 16-bit steps the producers write, then
// Q. The warps' combine space (combine_warps) reuses the storage after the loop.
template <class Policy, DType kKv, int kHeadDim>
struct GroupSmem {
  static constexpr bool kFp8 = kKv == DType::fp8_e4m3;
  static constexpr bool kProducers = kFp8Producers<Policy, kKv>;
  // fp8 at head dim 128: S = Q K^T reads the raw e4m3 K tiles as they landed (their per-lane
  // swizzle is wgmma's 128-byte one at 128-byte rows; a step's four raw K tiles lie one after
  // another in a 1024-byte aligned slot, so the slot is the step's K operand), as two e4m3
  // products of Q's exact split Q s = hi + lo (store_q_split), and the producers convert only
  // V. Per key that drops K's conversion and halves K's operand read. The raw ring then holds
  // four steps (a step's K is read until its S is done) in the space of the converted K steps
  // it no longer needs. Head dim 64 converts K as V (a raw row is not a 128-byte row there).
  static constexpr bool kRawKeys = kProducers && kHeadDim == 128;
  static constexpr int kConvertedSteps = 2;
  static constexpr int kWarps = kWarpsOf<Policy, kKv>;
  static constexpr int kStages = Policy::kRowTileStages;  // 16-bit KV
  static constexpr int kTokens = kWarps * kDecodeTileTokens;
  using KV = BoxTile<kTokens, kHeadDim>;
  using Q = BoxTile<kWarps * kDecodeMaxGroup, kHeadDim>;
  using Q8 = BoxTile<kWarps * kDecodeMaxGroup, kHeadDim / 2>;  // raw keys: a part of Q, e4m3 as 8-bit pairs
  static constexpr int kRawTile = Tile<kKv, kHeadDim>::kRawBytes;  // fp8: one warp's 16 tokens of K (or V)
  static constexpr int kStageBytes = 2 * KV::kBytes;  // 16-bit: one step's K and V
  // fp8: the ring of raw slots, each one step's K or V tiles of every warp: two steps, four
  // with raw keys.
  static constexpr int kRawSlots = !kFp8 ? 0 : kRawKeys ? 8 : 4;
  static constexpr int kSlotBytes = kWarps * kRawTile;
  static constexpr int kConverted = kFp8 ? kRawSlots * kSlotBytes : kStages * kStageBytes;
  // A converted step: K then V (KV::kBytes each), or V alone with raw keys.
  static constexpr int kConvertedStepBytes = (kRawKeys ? 1 : 2) * KV::kBytes;
  static constexpr int kQ = kConverted + (kFp8 ? kConvertedSteps * kConvertedStepBytes : 0);
  // Raw keys: Q's high then low e4m3 parts (BoxTiles of 128-byte rows, together Q::kBytes at
  // head dim 128), then each query row's 1 / s.
  static constexpr int kQPartBytes = kWarps * kDecodeMaxGroup * kHeadDim;
  static constexpr int kRowScales = kQ + Q::kBytes;
  static constexpr int kQEnd = kRowScales + (kRawKeys ? kWarps * kDecodeMaxGroup * 4 : 0);
  static constexpr int kCombine = kWarps * kDecodeMaxGroup * (kHeadDim + 2) * 4;
  static constexpr int kBytes = kQEnd > kCombine ? kQEnd : kCombine;
  static_assert(!kRawKeys || (kSlotBytes % 1024 == 0 && kRawTile == 16 * 128 && 2 * kQPartBytes == Q::kBytes),
                "raw keys: a step's K slot is one 1024-byte aligned BoxTile of 128-byte rows");
  static_assert(!kWarpgroupRows<Policy, kKv> || (kWarps == 4 && Policy::kMaxRowTiles == 4),
                "the warpgroup body is one warpgroup of four warps, one 16-row tile each");
  static_assert(kStages >= 2, "a step is computed while the next one lands");
  // Where warp w's raw K (kv 0) or V (kv 1) tile of step j lands (fp8).
  static constexpr int raw_offset(int j, int kv, int w) {
    return ((2 * j + kv) % (kRawSlots > 0 ? kRawSlots : 1)) * kSlotBytes + w * kRawTile;  // 16-bit: unused
  }
  // 16-bit: where stage b's K lies (every warp copies its rows into it; V follows at kVOffset).
  static constexpr int k_offset(int b) { return b * kStageBytes; }
  static constexpr int kVOffset = KV::kBytes;
};

// Operand type of the matrix unit: fp8 KV is converted to f16 in registers, exactly (every
// e4m3 value is an f16).
template <DType kKv>
using Operand = std::conditional_t<kKv == DType::bf16, gpu::mma::Bf16, gpu::mma::F16>;
template <DType kKv>
inline constexpr DType kQueryType = kKv == DType::f16 ? DType::f16 : DType::bf16;

// Where the backend's m16n8k16 fragments are not native (AMD, where gpu::mma emulates them),
// the stages compute on the architecture's attention warp tile instead: v_mfma there
// (paged_decode_warp_tile.cuh).
inline constexpr bool kOnWarpTile = !gpu::mma::kHasMatrixUnits;

// Per-warp state of the online softmax: rows g and g + 8 of the padded group. On the warp
// tile a lane holds one query row, in slot 0, and O^T as the D fragments of kHeadDim/16 tiles.
template <int kHeadDim>
struct Softmax {
  float m[2] = {-INFINITY, -INFINITY};  // running max (log2 domain)
  float l[2] = {0.f, 0.f};              // this lane's share of the running sum
  float o[kHeadDim / (kOnWarpTile ? 16 : 8)][4] = {};  // O accumulator, C fragments of kHeadDim/8 n8 tiles
};

// kPow2Pages: the page size is a power of two (the host accepts no other, paged_decode.cu), so
// the division is a shift by its bit index. Pages smaller than a tile: each lane's page is that
// of the tile's row lane % 16, which issue_tile gathers from it; fetched ahead as the tile's one
// page is (kPrefetchPageIndex, the warpgroup body's steps), so the lookup's latency is hidden
// the same way. A row past the sequence reads an entry of the sequence's row of the block table
// that no copy uses (clamped to the row).
template <class Policy, bool kPow2Pages = false>
__device__ __forceinline__ int page_of(const Params& a, int seq, int tile) {
  if (a.page_size < kDecodeTileTokens) {
    const int slot = (tile * kDecodeTileTokens + gpu::lane_id() % kDecodeTileTokens) >> (__ffs(a.page_size) - 1);
    return a.block_table[std::int64_t(seq) * a.max_pages_per_seq + min(slot, a.max_pages_per_seq - 1)];
  }
  if constexpr (kPow2Pages)
    return a.block_table[std::int64_t(seq) * a.max_pages_per_seq + ((tile * kDecodeTileTokens) >> (__ffs(a.page_size) - 1))];
  else
    return a.block_table[std::int64_t(seq) * a.max_pages_per_seq + (tile * kDecodeTileTokens) / a.page_size];
}

// Fault injection (Policy::kFault, tests only): whether `tile` is the one a fault of kind
// kFault hits, the middle tile of its (sequence, KV head). Constant false unless the policy
// asks for that fault, so shipped policies compile no trace of it.
template <class Policy, DecodeFault kFault>
__device__ __forceinline__ bool fault_hits(int tile, int first_key, int seq_len) {
  if constexpr (Policy::kFault != kFault) return false;
  else return tile == (first_key / kDecodeTileTokens + (seq_len + kDecodeTileTokens - 1) / kDecodeTileTokens) / 2;
}

// Byte offset of a tile's first token of KV head kvh in the K (and V) pool: its 16 tokens lie
// in one page, contiguous. 64-bit (a pool can pass 4 GiB).
template <class Policy, DType kKv, int kHeadDim, bool kPow2Pages = false>
__device__ __forceinline__ std::int64_t tile_base(const Params& a, int kvh, int tile, int page) {
  const int slot0 = kPow2Pages ? (tile * kDecodeTileTokens) & (a.page_size - 1) : (tile * kDecodeTileTokens) % a.page_size;
  return ((std::int64_t(page) * a.kv_heads + kvh) * a.page_size + slot0) *
         std::int64_t(TileOf<Policy, kKv, kHeadDim>::kRawRowBytes);
}

// Pages smaller than a tile (page sizes 1 to 8; one token a page is the layout of a radix
// cache): the tile's rows lie in 16 / page_size pages. Byte offset of a row's first byte in the
// K (and V) pool, its page `page` (lane `row`'s page_of, passed round the warp).
template <class Policy, DType kKv, int kHeadDim>
__device__ __forceinline__ std::int64_t gathered_row_base(const Params& a, int kvh, int page, int token) {
  using T = TileOf<Policy, kKv, kHeadDim>;
  return ((std::int64_t(page) * a.kv_heads + kvh) * a.page_size + (token & (a.page_size - 1))) *
         std::int64_t(T::kRawRowBytes);
}

// STAGE issue: async copies of the K and V tile into this warp's buffer (16-bit KV: at rows
// row0 .. row0 + 15 of the layout Dst, which the warpgroup body's steps use). Offsets are
// 64-bit (a pool can pass 4 GiB); tokens past seq_len are zero-filled, not read. A page holds
// the whole tile (page_size >= 16) unless the page size is smaller, when each row is gathered
// from its own page (one uniform branch a tile; `page` is then this lane's page_of: row
// lane % 16's page).
// kParts: which of the tile's K (1) and V (2) this issue copies.
template <class Policy, DType kKv, int kHeadDim, class Dst = TileOf<Policy, kKv, kHeadDim>, bool kPow2Pages = false,
          int kParts = 3>
__device__ __forceinline__ void issue_tile(const Params& a, unsigned char* k_buf, unsigned char* v_buf, int kvh,
                                           int tile, int page, int seq_len, int row0 = 0) {
  using T = TileOf<Policy, kKv, kHeadDim>;
  constexpr int kChunksPerRow = T::kRawRowBytes / 16;
  const bool gather = a.page_size < kDecodeTileTokens;
  const std::int64_t base = gather ? 0 : tile_base<Policy, kKv, kHeadDim, kPow2Pages>(a, kvh, tile, page);
#pragma unroll
  for (int j = 0; j < T::kRawChunksPerLane; ++j) {
    const int chunk = gpu::lane_id() + j * kWarpSize;
    const int row = chunk / kChunksPerRow, col = chunk % kChunksPerRow;
    const int token = tile * kDecodeTileTokens + row;
    const bool valid = token < seq_len;
    const std::int64_t src =
        gather ? gathered_row_base<Policy, kKv, kHeadDim>(a, kvh, gpu::shfl(page, row), token) + col * 16
               : base + chunk * 16;
    const int dst = T::kFp8 ? T::raw_offset(row, col) : Dst::offset(row0 + row, col);
    if constexpr ((kParts & 1) != 0) gpu::async_copy_16(k_buf + dst, a.k_pool + src, valid);
    if constexpr ((kParts & 2) != 0) gpu::async_copy_16(v_buf + dst, a.v_pool + src, valid);
  }
}

// STAGE issue with bulk tensor copies (lane 0 alone): the K and V tile, 64 columns per box,
// counted on the stage's mbarrier `bar` (its arrival has announced 2 T::kRawBytes). Rows past
// the sequence end come along (a box is 16 rows) and are dealt with in CopyPipe::wait.
template <class Policy, DType kKv, int kHeadDim>
__device__ __forceinline__ void issue_tile_bulk(const Params& a, unsigned char* k_buf, unsigned char* v_buf,
                                                std::uint64_t* bar, int kvh, int tile, int page) {
  using T = TileOf<Policy, kKv, kHeadDim>;
  const int row = (page * a.kv_heads + kvh) * a.page_size + (tile * kDecodeTileTokens) % a.page_size;
#pragma unroll
  for (int box = 0; box < kHeadDim / T::kBoxCols; ++box) {
    gpu::bulk_tensor_copy_2d(k_buf + box * T::kBoxBytes, &a.k_map, box * T::kBoxCols, row, bar);
    gpu::bulk_tensor_copy_2d(v_buf + box * T::kBoxBytes, &a.v_map, box * T::kBoxCols, row, bar);
  }
}

// A warp's K/V stages and how they are filled: per-lane async copies in commit groups, or bulk
// copies on the warp's own ring of full barriers (attention::FullPipeline: the warp reads a
// stage before it refills it, so no empty barrier is needed). Stages are filled and waited
// for in ring order, so `b` of issue() and wait() is the ring state's index.
template <class Policy, DType kKv, int kHeadDim>
struct CopyPipe {
  using T = TileOf<Policy, kKv, kHeadDim>;
  using S = Smem<Policy, kKv, kHeadDim>;
  static constexpr int kStagesHere = kStages<Policy, kKv>;
  using Ring = attention::FullPipeline<kStagesHere>;
  unsigned char* base;
  Ring* ring = nullptr;
  attention::PipelineState<kStagesHere> issued, landed;  // bulk: the stage a copy fills, a wait finds full
  __device__ CopyPipe(unsigned char* smem, int warp) : base(smem + warp * S::kPerWarp) {
    if constexpr (kBulk<Policy, kKv>) {
      ring = reinterpret_cast<Ring*>(smem + S::kBarriers) + warp;
      if (gpu::lane_id() == 0) {
        ring->init_full(1);
        gpu::mbarrier_init_fence();
      }
      gpu::warp_sync();
    }
  }
  __device__ unsigned char* k(int b) const { return base + b * 2 * T::kStageBytes; }
  __device__ unsigned char* v(int b) const { return base + b * 2 * T::kStageBytes + T::kStageBytes; }
  // The K tile of another warp's stage b (its V tile follows): the row-tile body reads them all.
  static __device__ const unsigned char* k_of(const unsigned char* smem, int warp, int b) {
    return smem + warp * S::kPerWarp + b * 2 * T::kStageBytes;
  }
  // tile < 0: nothing to copy (a per-lane pipe still commits an empty group, which keeps its
  // wait counts uniform; a bulk one passes the stage by).
  __device__ void issue(int b, const Params& a, int kvh, int tile, int page, int seq_len) {
    if constexpr (kBulk<Policy, kKv>) {
      if (tile >= 0 && gpu::lane_id() == 0)
        issue_tile_bulk<Policy, kKv, kHeadDim>(a, k(b), v(b), ring->producer_expect(issued, 2 * T::kRawBytes), kvh,
                                               tile, page);
      ++issued;
    } else {
      if (tile >= 0) issue_tile<Policy, kKv, kHeadDim>(a, k(b), v(b), kvh, tile, page, seq_len);
      gpu::async_commit();
    }
  }
  // Stage b (the oldest in flight) has landed and every lane may read it. A bulk copy brings
  // whole 16-row boxes: V rows past the sequence end (rows >= valid_rows) are zeroed, since P
  // is 0 there but 0 x a stale NaN is not (K rows there are masked to -inf whatever they hold).
  __device__ void wait(int b, int valid_rows) {
    if constexpr (kBulk<Policy, kKv>) {
      ring->consumer_wait(landed);
      ++landed;
      if (valid_rows < kDecodeTileTokens) {
        constexpr int kChunks = T::kRowBytes / 16;
        for (int i = gpu::lane_id(); i < (kDecodeTileTokens - valid_rows) * kChunks; i += kWarpSize)
          *reinterpret_cast<uint4*>(v(b) + T::offset(valid_rows + i / kChunks, i % kChunks)) = uint4{0, 0, 0, 0};
        gpu::fence_proxy_async_smem();  // before a later bulk copy lands in the same bytes
      }
    } else {
      gpu::async_wait<kStagesHere - 1, 2 * T::kRawChunksPerLane>();
    }
    gpu::warp_sync();
  }
  __device__ void drain() {
    if constexpr (!kBulk<Policy, kKv>) gpu::async_wait<0>();
  }
};

// STAGE qk: S (16 x 16 tokens, two n8 tiles) = Q K^T. Streaming loads each K fragment right
// before its matrix instruction; resident loads the whole tile's fragments first (seed 002).
template <class Policy, DType kKv, int kHeadDim>
  requires(!kOnWarpTile)  // else the overload in paged_decode_warp_tile.cuh
__device__ __forceinline__ void qk_scores(float (&s)[2][4], const std::uint32_t (&qa)[kHeadDim / 16][4],
                                          const unsigned char* k_tile) {
  using T = TileOf<Policy, kKv, kHeadDim>;
  const int lane = gpu::mma::frag_lane();
  const int row = (lane / 16) * 8 + lane % 8;  // token; matrices 0,1: tokens 0-7, matrices 2,3: 8-15
  const int half = (lane / 8) % 2;             // which 8 columns of the k16 step
#pragma unroll
  for (int n = 0; n < 2; ++n)
#pragma unroll
    for (int i = 0; i < 4; ++i) s[n][i] = 0.f;
  if constexpr (Policy::kStreamKv) {
#pragma unroll
    for (int kk = 0; kk < T::kKSteps; ++kk) {
      std::uint32_t kb[4];
      gpu::mma::ldmatrix_x4(kb, k_tile + T::offset(row, 2 * kk + half));
      gpu::mma::mma_16816<Operand<kKv>>(s[0], qa[kk], {kb[0], kb[1]});
      gpu::mma::mma_16816<Operand<kKv>>(s[1], qa[kk], {kb[2], kb[3]});
    }
  } else {
    std::uint32_t kb[T::kKSteps][4];
#pragma unroll
    for (int kk = 0; kk < T::kKSteps; ++kk) gpu::mma::ldmatrix_x4(kb[kk], k_tile + T::offset(row, 2 * kk + half));
#pragma unroll
    for (int kk = 0; kk < T::kKSteps; ++kk) {
      gpu::mma::mma_16816<Operand<kKv>>(s[0], qa[kk], {kb[kk][0], kb[kk][1]});
      gpu::mma::mma_16816<Operand<kKv>>(s[1], qa[kk], {kb[kk][2], kb[kk][3]});
    }
  }
}

// STAGE softmax over kTiles n8 tiles of S, keys key0 + 8 n + 2 t + i % 2 (those outside
// [first_key, key_end) are masked): scale and mask S, update the running max and sum, rescale
// O, and pack P as the A operand of kTiles / 2 k16 steps of P V (the C layout of two n8 tiles
// is the A layout of one k16 step). The warp body takes 16 keys at a time, the warpgroup body
// 64. A dropped-tile fault masks the 16-key tile it hits (first_key and seq_len place it).
// kMask false: every key is visible (the caller knows the step lies inside the range).
// kLean (the warpgroup body's step): the maximum is taken over the unscaled scores and scaled
// once (the scale is > 0, validated on the host, so the two orders give the same max), each
// exponent is one FFMA, and O *= corr is skipped when no row of the warp moved its max (corr is
// then exactly 1).
struct Rescale {
  float corr[2];
  bool moved;
};
template <class Policy, int kHeadDim>
__device__ __forceinline__ void apply_rescale(Softmax<kHeadDim>& st, const Rescale& r) {
  if (Policy::kFault != DecodeFault::stale_max && gpu::warp_any(r.moved)) {
#pragma unroll
    for (int n = 0; n < kHeadDim / 8; ++n)
#pragma unroll
      for (int i = 0; i < 4; ++i) st.o[n][i] *= r.corr[i / 2];
  }
}
// The softmax scale of a lane's row r (0: row g, 1: row g + 8): the same for every row, or one
// per row (RowScales: S computed on queries scaled per row, GroupSmem::kRawKeys).
struct RowScales {
  float r[2];
};
__device__ __forceinline__ float row_scale(float s, int) { return s; }
__device__ __forceinline__ float row_scale(const RowScales& s, int r) { return s.r[r]; }
// The warpgroup body's lean step whose 64 keys all lie in the range: where no lane of a warp
// holds a scaled score more than kMaxSlack (log2 units) above its row's running max, one vote
// says so and the step keeps that max as its exponents' offset. It then takes no cross-lane max
// (two shuffle rounds, each waited for, on the computing warps' chain of S, softmax and P V)
// and rescales nothing; P's values stay below 2^kMaxSlack, in f16's range, and the sum and O
// are the same up to rounding, since the online softmax's result does not depend on the offset
// (FlashAttention-4 rescales only past such a threshold). Otherwise the step takes its rows'
// exact max. The exact max every step was measured against it (experiments/decode_row_tile_body).
inline constexpr int kMaxSlack = 8;
template <class Policy, DType kKv, int kHeadDim, int kTiles, bool kMask = true, bool kLean = false, class Scale = float>
__device__ __forceinline__ void softmax_keys(float (&s)[kTiles][4], Softmax<kHeadDim>& st,
                                             std::uint32_t (&pa)[kTiles / 2][4], Scale scale_log2, int key0,
                                             int first_key, int key_end, int seq_len) {
  const int t = gpu::mma::frag_lane() % 4;
  float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
  for (int n = 0; n < kTiles; ++n)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      if constexpr (kMask) {
        const int key = key0 + n * 8 + 2 * t + (i % 2);
        const bool dropped = fault_hits<Policy, DecodeFault::drop_tile>(key / kDecodeTileTokens, first_key, seq_len);
        const bool visible = key >= first_key && key < key_end && !dropped;
        s[n][i] = visible ? (kLean ? s[n][i] : s[n][i] * row_scale(scale_log2, i / 2)) : -INFINITY;
      } else if constexpr (!kLean) {
        s[n][i] *= row_scale(scale_log2, i / 2);
      }
      if constexpr (kTiles < 4) tile_max[i / 2] = fmaxf(tile_max[i / 2], s[n][i]);
    }
  // A step of 4 or more n8 tiles (the warpgroup body's 64 keys) reduces its row's values as a
  // tree: log2 of them dependent instructions where a chain takes one per value.
  auto tree = [](float (&t)[kTiles], auto op) {
#pragma unroll
    for (int w = kTiles / 2; w >= 1; w /= 2)
#pragma unroll
      for (int n = 0; n < w; ++n) t[n] = op(t[n], t[n + w]);
    return t[0];
  };
  if constexpr (kTiles >= 4) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float t[kTiles];
#pragma unroll
      for (int n = 0; n < kTiles; ++n) t[n] = fmaxf(s[n][2 * r], s[n][2 * r + 1]);
      tile_max[r] = tree(t, [](float x, float y) { return fmaxf(x, y); });
    }
  }
  // The slack (kMaxSlack; a lean step whose keys are all visible): where every lane's scaled
  // scores lie within it of their rows' running max, the warp keeps those maxima (one vote) and
  // skips the rows' cross-lane max. No running max is -inf past a visible step.
  constexpr bool kSlack = kLean && !kMask && kTiles >= 4;
  bool keep_max = false;
  if constexpr (kSlack) {
    bool within = true;
#pragma unroll
    for (int r = 0; r < 2; ++r)
      within = within && st.m[r] != -INFINITY &&
               (Policy::kFault == DecodeFault::max_unchecked ||
                tile_max[r] * row_scale(scale_log2, r) <= st.m[r] + float(kMaxSlack));
    keep_max = gpu::warp_all(within);
  }
  float corr[2];
  bool moved = false;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    corr[r] = 1.f;
    if (!keep_max) {
      tile_max[r] = fmaxf(tile_max[r], gpu::shfl_xor(tile_max[r], 1));  // the 4 lanes of a row
      tile_max[r] = fmaxf(tile_max[r], gpu::shfl_xor(tile_max[r], 2));
      if constexpr (kLean) tile_max[r] *= row_scale(scale_log2, r);
      const float m_new = fmaxf(st.m[r], tile_max[r]);
      // A fully masked tile keeps m at -inf; subtracting a finite stand-in avoids inf - inf.
      corr[r] = gpu::mma::fast_exp2(st.m[r] - (m_new == -INFINITY ? 0.f : m_new));
      moved = moved || m_new != st.m[r];
      st.m[r] = m_new;
      st.l[r] *= corr[r];
      if constexpr (!kLean) {
#pragma unroll
        for (int n = 0; n < kHeadDim / 8; ++n) {
          st.o[n][2 * r] *= corr[r];
          st.o[n][2 * r + 1] *= corr[r];
        }
      }
    }
    const float m_use = st.m[r] == -INFINITY ? 0.f : st.m[r];
#pragma unroll
    for (int n = 0; n < kTiles; ++n) {
      const float sc = row_scale(scale_log2, r);
      s[n][2 * r] = gpu::mma::fast_exp2(kLean ? fmaf(s[n][2 * r], sc, -m_use) : s[n][2 * r] - m_use);
      s[n][2 * r + 1] = gpu::mma::fast_exp2(kLean ? fmaf(s[n][2 * r + 1], sc, -m_use) : s[n][2 * r + 1] - m_use);
      if constexpr (kTiles < 4) st.l[r] += s[n][2 * r] + s[n][2 * r + 1];
    }
    if constexpr (kTiles >= 4) {
      float t[kTiles];
#pragma unroll
      for (int n = 0; n < kTiles; ++n) t[n] = s[n][2 * r] + s[n][2 * r + 1];
      st.l[r] += tree(t, [](float x, float y) { return x + y; });
    }
  }
  // A row whose max stayed has corr exactly 1 (and one still at -inf has O = 0 and l = 0).
  if constexpr (kLean) apply_rescale<Policy>(st, Rescale{{corr[0], corr[1]}, moved});
#pragma unroll
  for (int kk = 0; kk < kTiles / 2; ++kk) {
    pa[kk][0] = gpu::mma::pack2<Operand<kKv>>(s[2 * kk][0], s[2 * kk][1]);
    pa[kk][1] = gpu::mma::pack2<Operand<kKv>>(s[2 * kk][2], s[2 * kk][3]);
    pa[kk][2] = gpu::mma::pack2<Operand<kKv>>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
    pa[kk][3] = gpu::mma::pack2<Operand<kKv>>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
  }
}

// STAGE softmax of the warp body: one 16-token tile.
template <class Policy, DType kKv, int kHeadDim>
  requires(!kOnWarpTile)  // else the overload in paged_decode_warp_tile.cuh
__device__ __forceinline__ void online_softmax(float (&s)[2][4], Softmax<kHeadDim>& st, std::uint32_t (&pa)[4],
                                               float scale_log2, int tile, int first_key, int seq_len) {
  softmax_keys<Policy, kKv, kHeadDim, 2>(s, st, reinterpret_cast<std::uint32_t (&)[1][4]>(pa), scale_log2,
                                         tile * kDecodeTileTokens, first_key, seq_len, seq_len);
}

// STAGE pv: O (16 x head_dim) += P (16 x 16 tokens) V (16 tokens x head_dim).
template <class Policy, DType kKv, int kHeadDim>
  requires(!kOnWarpTile)  // else the overload in paged_decode_warp_tile.cuh
__device__ __forceinline__ void pv_accumulate(Softmax<kHeadDim>& st, const std::uint32_t (&pa)[4],
                                              const unsigned char* v_tile) {
  using T = TileOf<Policy, kKv, kHeadDim>;
  const int lane = gpu::mma::frag_lane();
  const int row = ((lane / 8) % 2) * 8 + lane % 8;  // token; matrices 1 and 3 hold tokens 8-15
  const int half = lane / 16;                       // matrices 2,3: the second n8 tile
  if constexpr (Policy::kStreamKv) {
#pragma unroll
    for (int nn = 0; nn < kHeadDim / 16; ++nn) {
      std::uint32_t vb[4];
      gpu::mma::ldmatrix_x4_trans(vb, v_tile + T::offset(row, 2 * nn + half));
      gpu::mma::mma_16816<Operand<kKv>>(st.o[2 * nn], pa, {vb[0], vb[1]});
      gpu::mma::mma_16816<Operand<kKv>>(st.o[2 * nn + 1], pa, {vb[2], vb[3]});
    }
  } else {
    std::uint32_t vb[kHeadDim / 16][4];
#pragma unroll
    for (int nn = 0; nn < kHeadDim / 16; ++nn) gpu::mma::ldmatrix_x4_trans(vb[nn], v_tile + T::offset(row, 2 * nn + half));
#pragma unroll
    for (int nn = 0; nn < kHeadDim / 16; ++nn) {
      gpu::mma::mma_16816<Operand<kKv>>(st.o[2 * nn], pa, {vb[nn][0], vb[nn][1]});
      gpu::mma::mma_16816<Operand<kKv>>(st.o[2 * nn + 1], pa, {vb[nn][2], vb[nn][3]});
    }
  }
}

// STAGE qk, fp8: each lane reads its K bytes (permuted columns, see Tile::k_column) with
// 16-byte loads and converts them to f16 fragments in registers.
template <class Policy, int kHeadDim>
  requires(!kOnWarpTile)  // else the overload in paged_decode_warp_tile.cuh
__device__ __forceinline__ void qk_scores_fp8(float (&s)[2][4], const std::uint32_t (&qa)[kHeadDim / 16][4],
                                              const unsigned char* k_raw) {
  using T = Tile<DType::fp8_e4m3, kHeadDim>;
  constexpr int kGroups = kHeadDim / 64;  // 16-byte chunks a lane reads per row
  const int g = gpu::mma::frag_lane() / 4, t = gpu::mma::frag_lane() % 4;
#pragma unroll
  for (int n = 0; n < 2; ++n)
#pragma unroll
    for (int i = 0; i < 4; ++i) s[n][i] = 0.f;
  auto chunk = [&](int n, int grp) { return *reinterpret_cast<const uint4*>(k_raw + T::raw_offset(n * 8 + g, 4 * grp + t)); };
  auto math = [&](int n, int grp, const uint4& v) {
    const std::uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int q = 0; q < 4; ++q)
      gpu::mma::mma_16816<gpu::mma::F16>(s[n], qa[4 * grp + q],
                                         {gpu::mma::fp8x2_to_f16x2(static_cast<std::uint16_t>(w[q] & 0xffffu)),
                                          gpu::mma::fp8x2_to_f16x2(static_cast<std::uint16_t>(w[q] >> 16))});
  };
  if constexpr (Policy::kStreamKv) {
#pragma unroll
    for (int grp = 0; grp < kGroups; ++grp)
#pragma unroll
      for (int n = 0; n < 2; ++n) math(n, grp, chunk(n, grp));
  } else {
    uint4 v[kGroups][2];
#pragma unroll
    for (int grp = 0; grp < kGroups; ++grp)
#pragma unroll
      for (int n = 0; n < 2; ++n) v[grp][n] = chunk(n, grp);
#pragma unroll
    for (int grp = 0; grp < kGroups; ++grp)
#pragma unroll
      for (int n = 0; n < 2; ++n) math(n, grp, v[grp][n]);
  }
}

// STAGE pv, fp8: lane (g, t) reads its kNT columns of the 4 token rows it needs (2t, 2t+1,
// 2t+8, 2t+9), pairs the bytes of two tokens (PRMT) and converts each pair to an f16x2
// B fragment of one n8 tile (the output columns are permuted: Tile::o_column).
template <class Policy, int kHeadDim>
  requires(!kOnWarpTile)  // else the overload in paged_decode_warp_tile.cuh
__device__ __forceinline__ void pv_accumulate_fp8(Softmax<kHeadDim>& st, const std::uint32_t (&pa)[4],
                                                  const unsigned char* v_raw) {
  using T = Tile<DType::fp8_e4m3, kHeadDim>;
  constexpr int kWords = T::kNT / 4;
  const int g = gpu::mma::frag_lane() / 4, t = gpu::mma::frag_lane() % 4;
  std::uint32_t r[4][kWords];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = 2 * t + (i % 2) + 8 * (i / 2);
    const unsigned char* p = v_raw + T::raw_offset(row, (T::kNT * g) / 16) + (T::kNT * g) % 16;
#pragma unroll
    for (int w = 0; w < kWords; ++w) r[i][w] = reinterpret_cast<const std::uint32_t*>(p)[w];
  }
  constexpr std::uint32_t kPairLow = 0x5140, kPairHigh = 0x7362;  // (a0 b0 a1 b1), (a2 b2 a3 b3)
#pragma unroll
  for (int w = 0; w < kWords; ++w) {
    const std::uint32_t lo01 = gpu::mma::byte_perm(r[0][w], r[1][w], kPairLow);
    const std::uint32_t hi01 = gpu::mma::byte_perm(r[0][w], r[1][w], kPairHigh);
    const std::uint32_t lo23 = gpu::mma::byte_perm(r[2][w], r[3][w], kPairLow);
    const std::uint32_t hi23 = gpu::mma::byte_perm(r[2][w], r[3][w], kPairHigh);
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const std::uint32_t p01 = ((b < 2 ? lo01 : hi01) >> (16 * (b % 2))) & 0xffffu;
      const std::uint32_t p23 = ((b < 2 ? lo23 : hi23) >> (16 * (b % 2))) & 0xffffu;
      gpu::mma::mma_16816<gpu::mma::F16>(st.o[4 * w + b], pa,
                                         {gpu::mma::fp8x2_to_f16x2(static_cast<std::uint16_t>(p01)),
                                          gpu::mma::fp8x2_to_f16x2(static_cast<std::uint16_t>(p23))});
    }
  }
}

// Q rows head0 .. head0 + rows - 1 as A fragments (the padding rows are zero), converted to
// the operand type.
template <DType kKv, int kHeadDim>
  requires(!kOnWarpTile)  // else the overload in paged_decode_warp_tile.cuh
__device__ __forceinline__ void load_q(std::uint32_t (&qa)[kHeadDim / 16][4], const Params& a, int seq, int head0,
                                       int rows) {
  using E = Element<kQueryType<kKv>>;
  const auto* q = static_cast<const typename E::storage*>(a.q);
  const int g = gpu::mma::frag_lane() / 4, t = gpu::mma::frag_lane() % 4;
  auto at = [&](int r, int d) {
    return r < rows ? E::load(q, (std::size_t(seq) * a.q_heads + head0 + r) * kHeadDim + d) : 0.f;
  };
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = g + 8 * (i % 2);
      const int d = Tile<kKv, kHeadDim>::kFp8 ? Tile<kKv, kHeadDim>::k_column(kk, t, 2 * (i / 2))
                                              : kk * 16 + 2 * t + 8 * (i / 2);
      qa[kk][i] = gpu::mma::pack2<Operand<kKv>>(at(r, d), at(r, d + 1));
    }
}

}  // namespace schedlab::kernels::decode_detail
#include "kernels/decode/paged_decode_warp_tile.cuh"  // the stages above on the warp tile (kOnWarpTile)
namespace schedlab::kernels::decode_detail {

// Who takes part in a CTA's closing steps (finish_unit): every thread (kThreads 0, barrier 0),
// or the kThreads computing threads alone through a named barrier, once producer warps have left.
template <int kThreads>
struct CtaSync {
  static constexpr int kBarrier = 6;  // above the warpgroup body's full / empty / Q barriers
  static __device__ __forceinline__ void sync() {
    if constexpr (kThreads == 0) {
      gpu::block_sync();
    } else {
#if SCHEDLAB_GPU_HAS_WGMMA
      gpu::named_barrier_sync(kBarrier, kThreads);
#endif
    }
  }
  static __device__ __forceinline__ int threads() { return kThreads == 0 ? int(blockDim.x) : kThreads; }
  template <int kWarpsIfAll>
  static constexpr int kWarps = kThreads == 0 ? kWarpsIfAll : kThreads / kWarpSize;
  // Whether `pred` holds on thread 0 (the others pass false), seen by every participant; `word`:
  // a shared word no participant reads or writes meanwhile.
  static __device__ __forceinline__ bool thread0_says(bool pred, int* word) {
    if constexpr (kThreads == 0) {
      return gpu::block_any_in_spent_smem(pred);
    } else {
      if (threadIdx.x == 0) *word = pred;
      sync();
      return *word != 0;
    }
  }
};

// Each warp writes its (m, l, O) rows; the CTA merges them and writes the final output
// (`whole`: the CTA saw every key of its rows) or a normalized partial with its log-sum-exp.
// With row tiles, warp w holds rows 16 (w % kRowTiles) .. + 15 of the CTA's `rows`, and the
// warps holding the same rows are merged.
// Columns: the tile whose o_column maps the accumulator's n8 tiles to head-dim columns (the
// warp body's fp8 PV permutes them; the warpgroup body's are in order for every KV type).
template <class Policy, DType kKv, int kHeadDim, int kRowTiles = 1, class Columns = Tile<kKv, kHeadDim>,
          class Sync = CtaSync<0>>
__device__ void combine_warps(Softmax<kHeadDim>& st, float* smem, const Params& a, int seq, int kvh, int split,
                              int head0, int rows, bool whole) {
  constexpr int kStride = kHeadDim + 2;  // O row, then m and l
  constexpr int kSameRows = kWarpsOf<Policy, kKv> / kRowTiles;  // warps holding each row
  const int g = gpu::mma::frag_lane() / 4, t = gpu::mma::frag_lane() % 4;
  float* mine = smem + gpu::warp_id() * kDecodeMaxGroup * kStride;
  const int my_rows = rows - kDecodeMaxGroup * (gpu::warp_id() % kRowTiles);
  using E = Element<kQueryType<kKv>>;
  if constexpr (kSameRows == 1 && !kOnWarpTile) {
    // Every row is one warp's (row tiles, a warp per 16-row tile): nothing to merge, so each
    // lane writes its own columns of O straight from its registers, scaled once per row. The
    // round trip through shared memory below, an exp2 and a division per element, was about a
    // tenth of fp8 MQA's warp samples on the H200 (experiments/decode_work_partition/LOG.md).
    const float v_scale = a.v_scale ? a.v_scale[kvh] : 1.f;
    const int row_base = kDecodeMaxGroup * (gpu::warp_id() % kRowTiles);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = st.l[r];
      l += gpu::shfl_xor(l, 1);
      l += gpu::shfl_xor(l, 2);
      const int row = g + 8 * r;
      if (row >= my_rows) continue;
      const int head = head0 + row_base + row;
      const float inv = l > 0.f ? v_scale / l : 0.f;  // no visible key: zeros, as the reference
      if (whole) {
        auto* o = static_cast<typename E::storage*>(a.o) + (std::size_t(seq) * a.q_heads + head) * kHeadDim;
#pragma unroll
        for (int n = 0; n < kHeadDim / 8; ++n)
#pragma unroll
          for (int c = 0; c < 2; ++c) E::store(o, Columns::o_column(n, 2 * t + c), st.o[n][2 * r + c] * inv);
      } else {
        const std::size_t slot = (std::size_t(seq) * a.q_heads + head) * a.num_splits + split;
        float* o = a.partial_o + slot * kHeadDim;
#pragma unroll
        for (int n = 0; n < kHeadDim / 8; ++n) {
          if constexpr (!Columns::kFp8) {  // columns in order: a lane's pair is adjacent
            *reinterpret_cast<float2*>(o + n * 8 + 2 * t) = float2{st.o[n][2 * r] * inv, st.o[n][2 * r + 1] * inv};
          } else {
#pragma unroll
            for (int c = 0; c < 2; ++c) o[Columns::o_column(n, 2 * t + c)] = st.o[n][2 * r + c] * inv;
          }
        }
        // A lost-split fault writes the middle split's partial with no weight in the combine.
        const bool lost = Policy::kFault == DecodeFault::lose_split && split == a.num_splits / 2;
        if (t == 0) a.partial_lse[slot] = l > 0.f && !lost ? st.m[r] + log2f(l) : -INFINITY;
      }
    }
    return;
  }
  if constexpr (kOnWarpTile) {
    stash_rows_on_tile<kKv, kHeadDim>(st, mine, kStride, my_rows);
  } else {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      st.l[r] += gpu::shfl_xor(st.l[r], 1);
      st.l[r] += gpu::shfl_xor(st.l[r], 2);
      const int row = g + 8 * r;
      if (row >= my_rows) continue;
#pragma unroll
      for (int n = 0; n < kHeadDim / 8; ++n) {
        mine[row * kStride + Columns::o_column(n, 2 * t)] = st.o[n][2 * r];
        mine[row * kStride + Columns::o_column(n, 2 * t + 1)] = st.o[n][2 * r + 1];
      }
      if (t == 0) {
        mine[row * kStride + kHeadDim] = st.m[r];
        mine[row * kStride + kHeadDim + 1] = st.l[r];
      }
    }
  }
  Sync::sync();
  const float v_scale = a.v_scale ? a.v_scale[kvh] : 1.f;
  for (int idx = threadIdx.x; idx < rows * kHeadDim; idx += Sync::threads()) {
    const int row = idx / kHeadDim, d = idx % kHeadDim;
    const int tile = kRowTiles == 1 ? 0 : row / kDecodeMaxGroup, tile_row = row - kDecodeMaxGroup * tile;
    auto at = [&](int i) { return smem + ((i * kRowTiles + tile) * kDecodeMaxGroup + tile_row) * kStride; };
    float m = -INFINITY;
    for (int i = 0; i < kSameRows; ++i) m = fmaxf(m, at(i)[kHeadDim]);
    float l = 0.f, o = 0.f;
    if (m != -INFINITY) {
      for (int i = 0; i < kSameRows; ++i) {
        const float* r = at(i);
        const float c = gpu::mma::fast_exp2(r[kHeadDim] - m);
        l += r[kHeadDim + 1] * c;
        o += r[d] * c;
      }
    }
    const int head = head0 + row;
    const float out = l > 0.f ? o * v_scale / l : 0.f;  // no visible key: zeros, as the reference
    if (whole) {
      E::store(static_cast<typename E::storage*>(a.o), (std::size_t(seq) * a.q_heads + head) * kHeadDim + d, out);
    } else {
      const std::size_t slot = (std::size_t(seq) * a.q_heads + head) * a.num_splits + split;
      a.partial_o[slot * kHeadDim + d] = out;
      // A lost-split fault writes the middle split's partial with no weight in the combine.
      const bool lost = Policy::kFault == DecodeFault::lose_split && split == a.num_splits / 2;
      if (d == 0) a.partial_lse[slot] = l > 0.f && !lost ? m + log2f(l) : -INFINITY;
    }
  }
}

// Token-balanced chunks merge their own partials: every CTA of a unit counts its arrival on the
// unit's counter once its partial is visible, and the last to arrive merges the unit's rows
// with weights 2^(lse - max lse), one warp per row and the columns over the lanes, and leaves
// the counter zero for the next launch. This replaces the split combine's second kernel, whose
// launch and wave (one CTA per sequence and head) were about a tenth of the one-long fp8
// batch's time on the H200.
// The partials of a unit: a token-balanced plan's own count per unit (negated where the combine
// kernel merges them: never 1, never above 1, so neither a whole output nor a merge here), else
// the grid's splits.
template <class Policy>
__device__ __forceinline__ int unit_parts(const Params& a, int unit) {
  if constexpr (Policy::kTileSchedule == TileSchedule::token_balanced)
    if (a.unit_partials) return a.unit_partials[unit];
  return a.num_splits;
}
// One query row (row: sequence x q_heads + head) merged by one warp: its `parts` partials
// weighted by 2^(lse - max lse), the columns over the lanes, then normalized into O. Coherent
// loads: the partials may come from other CTAs of the same kernel.
template <DType kQ, int kHeadDim>
__device__ __forceinline__ void merge_row_in_warp(const Params& a, std::size_t row, int parts) {
  constexpr int kCols = kHeadDim / kWarpSize;  // consecutive columns per lane
  const int lane = gpu::lane_id();
  const std::size_t slot0 = row * a.num_splits;
  float m = -INFINITY;
  for (int sp = lane; sp < parts; sp += kWarpSize) m = fmaxf(m, gpu::load_coherent(a.partial_lse + slot0 + sp));
  for (int off = kWarpSize / 2; off > 0; off /= 2) m = fmaxf(m, gpu::shfl_xor(m, off));
  float o[kCols] = {}, wsum = 0.f;
  if (m != -INFINITY) {
#pragma unroll 4
    for (int sp = 0; sp < parts; ++sp) {
      const float wgt = gpu::mma::fast_exp2(gpu::load_coherent(a.partial_lse + slot0 + sp) - m);
      const float* src = a.partial_o + (slot0 + sp) * kHeadDim + lane * kCols;
      wsum += wgt;
#pragma unroll
      for (int c = 0; c < kCols; ++c) o[c] += wgt * gpu::load_coherent(src + c);
    }
  }
  using E = Element<kQ>;
#pragma unroll
  for (int c = 0; c < kCols; ++c)  // no visible key: zeros, as the reference
    E::store(static_cast<typename E::storage*>(a.o), row * kHeadDim + lane * kCols + c, wsum > 0.f ? o[c] / wsum : 0.f);
}
template <class Policy, DType kKv, int kHeadDim, class Sync = CtaSync<0>>
__device__ void merge_unit_if_last(const Params& a, int unit, int seq, int head0, int rows, int parts, int* word) {
  gpu::fence_device();  // this thread's partial is visible before the CTA's arrival is counted
  Sync::sync();
  bool last = false;
  if (threadIdx.x == 0) {
    last = atomicAdd(a.schedule + unit, 1) == parts - 1;
    if (last) gpu::fence_device();  // acquire: the partials counted before this arrival are visible
  }
  // The verdict reaches every thread through the barrier itself (__syncthreads_or; on AMD,
  // whose device library's keeps LDS of its own, through the shared memory, done with here):
  // a static shared word would pad every decode kernel's shared memory.
  if (!Sync::thread0_says(last, word)) return;
  for (int row = gpu::warp_id(); row < rows; row += Sync::template kWarps<kWarpsOf<Policy, kKv>>)
    merge_row_in_warp<kQueryType<kKv>, kHeadDim>(a, std::size_t(seq) * a.q_heads + head0 + row, parts);
  if (threadIdx.x == 0) a.schedule[unit] = 0;
}

// Where a warp's tiles come from. take() returns the next tile to issue (-1: none left);
// peek() returns what the next take() will, so that tile's page id can be fetched ahead.
// Static: warp w of a split takes tiles lo + w, lo + w + kWarps, ...
struct StaticTiles {
  int lo, step, count, i = 0;
  __device__ int peek() const { return i < count ? lo + i * step : -1; }
  __device__ int take() {
    const int t = peek();
    ++i;
    return t;
  }
};

// Dynamic: a unit's first tiles (Policy::kStaticPercent of them) are split among the warps
// that start on it, interleaved as in a static split; the rest are handed out kChunk at a
// time by a counter every warp on the unit shares. Each grab is issued kChunk - 1 tiles
// before its tiles are needed: under load an atomic's round trip is as long as a tile's copy,
// and grabbing one tile a single tile ahead made every shape 15-35% slower on the H200.
template <int kChunk>
struct DynamicTiles {
  int* counter;
  int lo, n, first_dynamic;  // the unit's tiles are lo .. lo + n - 1; lo + first_dynamic + k is handed out
  int cur, left, step;       // the range being handed out: `left` tiles cur, cur + step, ...
  int pending = 0;           // lane 0: the counter value of the grab in flight
  bool grabbed = false, done = false;
  __device__ void maybe_grab() {
    if (grabbed || done || left > kChunk - 1) return;
    pending = gpu::lane_id() == 0 ? atomicAdd(counter, kChunk) : 0;
    grabbed = true;
  }
  __device__ void refill() {  // the range is spent: the grab in flight is the next one
    const int k = first_dynamic + gpu::shfl(pending, 0);
    grabbed = false;
    cur = lo + k;
    step = 1;
    left = k < n ? min(kChunk, n - k) : 0;
    done = left == 0;
    maybe_grab();
  }
  __device__ void start() {
    maybe_grab();
    if (left == 0) refill();
  }
  __device__ int peek() const { return left > 0 ? cur : -1; }
  __device__ int take() {
    const int t = peek();
    if (t < 0) return t;
    cur += step;
    --left;
    maybe_grab();
    if (left == 0 && !done) refill();
    return t;
  }
};

// STAGE issue, for one warp's own stages: its source's next tile into stage b; returns the
// tile (-1: none left). next_page holds the page id of src.peek(): with kPrefetchPageIndex each
// issue fetches the next one, a tile ahead.
template <class Policy, DType kKv, int kHeadDim, class Source>
__device__ __forceinline__ int issue_next(Source& src, CopyPipe<Policy, kKv, kHeadDim>& pipe, const Params& a, int seq,
                                          int kvh, int first_key, int seq_len, int& next_page, int b) {
  if constexpr (Policy::kStageHints) gpu::set_priority<1>();
  const int tile = src.take();
  int page = 0;
  if (tile >= 0) {
    page = Policy::kPrefetchPageIndex ? next_page : page_of<Policy>(a, seq, tile);
    if (Policy::kPrefetchPageIndex && src.peek() >= 0) next_page = page_of<Policy>(a, seq, src.peek());
  }
  int copied = tile;  // a stale-tile fault copies an earlier tile in its place
  if (fault_hits<Policy, DecodeFault::stale_tile>(tile, first_key, seq_len) && tile >= 2) {
    copied = tile - 2;
    page = page_of<Policy>(a, seq, copied);
  }
  pipe.issue(b, a, kvh, copied, page, seq_len);
  if constexpr (Policy::kStageHints) gpu::sched_barrier<gpu::Sched::NONE>();
  return tile;
}

// A warp's own tiles of the row-tile body: its source and copy pipe, and the page id ahead.
template <class Policy, DType kKv, int kHeadDim>
struct TileFeed {
  StaticTiles& src;
  CopyPipe<Policy, kKv, kHeadDim>& pipe;
  const Params& a;
  int seq, kvh, first_key, seq_len;
  int next_page;  // the page id of src.peek(), peeled before the first issue
  __device__ int issue(int b) {
    return issue_next<Policy, kKv, kHeadDim>(src, pipe, a, seq, kvh, first_key, seq_len, next_page, b);
  }
};

// STAGE qk_softmax, then STAGE pv, on one landed tile for the warp's 16 query rows.
template <class Policy, DType kKv, int kHeadDim>
__device__ __forceinline__ void compute_tile(Softmax<kHeadDim>& st, const std::uint32_t (&qa)[kHeadDim / 16][4],
                                             const unsigned char* k_tile, const unsigned char* v_tile, int tile,
                                             int first_key, int seq_len, float scale_log2) {
  using T = TileOf<Policy, kKv, kHeadDim>;
  float s[2][4];
  std::uint32_t pa[4];
  // STAGE qk_softmax (priority 0 under stage hints)
  if constexpr (Policy::kStageHints) gpu::set_priority<0>();
  if constexpr (T::kFp8) qk_scores_fp8<Policy, kHeadDim>(s, qa, k_tile);
  else qk_scores<Policy, kKv, kHeadDim>(s, qa, k_tile);
  online_softmax<Policy, kKv, kHeadDim>(s, st, pa, scale_log2, tile, first_key, seq_len);
  if constexpr (Policy::kStageHints) {
    gpu::sched_barrier<gpu::Sched::NONE>();
    gpu::set_priority<1>();
  }
  // STAGE pv (priority 1 under stage hints)
  if constexpr (T::kFp8) pv_accumulate_fp8<Policy, kHeadDim>(st, pa, v_tile);
  else pv_accumulate<Policy, kKv, kHeadDim>(st, pa, v_tile);
  if constexpr (Policy::kStageHints) gpu::sched_barrier<gpu::Sched::NONE>();
}

// The warp's pipeline over the tiles of its source: kStages tiles in flight in its own
// shared-memory stages, each computed (qk, softmax, pv) once its copies have landed. (The
// compute stages are written out here rather than through compute_tile, which the row-tile
// body uses: with that call nvcc scheduled the fp8 head dim 64 shared-tail kernels
// differently, and this body's machine code is kept as it was.)
template <class Policy, DType kKv, int kHeadDim, class Source>
__device__ __forceinline__ void stream_tiles(Source& src, CopyPipe<Policy, kKv, kHeadDim>& pipe, Softmax<kHeadDim>& st,
                                             const std::uint32_t (&qa)[kHeadDim / 16][4], const Params& a, int seq,
                                             int kvh, int first_key, int seq_len, float scale_log2,
                                             gpu::WaitProbe& probe) {
  using T = TileOf<Policy, kKv, kHeadDim>;
  constexpr int kStagesHere = kStages<Policy, kKv>;
  // The first page id is peeled; with kPrefetchPageIndex each issue then fetches the next one.
  int next_page = src.peek() >= 0 ? page_of<Policy>(a, seq, src.peek()) : 0;
  auto issue = [&](int b) {
    return issue_next<Policy, kKv, kHeadDim>(src, pipe, a, seq, kvh, first_key, seq_len, next_page, b);
  };
  int in_flight[kStagesHere];  // tile of each stage, oldest first (-1: none)
#pragma unroll
  for (int i = 0; i < kStagesHere; ++i) in_flight[i] = issue(i);

  for (int i = 0; in_flight[0] >= 0; ++i) {
    const int b = i % kStagesHere;
    probe.before();
    pipe.wait(b, min(kDecodeTileTokens, seq_len - in_flight[0] * kDecodeTileTokens));
    probe.after(gpu::WaitPoint::AsyncCopy);
    float s[2][4];
    std::uint32_t pa[4];
    // STAGE qk_softmax (priority 0 under stage hints)
    if constexpr (Policy::kStageHints) gpu::set_priority<0>();
    if constexpr (T::kFp8) qk_scores_fp8<Policy, kHeadDim>(s, qa, pipe.k(b));
    else qk_scores<Policy, kKv, kHeadDim>(s, qa, pipe.k(b));
    online_softmax<Policy, kKv, kHeadDim>(s, st, pa, scale_log2, in_flight[0], first_key, seq_len);
    if constexpr (Policy::kStageHints) {
      gpu::sched_barrier<gpu::Sched::NONE>();
      gpu::set_priority<1>();
    }
    // STAGE pv (priority 1 under stage hints)
    if constexpr (T::kFp8) pv_accumulate_fp8<Policy, kHeadDim>(st, pa, pipe.v(b));
    else pv_accumulate<Policy, kKv, kHeadDim>(st, pa, pipe.v(b));
    if constexpr (Policy::kStageHints) gpu::sched_barrier<gpu::Sched::NONE>();
    gpu::warp_sync();  // every lane is done reading this stage before it is refilled
#pragma unroll
    for (int j = 0; j + 1 < kStagesHere; ++j) in_flight[j] = in_flight[j + 1];
    // STAGE issue (priority 1 under stage hints)
    in_flight[kStagesHere - 1] = issue(b);
  }
  pipe.drain();
}

// The row-tile body's pipeline. Warp w holds query rows 16 (w % kRowTiles) .. + 15 and computes
// every tile of the CTA's range for them; the warps of one column (w / kRowTiles) take the
// range's tiles in steps of kColumns. The copies are the split grid's: warp w copies tiles
// lo + w, lo + w + kWarps, ... into its own stages (`feed`), so the CTA keeps the same bytes in
// flight, each tile is read from memory once, and range tile t sits in warp t % kWarps's stage
// (t / kWarps) % kStages. One CTA barrier a step: past it, the step's tiles have landed (their
// owners waited before it) and every warp is done with the previous step's tiles, whose stages
// their owners then refill. A warp owns a tile every kRowTiles >= 2 steps, so its refill is
// committed before its next wait, which therefore allows kStages - 1 groups in flight as the
// split grid's does.
template <class Policy, DType kKv, int kHeadDim>
__device__ __forceinline__ void stream_shared_tiles(TileFeed<Policy, kKv, kHeadDim>& feed,
                                                    const unsigned char* smem, Softmax<kHeadDim>& st,
                                                    const std::uint32_t (&qa)[kHeadDim / 16][4], int lo, int n,
                                                    bool has_rows, float scale_log2, gpu::WaitProbe& probe) {
  using Pipe = CopyPipe<Policy, kKv, kHeadDim>;
  using T = TileOf<Policy, kKv, kHeadDim>;
  constexpr int kWarps = kWarpsOf<Policy, kKv>, kRowTiles = Policy::kMaxRowTiles, kColumns = kWarps / kRowTiles;
  constexpr int kStagesHere = kStages<Policy, kKv>;
  static_assert(kRowTiles >= 2 && kWarps % kRowTiles == 0, "row tiles split a CTA's warps evenly, two or more a column");
  const int column = gpu::warp_id() / kRowTiles;
  int in_flight[kStagesHere];  // this warp's own tiles, oldest first (-1: none)
#pragma unroll
  for (int i = 0; i < kStagesHere; ++i) in_flight[i] = feed.issue(i);
  int owned = 0, refill = -1;  // own tiles consumed; the stage the last step emptied (-1: none)
  for (int t0 = 0; t0 < n; t0 += kColumns) {
    const bool mine = in_flight[0] >= 0 && in_flight[0] - lo < t0 + kColumns;
    if (mine) {
      probe.before();
      feed.pipe.wait(owned % kStagesHere, min(kDecodeTileTokens, feed.seq_len - in_flight[0] * kDecodeTileTokens));
      probe.after(gpu::WaitPoint::AsyncCopy);
    }
    probe.before();
    gpu::block_sync_shared();  // the step's tiles are visible; the last step's stages are free
    probe.after(gpu::WaitPoint::BlockBarrier);
    // STAGE issue (priority 1 under stage hints)
    if (refill >= 0) in_flight[kStagesHere - 1] = feed.issue(refill);
    refill = -1;
    if (mine) {
      refill = owned++ % kStagesHere;
#pragma unroll
      for (int j = 0; j + 1 < kStagesHere; ++j) in_flight[j] = in_flight[j + 1];
      in_flight[kStagesHere - 1] = -1;  // refilled after the next barrier
    }
    const int t = t0 + column;
    if (t < n && has_rows) {
      const unsigned char* k_tile = Pipe::k_of(smem, t % kWarps, (t / kWarps) % kStagesHere);
      compute_tile<Policy, kKv, kHeadDim>(st, qa, k_tile, k_tile + T::kStageBytes, lo + t, feed.first_key,
                                          feed.seq_len, scale_log2);
    }
  }
  feed.pipe.drain();
}

// What a CTA works on: one (sequence, KV head, chunk of at most unit_rows query heads): 16, or
// 16 x row_tiles in the row-tile body.
struct WorkUnit {
  int seq, kvh, head0, rows, seq_len, first_key, tile_lo, tile_hi;
  __device__ WorkUnit(const Params& a, int seq_, int kvh_, int chunk, int unit_rows = kDecodeMaxGroup)
      : seq(seq_), kvh(kvh_) {
    const int group = a.q_heads / a.kv_heads;
    head0 = kvh * group + chunk * unit_rows;
    rows = min(unit_rows, group - chunk * unit_rows);
    seq_len = a.context_lens[seq];
    first_key = a.window > 0 ? max(0, seq_len - a.window) : 0;
    tile_lo = first_key / kDecodeTileTokens;
    tile_hi = (seq_len + kDecodeTileTokens - 1) / kDecodeTileTokens;
  }
  // Units are numbered (sequence, KV head, chunk), chunk fastest.
  __device__ static WorkUnit of(const Params& a, int unit) {
    const int chunks = (a.q_heads / a.kv_heads + kDecodeMaxGroup - 1) / kDecodeMaxGroup;
    return WorkUnit(a, unit / (a.kv_heads * chunks), (unit / chunks) % a.kv_heads, unit % chunks);
  }
};

// The (split, KV head x chunk, sequence) grid: CTA `split` covers tiles_per_split tiles of its
// unit, its warps interleaved over them; the warps then merge in shared memory. With a shared
// tail (a.schedule set) the unit's first kStaticPercent tiles are interleaved over all its
// splits' warps and the rest come from the unit's counter, kChunk at a time.
//
// A token-balanced plan (a.work set) gives each CTA its unit, tile range and partial index from
// the work list instead: grid (chunks), one entry per CTA.
struct CtaWork {
  int seq, y, split, first_tile, tiles;  // y: KV head x chunk; first_tile < 0: the split's share
  // The tiles [lo, hi) of unit u this CTA covers.
  __device__ int2 range(const Params& a, const WorkUnit& u) const {
    const int lo = first_tile >= 0 ? first_tile : u.tile_lo + split * a.tiles_per_split;
    return {lo, first_tile >= 0 ? lo + tiles : min(u.tile_hi, lo + a.tiles_per_split)};
  }
};
// Warp w of `warps` takes tiles lo + w, lo + w + warps, ... of [lo, hi).
__device__ __forceinline__ StaticTiles interleaved_tiles(int2 range, int w, int warps) {
  const int n = range.y - range.x - w;
  return StaticTiles{range.x + w, warps, n > 0 ? (n + warps - 1) / warps : 0};
}
template <class Policy>
__device__ __forceinline__ CtaWork cta_work(const Params& a, int units_per_seq) {
  if constexpr (Policy::kTileSchedule == TileSchedule::token_balanced) {
    if (a.work) {
      const int4 c = reinterpret_cast<const int4*>(a.work)[blockIdx.x];
      return {c.x / units_per_seq, c.x % units_per_seq, c.w, c.y, c.z};
    }
  }
  return {int(blockIdx.z), int(blockIdx.y), int(blockIdx.x), -1, 0};
}

// The end of a unit's CTA, every body alike: the dependent combine may be scheduled, the warps
// merge their rows in shared memory (combine_warps) and write the output, whole when the unit
// is one chunk, else a partial, which a token-balanced plan that merges in the kernel merges in
// the unit's last chunk to finish.
template <class Policy, DType kKv, int kHeadDim, int kRowTiles = 1, class Columns = Tile<kKv, kHeadDim>,
          class Sync = CtaSync<0>>
__device__ __forceinline__ void finish_unit(Softmax<kHeadDim>& st, unsigned char* smem, const Params& a, const CtaWork& cw,
                                            const WorkUnit& u, int chunks, gpu::WaitProbe& probe, int* word = nullptr) {
  gpu::allow_dependent_launch();  // the split combine may be scheduled once every CTA is here
  probe.before();
  Sync::sync();  // the K/V stages become the warps' combine space
  probe.after(gpu::WaitPoint::BlockBarrier);
  const int unit = cw.seq * a.kv_heads * chunks + cw.y;
  const int parts = unit_parts<Policy>(a, unit);
  combine_warps<Policy, kKv, kHeadDim, kRowTiles, Columns, Sync>(st, reinterpret_cast<float*>(smem), a, u.seq, u.kvh,
                                                                 cw.split, u.head0, u.rows, parts == 1);
  if constexpr (Policy::kTileSchedule == TileSchedule::token_balanced)
    if (a.unit_partials && a.schedule && parts > 1)
      merge_unit_if_last<Policy, kKv, kHeadDim, Sync>(a, unit, u.seq, u.head0, u.rows, parts, word);
}

template <class Policy, DType kKv, int kHeadDim>
__device__ void decode_split(const Params& a, unsigned char* smem, gpu::WaitProbe& probe) {
  const int chunks = (a.q_heads / a.kv_heads + kDecodeMaxGroup - 1) / kDecodeMaxGroup;
  const CtaWork cw = cta_work<Policy>(a, a.kv_heads * chunks);
  const int split = cw.split, w = gpu::warp_id();
  const WorkUnit u(a, cw.seq, cw.y / chunks, cw.y % chunks);
  std::uint32_t qa[kHeadDim / 16][4];
  load_q<kKv, kHeadDim>(qa, a, u.seq, u.head0, u.rows);
  const float scale_log2 = a.scale_log2 * (a.k_scale ? a.k_scale[u.kvh] : 1.f);
  Softmax<kHeadDim> st;
  CopyPipe<Policy, kKv, kHeadDim> pipe(smem, w);
  auto run = [&](auto& src) {
    stream_tiles<Policy, kKv, kHeadDim>(src, pipe, st, qa, a, u.seq, u.kvh, u.first_key, u.seq_len, scale_log2, probe);
  };
  bool shared = false;  // a shared tail (a token-balanced plan's counters are its arrivals)
  if constexpr (Policy::kTileSchedule != TileSchedule::split) shared = a.schedule != nullptr && a.work == nullptr;
  if (shared) {
    const int n = u.tile_hi - u.tile_lo, warps = a.num_splits * kWarpsOf<Policy, kKv>;
    const int share = n * Policy::kStaticPercent / 100 / warps;
    DynamicTiles<2 * kStages<Policy, kKv>> src{a.schedule + blockIdx.z * gridDim.y + blockIdx.y, u.tile_lo, n,
                                                share * warps, u.tile_lo + split * kWarpsOf<Policy, kKv> + w, share, warps};
    src.start();
    run(src);
  } else {
    StaticTiles src = interleaved_tiles(cw.range(a, u), w, kWarpsOf<Policy, kKv>);
    run(src);
  }
  finish_unit<Policy, kKv, kHeadDim>(st, smem, a, cw, u, chunks, probe);
}

// A group above 16 in one CTA (Policy::kMaxRowTiles): the split grid's or the work list's CTAs
// over units of 16 x row_tiles query heads; warp w holds row tile w % kMaxRowTiles (no rows: it
// only copies) and computes every tile of the range for it (stream_shared_tiles); the warps
// holding the same rows then merge in shared memory.
template <class Policy, DType kKv, int kHeadDim>
__device__ void decode_row_tiles(const Params& a, unsigned char* smem, gpu::WaitProbe& probe) {
  const int unit_rows = kDecodeMaxGroup * a.row_tiles;
  const int chunks = (a.q_heads / a.kv_heads + unit_rows - 1) / unit_rows;
  const CtaWork cw = cta_work<Policy>(a, a.kv_heads * chunks);
  const int w = gpu::warp_id(), row0 = kDecodeMaxGroup * (w % Policy::kMaxRowTiles);
  const WorkUnit u(a, cw.seq, cw.y / chunks, cw.y % chunks, unit_rows);
  const int rows = max(0, min(kDecodeMaxGroup, u.rows - row0));  // this warp's query rows
  std::uint32_t qa[kHeadDim / 16][4];
  load_q<kKv, kHeadDim>(qa, a, u.seq, u.head0 + row0, rows);
  const float scale_log2 = a.scale_log2 * (a.k_scale ? a.k_scale[u.kvh] : 1.f);
  Softmax<kHeadDim> st;
  CopyPipe<Policy, kKv, kHeadDim> pipe(smem, w);
  const int2 range = cw.range(a, u);
  StaticTiles own = interleaved_tiles(range, w, kWarpsOf<Policy, kKv>);
  TileFeed<Policy, kKv, kHeadDim> feed{own, pipe, a, u.seq, u.kvh, u.first_key, u.seq_len,
                                       own.peek() >= 0 ? page_of<Policy>(a, u.seq, own.peek()) : 0};
  stream_shared_tiles<Policy, kKv, kHeadDim>(feed, smem, st, qa, range.x, range.y - range.x, rows > 0, scale_log2, probe);
  finish_unit<Policy, kKv, kHeadDim, Policy::kMaxRowTiles>(st, smem, a, cw, u, chunks, probe);
}

#if SCHEDLAB_GPU_HAS_WGMMA
// The warpgroup row-tile body (RowTileMma::warpgroup, sm_90a): units as decode_row_tiles, but
// the CTA's four warps compute as one warpgroup. Each step is kWarps
// 16-token tiles of the CTA's range, warp w copying the step's tile w into rows 16 w .. of the
// step's stage; past one CTA barrier (every warp's copy landed, the previous step's products
// done) S = Q K^T is one m64n64 wgmma per k16 step (Q and K from shared memory), the online
// softmax takes the step's 64 keys in the warp body's fragment layout (warp w holds rows
// 16 w ..), and O += P V takes P from registers and V from shared memory. Tokens past the
// range's end are zero-filled and masked, so a range need not be a multiple of a step.
// Q, the A operand, is read from shared memory (holding it in registers was measured too,
// experiments/decode_row_tile_body).
template <class G, class Op, int kHeadDim, int kTiles>
__device__ __forceinline__ void group_qk(float (&s)[kTiles][4], const unsigned char* q, const unsigned char* k) {
  auto& d = reinterpret_cast<float (&)[kTiles * 4]>(s);
  const std::uint64_t k0 = gpu::wgmma::descriptor(k, 16, 1024), q0 = gpu::wgmma::descriptor(q, 16, 1024);
  gpu::wgmma::fence();
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {  // a k16 step: 32 bytes of a 128-byte box row
    const int box = kk / 4, in_row = (kk % 4) * 32;
    const std::uint64_t b = gpu::wgmma::advance(k0, box * G::KV::kBoxBytes + in_row);
    gpu::wgmma::mma_ss<kTiles * 8, Op>(d, gpu::wgmma::advance(q0, box * G::Q::kBoxBytes + in_row), b, kk > 0);
  }
  gpu::wgmma::commit();
}
// Raw keys (GroupSmem::kRawKeys): S = (hi + lo) K^T, two e4m3 products per k32 step (32 bytes
// of the 128-byte rows of Q's parts and of the raw K slot); the softmax divides by the row's s.
template <class G, int kTiles, bool kHighOnly = false>
__device__ __forceinline__ void group_qk_raw_keys(float (&s)[kTiles][4], const unsigned char* q8, const unsigned char* k) {
  auto& d = reinterpret_cast<float (&)[kTiles * 4]>(s);
  const std::uint64_t k0 = gpu::wgmma::descriptor(k, 16, 1024), q0 = gpu::wgmma::descriptor(q8, 16, 1024);
  gpu::wgmma::fence();
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
#pragma unroll
    for (int part = 0; part < (kHighOnly ? 1 : 2); ++part)
      gpu::wgmma::mma_ss<kTiles * 8, gpu::wgmma::E4m3>(d, gpu::wgmma::advance(q0, part * G::kQPartBytes + kk * 32),
                                                       gpu::wgmma::advance(k0, kk * 32), kk + part > 0);
  gpu::wgmma::commit();
}
// Raw keys: one thread's chunk of a query row (8 bf16 values, chunk `chunk` of 16; the 16 lanes
// of a half-warp hold the row) as e4m3 high and low parts of the row scaled by a power of two s
// that takes its largest magnitude to [128, 256): x s - hi has at most four significant bits,
// so x s = hi + lo exactly wherever x s >= 2^-2 (e4m3's subnormals reach 2^-9), and smaller
// values are within 2^-10 of the row's largest. Written where the 128-byte e4m3 rows of the
// two BoxTiles put them; the row's 1 / s to row_scales.
template <class G>
__device__ __forceinline__ void store_q_split(unsigned char* q8, float* row_scales, const uint4& x, int row, int chunk) {
  const std::uint32_t w[4] = {x.x, x.y, x.z, x.w};
  float f[8], amax = 0.f;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
    amax = fmaxf(amax, fmaxf(fabsf(f[2 * i]), fabsf(f[2 * i + 1])));
  }
#pragma unroll
  for (int m = 1; m < 16; m *= 2) amax = fmaxf(amax, gpu::shfl_xor(amax, m));
  const int e = int((__float_as_uint(amax) >> 23) & 0xff) - 127;  // floor(log2 amax); -127 for 0
  const int se = min(max(7 - e, -126), 126);  // 1 / s stays a normal float (an all-zero row: 2^-126)
  const float scale = __uint_as_float(std::uint32_t(se + 127) << 23), inv = __uint_as_float(std::uint32_t(127 - se) << 23);
  std::uint32_t hi[2], lo[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float y[4], r[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) y[i] = f[4 * h + i] * scale;
    hi[h] = gpu::mma::pack4_e4m3(y[0], y[1], y[2], y[3]);
#pragma unroll
    for (int i = 0; i < 2; ++i) {  // hi back to floats (exact), the residual to e4m3
      const std::uint32_t b = gpu::mma::fp8x2_half_to_f16x2(hi[h], i);
      r[2 * i] = y[2 * i] - __half2float(__ushort_as_half(static_cast<unsigned short>(b & 0xffffu)));
      r[2 * i + 1] = y[2 * i + 1] - __half2float(__ushort_as_half(static_cast<unsigned short>(b >> 16)));
    }
    lo[h] = gpu::mma::pack4_e4m3(r[0], r[1], r[2], r[3]);
  }
  const int at = G::Q8::offset(row, chunk / 2) + (chunk % 2) * 8;
  *reinterpret_cast<uint2*>(q8 + at) = uint2{hi[0], hi[1]};
  *reinterpret_cast<uint2*>(q8 + G::kQPartBytes + at) = uint2{lo[0], lo[1]};
  if (chunk == 0) row_scales[row] = inv;
}
template <class G, class Op, int kHeadDim, int kTiles>
__device__ __forceinline__ void group_pv(Softmax<kHeadDim>& st, const std::uint32_t (&pa)[kTiles / 2][4],
                                         const unsigned char* v) {
  auto& o = reinterpret_cast<float (&)[kHeadDim / 2]>(st.o);
  gpu::wgmma::fence_operands(o);
  gpu::wgmma::fence();
  const std::uint64_t v0 = gpu::wgmma::descriptor(v, G::KV::kBoxBytes, 1024);
#pragma unroll
  for (int kk = 0; kk < kTiles / 2; ++kk)  // 16 keys; V is the transposed (MN-major) operand
    gpu::wgmma::mma_rs<kHeadDim, Op>(o, pa[kk], gpu::wgmma::advance(v0, kk * 16 * 128), true);
  gpu::wgmma::commit();
}

// fp8 KV in the warpgroup body: a warp's landed raw K and V tiles (16 tokens each,
// Tile::raw_offset) to f16 rows row0 .. row0 + 15 of the step's 16-bit K and V operands
// (V KV::kBytes after K), exactly (every e4m3 value is an f16); the scales stay where the warp
// body applies them (k_scale in the softmax scale, v_scale at the end). Every load is issued
// before the first conversion, so the warp waits on one shared-memory round trip, not eight.
// Lane l takes chunk c of row l % 16: the 8 lanes of a 16-byte access phase are 8 rows of one
// chunk, which both swizzles (the raw rows' and the BoxTile's) put in 8 bank groups; 8 chunks
// of one row would land the two BoxTile boxes' even chunks on the same 4 groups. Fp8Rows holds
// the two raw tiles between load() and store() (kParts: K, bit 0, and / or V, bit 1): with raw
// keys the producers convert V alone.
template <int kHeadDim>
struct Fp8Rows {
  using T = Tile<DType::fp8_e4m3, kHeadDim>;
  static_assert(kDecodeTileTokens * T::kRawChunksPerRow % kWarpSize == 0, "whole chunks per lane");
  static constexpr int kIters = kDecodeTileTokens * T::kRawChunksPerRow / kWarpSize;
  uint4 v[2][kIters];  // [K, V][chunk]
  template <int kParts = 3>
  __device__ __forceinline__ void load(const unsigned char* k_raw, const unsigned char* v_raw) {
#pragma unroll
    for (int kv = 0; kv < 2; ++kv)
#pragma unroll
      for (int it = 0; it < kIters; ++it) {
        if (!(kParts >> kv & 1)) continue;
        const int i = gpu::lane_id() + it * kWarpSize;
        v[kv][it] = *reinterpret_cast<const uint4*>((kv ? v_raw : k_raw) + T::raw_offset(i % kDecodeTileTokens, i / kDecodeTileTokens));
      }
  }
  template <class KV, int kParts = 3>
  __device__ __forceinline__ void store(unsigned char* k_dst, unsigned char* v_dst, int row0) const {
    auto f16x2 = [](std::uint32_t w, int half) { return gpu::mma::fp8x2_half_to_f16x2(w, half); };
#pragma unroll
    for (int kv = 0; kv < 2; ++kv)
#pragma unroll
      for (int it = 0; it < kIters; ++it) {
        if (!(kParts >> kv & 1)) continue;
        const int i = gpu::lane_id() + it * kWarpSize, row = i % kDecodeTileTokens, c = i / kDecodeTileTokens;
        const uint4& x = v[kv][it];
        unsigned char* d = kv ? v_dst : k_dst;
        *reinterpret_cast<uint4*>(d + KV::offset(row0 + row, 2 * c)) = uint4{f16x2(x.x, 0), f16x2(x.x, 1), f16x2(x.y, 0), f16x2(x.y, 1)};
        *reinterpret_cast<uint4*>(d + KV::offset(row0 + row, 2 * c + 1)) = uint4{f16x2(x.z, 0), f16x2(x.z, 1), f16x2(x.w, 0), f16x2(x.w, 1)};
      }
  }
};
template <int kHeadDim, class KV>
__device__ __forceinline__ void convert_fp8_rows(unsigned char* dst, const unsigned char* k_raw, const unsigned char* v_raw,
                                                 int row0) {
  Fp8Rows<kHeadDim> rows;
  rows.load(k_raw, v_raw);
  rows.template store<KV>(dst, dst + KV::kBytes, row0);
}
template <class Policy, DType kKv, int kHeadDim>
__device__ void decode_warpgroup_rows(const Params& a, unsigned char* smem, gpu::WaitProbe& probe) {
  using G = GroupSmem<Policy, kKv, kHeadDim>;
  constexpr int kWarps = G::kWarps, kStagesHere = G::kStages, kTiles = G::kTokens / 8;
  constexpr bool kFp8 = G::kFp8;
  // kProducers (fp8): warps kWarps .. 2 kWarps - 1 copy and convert (warp kWarps + w the tiles
  // warp w would), warps 0 .. kWarps - 1 compute.
  constexpr bool kProducers = G::kProducers;
  const int unit_rows = kDecodeMaxGroup * a.row_tiles;
  const int chunks = (a.q_heads / a.kv_heads + unit_rows - 1) / unit_rows;
  const CtaWork cw = cta_work<Policy>(a, a.kv_heads * chunks);
  const int w = gpu::warp_id() % kWarps;
  const bool producer = kProducers && gpu::warp_id() >= kWarps;
  const WorkUnit u(a, cw.seq, cw.y / chunks, cw.y % chunks, unit_rows);
  const float scale_log2 = a.scale_log2 * (a.k_scale ? a.k_scale[u.kvh] : 1.f);
  const int2 range = cw.range(a, u);
  const int steps = (range.y - range.x + kWarps - 1) / kWarps;
  const int key_end = min(u.seq_len, range.y * kDecodeTileTokens);
  auto k_stage = [&](int b) { return smem + G::k_offset(b); };  // 16-bit: stage b
  unsigned char* converted = smem + G::kConverted;                   // fp8: the step as f16 operands
  // Warp w's tile of step j is range tile j kWarps + w; its page id is fetched a step ahead.
  // Page sizes are powers of two here (the lean step's shift and mask).
  auto own = [&](int j) { return range.x + j * kWarps + w; };
  auto page_at = [&](int j) { return own(j) < range.y ? page_of<Policy, true>(a, u.seq, own(j)) : 0; };
  // One commit group per step, empty past the last: 16-bit K and V into stage j, fp8 into their
  // ring slots (a step's K and V land and free together).
  // The tile a copy of `tile` reads (and `page` its page): a stale-tile fault copies the tile
  // two before in its place.
  auto source = [&](int tile, int& page) {
    if (tile < range.y && fault_hits<Policy, DecodeFault::stale_tile>(tile, u.first_key, u.seq_len) && tile >= 2) {
      page = page_of<Policy, true>(a, u.seq, tile - 2);
      return tile - 2;
    }
    return tile;
  };
  auto issue = [&](int j, int page) {
    if (j < steps) {
      const int tile = own(j), valid_to = tile < range.y ? u.seq_len : 0;  // 0: zero-fill the whole tile
      const int copied = source(tile, page);
      unsigned char* k = kFp8 ? smem + G::raw_offset(j, 0, w) : k_stage(j % kStagesHere);
      unsigned char* v = kFp8 ? smem + G::raw_offset(j, 1, w) : k + G::kVOffset;
      issue_tile<Policy, kKv, kHeadDim, typename G::KV, true>(a, k, v, u.kvh, copied, page, valid_to,
                                                               w * kDecodeTileTokens);
    }
    gpu::async_commit();
  };
  // The first steps' page ids are fetched together and their copies issued before Q is loaded,
  // so a short range does not wait for block-table and Q round trips one after another before
  // its first copy; later page ids are fetched a step ahead of their copies.
  // fp8 refills a step's raw slots once its tiles are converted (raw keys: once its S and P V
  // are done, two steps later); a 16-bit stage is refilled once the step before it is read.
  constexpr int kIssuedAhead = G::kRawKeys ? G::kRawSlots / 2 - 2
                               : kFp8      ? (G::kRawSlots + 1) / 2
                                           : kStagesHere - 1;  // steps with a copy issued
  int next_page = 0;
  if (!kProducers || producer) {
    int pages[kIssuedAhead];
#pragma unroll
    for (int j = 0; j < kIssuedAhead; ++j) pages[j] = page_at(j);
#pragma unroll
    for (int j = 0; j < kIssuedAhead; ++j) issue(j, pages[j]);
    next_page = page_at(kIssuedAhead);
  }
  // Q's 64 rows (past the unit's rows: zeros) in shared memory as the operand type (fp8 KV:
  // bf16 queries to f16, as the warp body does), made visible to wgmma below.
  unsigned char* q_smem = smem + G::kQ;
  if (!producer) {
    // Every load issued before the first store: one round trip for the CTA's Q, not one per chunk.
    constexpr int kChunks = kHeadDim * 2 / 16, kThreads = kWarps * kWarpSize;
    constexpr int kPerThread = kWarps * kDecodeMaxGroup * kChunks / kThreads;
    const auto* q = static_cast<const unsigned char*>(a.q);
    uint4 v[kPerThread];
#pragma unroll
    for (int c = 0; c < kPerThread; ++c) {
      const int i = threadIdx.x + c * kThreads, row = i / kChunks, chunk = i % kChunks;
      v[c] = row < u.rows ? *reinterpret_cast<const uint4*>(q + ((std::size_t(u.seq) * a.q_heads + u.head0 + row) * kHeadDim) * 2 + chunk * 16)
                          : uint4{0, 0, 0, 0};
    }
#pragma unroll
    for (int c = 0; c < kPerThread; ++c) {
      const int i = threadIdx.x + c * kThreads;
      if constexpr (G::kRawKeys) {
        store_q_split<G>(q_smem, reinterpret_cast<float*>(smem + G::kRowScales), v[c], i / kChunks, i % kChunks);
        continue;
      }
      if constexpr (kFp8) {
        auto f16 = [](std::uint32_t x) {  // bf16 pair to f16 pair
          return gpu::mma::pack2<gpu::mma::F16>(__uint_as_float(x << 16), __uint_as_float(x & 0xffff0000u));
        };
        v[c] = uint4{f16(v[c].x), f16(v[c].y), f16(v[c].z), f16(v[c].w)};
      }
      *reinterpret_cast<uint4*>(q_smem + G::Q::offset(i / kChunks, i % kChunks)) = v[c];
    }
  }
  Softmax<kHeadDim> st;
  float s[kTiles][4];
  std::uint32_t pa[kTiles / 2][4];
  // Raw keys: S is in units of each row's 1 / s, taken into the row's softmax scale once Q is in.
  std::conditional_t<G::kRawKeys, RowScales, float> sm_scale{};
  if constexpr (!G::kRawKeys) sm_scale = scale_log2;
  // The softmax of step j (S landed) into P.
  auto softmax = [&](int j) {
    const int key0 = (range.x + j * kWarps) * kDecodeTileTokens;  // the step's first key
    // A lean step masks only where a key can be hidden: the range's ends, or a dropped-tile fault.
    const bool whole = Policy::kFault != DecodeFault::drop_tile && key0 >= u.first_key && key0 + G::kTokens <= key_end;
    if (whole)
      softmax_keys<Policy, kKv, kHeadDim, kTiles, false, true>(s, st, pa, sm_scale, key0, u.first_key, key_end, u.seq_len);
    else
      softmax_keys<Policy, kKv, kHeadDim, kTiles, true, true>(s, st, pa, sm_scale, key0, u.first_key, key_end, u.seq_len);
  };
  auto products = [&](int j, const unsigned char* v) {  // S of step j issued: softmax, O += P V
    gpu::wgmma::wait<0>();
    gpu::wgmma::fence_operands(reinterpret_cast<float (&)[kTiles * 4]>(s));
    softmax(j);
    group_pv<G, Operand<kKv>, kHeadDim, kTiles>(st, pa, v);
    gpu::wgmma::wait<0>();
    gpu::wgmma::fence_operands(reinterpret_cast<float (&)[kHeadDim / 2]>(st.o));
  };
  if constexpr (kFp8) {
    // Step c's converted K and V (16-bit BoxTiles, V at kVOffset = KV::kBytes; V alone with raw keys).
    auto converted_step = [&](int c) { return converted + (c % G::kConvertedSteps) * G::kConvertedStepBytes; };
    auto converted_v = [&](int c) { return converted_step(c) + (G::kRawKeys ? 0 : G::KV::kBytes); };
    // This warp's raw tiles of step c to f16 rows of converted step c once they landed; their
    // two raw slots are then refilled with step c + kRawSlots / 2's copies (its lanes read each
    // other's bytes: warp barriers on both sides), and the writes fenced for wgmma (the async
    // proxy). Before step c, kRawSlots / 2 groups were issued: those after c's may be in flight.
    constexpr int kChunks = TileOf<Policy, kKv, kHeadDim>::kRawChunksPerLane;
    auto convert = [&](int c) {
      probe.before();
      gpu::async_wait<G::kRawSlots / 2 - 1, 2 * kChunks>();
      gpu::warp_sync();
      probe.after(gpu::WaitPoint::AsyncCopy);
      convert_fp8_rows<kHeadDim, typename G::KV>(converted_step(c), smem + G::raw_offset(c, 0, w),
                                                 smem + G::raw_offset(c, 1, w), w * kDecodeTileTokens);
      gpu::warp_sync();
      issue(c + G::kRawSlots / 2, next_page);
      next_page = page_at(c + G::kRawSlots / 2 + 1);
      gpu::fence_proxy_async_smem();
    };
    // The converted steps are a ring between the two warpgroups on named barriers 1-4 (full:
    // the producers wrote and fenced the step; empty: the computing warps' products of it are
    // done); barrier 5 is Q's, among the computing warps.
    using Ring = attention::NamedBarrierPipeline<G::kConvertedSteps, 1, 2 * kWarps * kWarpSize>;
    constexpr int kQReady = Ring::kEmpty + G::kConvertedSteps;
    if (producer && G::kRawKeys) {
      // Step c: its copies landed; once step c - 2 is read (its raw K by S, its converted V by
      // P V) its slots take step c + 2's copies; V converted; K's landed bytes and V's stores
      // fenced for wgmma and handed over together.
      gpu::regs_decrease<Policy::kRowTileProducerRegs>();
      for (int c = 0; c < steps; ++c) {
        probe.before();
        gpu::async_wait<kIssuedAhead - 1, 2 * kChunks>();
        gpu::warp_sync();  // the lanes convert each other's bytes
        probe.after(gpu::WaitPoint::AsyncCopy);
        probe.before();
        Ring::producer_acquire(c);
        probe.after(gpu::WaitPoint::BlockBarrier);
        issue(c + kIssuedAhead, next_page);
        next_page = page_at(c + kIssuedAhead + 1);
        Fp8Rows<kHeadDim> rows_v;
        rows_v.template load<2>(nullptr, smem + G::raw_offset(c, 1, w));
        rows_v.template store<typename G::KV, 2>(nullptr, converted_v(c), w * kDecodeTileTokens);
        gpu::fence_proxy_async_smem();
        Ring::producer_commit(c);
      }
    } else if (producer) {
      gpu::regs_decrease<Policy::kRowTileProducerRegs>();
      for (int c = 0; c < steps; ++c) {
        probe.before();
        Ring::producer_acquire(c);
        probe.after(gpu::WaitPoint::BlockBarrier);
        convert(c);
        Ring::producer_commit(c);
      }
    } else {
      gpu::regs_increase<Policy::kRowTileConsumerRegs>();
      gpu::fence_proxy_async_smem();  // Q, written by these warps, before wgmma reads it
      gpu::named_barrier_sync(kQReady, kWarps * kWarpSize);
      if constexpr (G::kRawKeys) {  // this lane's rows 16 w + g and + 8 (g = lane / 4)
        const float* inv = reinterpret_cast<const float*>(smem + G::kRowScales) + kDecodeMaxGroup * w + gpu::lane_id() / 4;
        sm_scale = RowScales{{scale_log2 * inv[0], scale_log2 * inv[8]}};
      }
      for (int j = 0; j < steps; ++j) {  // step j converted and landed: S = Q K^T, then its products
        probe.before();
        Ring::consumer_wait(j);
        probe.after(gpu::WaitPoint::BlockBarrier);
        if constexpr (G::kRawKeys)
          group_qk_raw_keys<G, kTiles, Policy::kFault == DecodeFault::q_high_only>(s, q_smem, smem + G::raw_offset(j, 0, 0));
        else
          group_qk<G, Operand<kKv>, kHeadDim, kTiles>(s, q_smem, converted_step(j));
        products(j, converted_v(j));
        Ring::consumer_release(j, steps);
      }
    }
  } else {
    for (int j = 0; j < steps; ++j) {
      const unsigned char* k = k_stage(j % kStagesHere);
      probe.before();
      gpu::async_wait<kStagesHere - 2, 2 * TileOf<Policy, kKv, kHeadDim>::kRawChunksPerLane>();  // own tile of step j
      gpu::fence_proxy_async_smem();  // this thread's shared writes, before wgmma (the async proxy) reads them
      probe.after(gpu::WaitPoint::AsyncCopy);
      probe.before();
      gpu::block_sync_shared();  // step j has landed; every product of step j - 1 is done
      probe.after(gpu::WaitPoint::BlockBarrier);
      group_qk<G, Operand<kKv>, kHeadDim, kTiles>(s, q_smem, k);
      issue(j + kStagesHere - 1, next_page);  // into step j - 1's stage, while S is computed
      next_page = page_at(j + kStagesHere);
      products(j, k + G::kVOffset);
    }
  }
  gpu::async_wait<0>();
  // Producer warps leave here: the computing warps close the unit among themselves.
  if (producer) return;
  using Sync = CtaSync<kProducers ? kWarps * kWarpSize : 0>;
  finish_unit<Policy, kKv, kHeadDim, kWarps, Tile<DType::f16, kHeadDim>, Sync>(
      st, smem, a, cw, u, chunks, probe, reinterpret_cast<int*>(smem + G::kQ));  // Q's bytes are spent
}
#endif  // SCHEDLAB_GPU_HAS_WGMMA

// Dynamic tiles: a warp writes its own normalized partial and log-sum-exp to a slot of the
// split combine, no shared memory involved.
template <DType kKv, int kHeadDim>
__device__ void write_warp_partial(Softmax<kHeadDim>& st, const Params& a, const WorkUnit& u, int slot) {
  if constexpr (kOnWarpTile) {
    write_partial_on_tile<kKv, kHeadDim>(st, a, u.seq, u.kvh, u.head0, u.rows, slot);
  } else {
    const int g = gpu::mma::frag_lane() / 4, t = gpu::mma::frag_lane() % 4;
    const float v_scale = a.v_scale ? a.v_scale[u.kvh] : 1.f;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      st.l[r] += gpu::shfl_xor(st.l[r], 1);
      st.l[r] += gpu::shfl_xor(st.l[r], 2);
      const int row = g + 8 * r;
      if (row >= u.rows) continue;
      const std::size_t at = (std::size_t(u.seq) * a.q_heads + u.head0 + row) * a.num_splits + slot;
      const float inv = st.l[r] > 0.f ? v_scale / st.l[r] : 0.f;
      float* o = a.partial_o + at * kHeadDim;
#pragma unroll
      for (int n = 0; n < kHeadDim / 8; ++n) {
        o[Tile<kKv, kHeadDim>::o_column(n, 2 * t)] = st.o[n][2 * r] * inv;
        o[Tile<kKv, kHeadDim>::o_column(n, 2 * t + 1)] = st.o[n][2 * r + 1] * inv;
      }
      if (t == 0) a.partial_lse[at] = st.l[r] > 0.f ? st.m[r] + log2f(st.l[r]) : -INFINITY;
    }
  }
}

// The schedule's counters (decode_schedule_ints): next tile and joins per unit, the published
// joins per unit for the combine, the warps that have left, and whether every unit is drained.
struct Schedule {
  int* next_tile;
  int* joined;
  int* published;
  int* left;
  int* drained;
  __device__ explicit Schedule(const Params& a)
      : next_tile(a.schedule), joined(a.schedule + a.units), published(a.schedule + 2 * a.units),
        left(a.schedule + 3 * a.units), drained(a.schedule + 3 * a.units + 1) {}
};

// Warps of a persistent grid of `total` that start on a unit (warp gw starts on gw % units).
// They own its first partial slots; warps that join later take the ones after.
__device__ inline int starters_of(const Params& a, int unit, int total) {
  return unit < total ? (total - unit + a.units - 1) / a.units : 0;
}
__device__ inline int joiner_slots(const Params& a, int unit, int total) {
  return a.num_splits - starters_of(a, unit, total);
}
// Tiles of a unit of n split statically among its starters (Policy::kStaticPercent, rounded
// down to a multiple of the starters); the counter hands out the rest.
template <class Policy>
__device__ inline int static_share(const Params& a, int unit, int total, int n) {
  const int starters = starters_of(a, unit, total);
  return starters > 0 ? n * Policy::kStaticPercent / 100 / starters * starters : 0;
}

// The unit a warp moves to when its own has no tiles left: the one with the most tiles not
// yet handed out and a free partial slot (the nearest after `after` among equals), or -1.
// Lanes read kScanBatch units each before using any (one round trip per batch, not per
// unit: a unit-by-unit scan cost the dynamic grid 10-20 us at its end). Nothing is ever
// handed back, so once a scan finds no unit every later one would too: it says so in
// `drained` and later scans stop at that.
inline constexpr int kScanBatch = 4;
template <class Policy>
__device__ inline int next_unit(const Params& a, const Schedule& sch, int after, int total) {
  if (gpu::load_coherent(sch.drained)) return -1;
  const int lane = gpu::lane_id();
  int best = 0, best_at = a.units;  // tiles left, distance after `after`
  for (int base = 0; base < a.units; base += kWarpSize * kScanBatch) {
    // joined: joiner slots still free; tiles: the unit's dynamic ones; taken: those handed out
    int joined[kScanBatch], taken[kScanBatch], tiles[kScanBatch];
#pragma unroll
    for (int b = 0; b < kScanBatch; ++b) {
      const int d = base + b * kWarpSize + lane, unit = (after + 1 + d) % a.units;
      joined[b] = d < a.units ? joiner_slots(a, unit, total) - gpu::load_coherent(sch.joined + unit) : 0;
      taken[b] = d < a.units ? gpu::load_coherent(sch.next_tile + unit) : 0;
      if (d < a.units) {
        const WorkUnit u = WorkUnit::of(a, unit);
        tiles[b] = u.tile_hi - u.tile_lo - static_share<Policy>(a, unit, total, u.tile_hi - u.tile_lo);
      } else {
        tiles[b] = 0;
      }
    }
#pragma unroll
    for (int b = 0; b < kScanBatch; ++b) {
      const int left = joined[b] > 0 ? tiles[b] - taken[b] : 0;
      if (left > best) {
        best = left;
        best_at = base + b * kWarpSize + lane;
      }
    }
  }
  for (int off = kWarpSize / 2; off > 0; off /= 2) {
    const int other = gpu::shfl_xor(best, off), other_at = gpu::shfl_xor(best_at, off);
    if (other > best || (other == best && other_at < best_at)) {
      best = other;
      best_at = other_at;
    }
  }
  if (best > 0) return (after + 1 + best_at) % a.units;
  if (lane == 0) *sch.drained = 1;
  return -1;
}

// Dynamic tiles: warp gw of the persistent grid starts on unit gw % units, then moves on
// (next_unit) until no unit has tiles left. The last warp to leave publishes the join
// counts for the combine and zeroes the counters for the next launch.
template <class Policy, DType kKv, int kHeadDim>
__device__ void decode_dynamic(const Params& a, unsigned char* smem, gpu::WaitProbe& probe) {
  const Schedule sch(a);
  const int w = gpu::warp_id(), gw = blockIdx.x * kWarpsOf<Policy, kKv> + w, total = gridDim.x * kWarpsOf<Policy, kKv>;
  CopyPipe<Policy, kKv, kHeadDim> pipe(smem, w);  // its barriers' phases carry over from unit to unit
  bool first = true;  // a warp's static share is in its first unit only, even if it comes back
  for (int unit = gw % a.units; unit >= 0; unit = next_unit<Policy>(a, sch, unit, total), first = false) {
    const int starters = starters_of(a, unit, total);
    const int slot = first ? gw / a.units
                           : starters + gpu::shfl(gpu::lane_id() == 0 ? atomicAdd(sch.joined + unit, 1) : 0, 0);
    if (slot >= a.num_splits) continue;  // full: the warps on it finish it
    const WorkUnit u = WorkUnit::of(a, unit);
    std::uint32_t qa[kHeadDim / 16][4];
    load_q<kKv, kHeadDim>(qa, a, u.seq, u.head0, u.rows);  // in flight while the first tiles are grabbed
    const float scale_log2 = a.scale_log2 * (a.k_scale ? a.k_scale[u.kvh] : 1.f);
    // The warps that start here (gw = unit + j * units) share its first tiles; joiners have none.
    const int n = u.tile_hi - u.tile_lo, fixed = static_share<Policy>(a, unit, total, n);
    DynamicTiles<2 * kStages<Policy, kKv>> src{sch.next_tile + unit, u.tile_lo, n, fixed,
                                                u.tile_lo + gw / a.units, first ? fixed / max(starters, 1) : 0, starters};
    src.start();
    Softmax<kHeadDim> st;
    stream_tiles<Policy, kKv, kHeadDim>(src, pipe, st, qa, a, u.seq, u.kvh, u.first_key, u.seq_len, scale_log2, probe);
    write_warp_partial<kKv, kHeadDim>(st, a, u, slot);  // a slot taken is always written, if empty
  }
  gpu::allow_dependent_launch();
  gpu::fence_device();  // this warp's joins and partials before its leaving is counted
  const bool last = gpu::shfl(gpu::lane_id() == 0 ? int(atomicAdd(sch.left, 1) == total - 1) : 0, 0);
  if (!last) return;
  gpu::fence_device();
  for (int unit = gpu::lane_id(); unit < a.units; unit += kWarpSize) {
    sch.published[unit] = starters_of(a, unit, total) + min(gpu::load_coherent(sch.joined + unit), joiner_slots(a, unit, total));
    sch.joined[unit] = 0;
    sch.next_tile[unit] = 0;
  }
  if (gpu::lane_id() == 0) {
    *sch.left = 0;
    *sch.drained = 0;
  }
}

// The body a kernel runs: the (split or chunk, KV head x chunk, sequence) grid of 16-row units,
// the persistent grid, or the same grid over units of several row tiles (a group above 16),
// computed by warps or by the CTA as one warpgroup (Policy::kRowTileMma).
enum class DecodeBody { split, dynamic, row_tiles, warpgroup_rows };
// The body of a group above 16 under this policy and KV type.
template <class Policy, DType kKv>
inline constexpr DecodeBody kRowTileBody = kWarpgroupRows<Policy, kKv> ? DecodeBody::warpgroup_rows : DecodeBody::row_tiles;
// Threads of a body's CTA: the warpgroup body's producer warps are a second warpgroup.
template <class Policy, DType kKv, DecodeBody kBody>
inline constexpr int kThreadsOf =
    kWarpsOf<Policy, kKv> * kWarpSize * (kBody == DecodeBody::warpgroup_rows && kFp8Producers<Policy, kKv> ? 2 : 1);
template <class Policy, DType kKv, int kHeadDim, DecodeBody kBody>
inline constexpr int kSmemBytes =
    kBody == DecodeBody::warpgroup_rows ? GroupSmem<Policy, kKv, kHeadDim>::kBytes : Smem<Policy, kKv, kHeadDim>::kBytes;
// The plan counts the same bytes on the host (decode_smem_bytes), on every architecture this
// build holds: the two layouts cannot drift apart.
template <class Policy, DType kKv, int kHeadDim, DecodeBody kBody>
constexpr bool smem_counted_on_host() {
  constexpr bool kGroupBody = kBody == DecodeBody::row_tiles || kBody == DecodeBody::warpgroup_rows;
  for (gpu::GpuArch arch : gpu::kBuildArchs)
    if (decode_smem_bytes<Policy>(kHeadDim, kKv, arch, kGroupBody) != kSmemBytes<Policy, kKv, kHeadDim, kBody>) return false;
  return true;
}

template <class Policy, DType kKv, int kHeadDim, DecodeBody kBody, class Dyn>
__global__ void __launch_bounds__((kThreadsOf<Policy, kKv, kBody>),
                                  (kBody == DecodeBody::row_tiles || kBody == DecodeBody::warpgroup_rows
                                       ? Policy::kMinCtasPerSmRowTiles
                                       : kMinCtas<Policy, kKv>))
    paged_decode_kernel(const SCHEDLAB_GRID_CONSTANT Params a) {
  static_assert(Dyn::kBytes == kSmemBytes<Policy, kKv, kHeadDim, kBody>, "launch and kernel disagree on shared memory");
  static_assert(smem_counted_on_host<Policy, kKv, kHeadDim, kBody>(), "decode_smem_bytes and the storage disagree");
  SCHEDLAB_CTA_TIMELINE_RECORD(a.timeline, 0);
  extern __shared__ __align__(1024) unsigned char smem[];  // 1024: the 128-byte swizzle's period (bulk copies, wgmma)
  gpu::WaitProbe probe;
  if constexpr (kBody == DecodeBody::dynamic) decode_dynamic<Policy, kKv, kHeadDim>(a, smem, probe);
  else if constexpr (kBody == DecodeBody::row_tiles) decode_row_tiles<Policy, kKv, kHeadDim>(a, smem, probe);
#if SCHEDLAB_GPU_HAS_WGMMA
  else if constexpr (kBody == DecodeBody::warpgroup_rows) decode_warpgroup_rows<Policy, kKv, kHeadDim>(a, smem, probe);
#endif
  else decode_split<Policy, kKv, kHeadDim>(a, smem, probe);
  probe.flush(a.probe_slots);
}

// Warps of a split combine CTA.
inline constexpr int kCombineWarps = 8;

// A row of many partials merged by a CTA (the combine row list's CTA rows): warp w takes
// partials w, w + kCombineWarps, ..., kInFlight of them at a time, all loaded before any
// arithmetic, and keeps its own running maximum (rescaling what it summed when the maximum
// grows); the warps' sums are then rescaled to the row's maximum in shared memory. At most
// kCombineWarps x kInFlight partials (128) take one round of loads.
template <DType kQ, int kHeadDim>
__device__ void merge_row_in_cta(const Params& a, std::size_t row, int parts, float (*part)[kHeadDim + 1],
                                 float* warp_max) {
  constexpr int kCols = kHeadDim / kWarpSize, kInFlight = 16;
  const int w = gpu::warp_id(), lane = gpu::lane_id();
  const std::size_t slot0 = row * a.num_splits;
  float m = -INFINITY, wsum = 0.f, o[kCols] = {};
  for (int base = w; base < parts; base += kCombineWarps * kInFlight) {
    float lse[kInFlight], v[kInFlight][kCols];
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) {
      const int sp = base + i * kCombineWarps;
      lse[i] = sp < parts ? a.partial_lse[slot0 + sp] : -INFINITY;
#pragma unroll
      for (int c = 0; c < kCols; ++c) v[i][c] = sp < parts ? a.partial_o[(slot0 + sp) * kHeadDim + lane * kCols + c] : 0.f;
    }
    float mx = m;
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) mx = fmaxf(mx, lse[i]);
    if (mx == -INFINITY) continue;  // no visible key in these partials
    const float keep = gpu::mma::fast_exp2(m - mx);  // 0 while m is -inf
    wsum *= keep;
#pragma unroll
    for (int c = 0; c < kCols; ++c) o[c] *= keep;
#pragma unroll
    for (int i = 0; i < kInFlight; ++i) {
      const float wgt = gpu::mma::fast_exp2(lse[i] - mx);  // 0 past the row's partials
      wsum += wgt;
#pragma unroll
      for (int c = 0; c < kCols; ++c) o[c] += wgt * v[i][c];
    }
    m = mx;
  }
#pragma unroll
  for (int c = 0; c < kCols; ++c) part[w][lane * kCols + c] = o[c];
  if (lane == 0) {
    part[w][kHeadDim] = wsum;
    warp_max[w] = m;
  }
  gpu::block_sync();
  float mx = -INFINITY;
  for (int i = 0; i < kCombineWarps; ++i) mx = fmaxf(mx, warp_max[i]);
  using E = Element<kQ>;
  for (int d = threadIdx.x; d < kHeadDim; d += blockDim.x) {
    float sum = 0.f, weights = 0.f;
    if (mx != -INFINITY)
      for (int i = 0; i < kCombineWarps; ++i) {
        const float scale = gpu::mma::fast_exp2(warp_max[i] - mx);  // 0 for a warp with no visible key
        sum += scale * part[i][d];
        weights += scale * part[i][kHeadDim];
      }
    E::store(static_cast<typename E::storage*>(a.o), row * kHeadDim + d, weights > 0.f ? sum / weights : 0.f);
  }
}

// The split combine: one CTA per (sequence, head) merges its splits with weights
// 2^(lse_s - max lse). The splits are spread over the warps and the columns over the lanes,
// so no thread walks all the partials in series (a per-CTA timeline at batch 1, 64k, 33
// splits, showed 11 us outside the decode CTAs, most of it the old one-thread-per-column
// walk). Launched dependent on the decode kernel: its launch overlaps that kernel's tail.
// kRowTiles: units of 16 x a.row_tiles query heads (the row-tile body's), else of 16.
// kWarpPerRow (DecodePolicy::kCombineWarpPerRow): a row of at most kWarpRowParts partials is
// merged by one warp instead, walking them in series (merge_row_in_warp), the first
// ceil(heads / kCombineWarps) CTAs of a sequence holding a warp per head; the CTAs after them,
// one per head and launched only where the plan has a row of more partials, merge only those
// rows and return at once for the others. For
// many rows of few partials, where a CTA per row leaves most of its warps idle and its grid of
// batch x heads CTAs (2048 at group 32, batch 32) takes more than one wave.
// kRowList (DecodePolicy::kCombineRowList, with kWarpPerRow): the grid is the plan's row list,
// a CTA for each of its first a.combine_cta_rows rows, then a warp for each of the others.
template <DType kQ, int kHeadDim, bool kRowTiles, bool kWarpPerRow = false, int kWarpRowParts = 0,
          bool kRowList = false>
__global__ void __launch_bounds__(kCombineWarps * kWarpSize) decode_combine_kernel(Params a) {
  SCHEDLAB_CTA_TIMELINE_RECORD(a.timeline, 1);
  constexpr int kCols = kHeadDim / kWarpSize;  // consecutive columns per lane
  static_assert(kHeadDim % kWarpSize == 0, "whole columns per lane");
  static_assert(!kRowList || kWarpPerRow, "a row list is of warp and CTA rows");
  using E = Element<kQ>;
  __shared__ float part[kCombineWarps][kHeadDim + 1];  // per warp: weighted O sum, then the weight sum
  __shared__ float warp_max[kCombineWarps];
  // The row list comes from the host, not the decode kernel: with it, this CTA finds its row
  // and its partial count while the decode grid may still be running.
  if constexpr (!kRowList) gpu::wait_prior_grid();  // the decode kernel's partials are complete and visible
  // With warps per row the grid is (sequence, slice) so that the CTAs of one row each, which
  // come after the warps' CTAs, alternate between sequences: a long sequence's rows are not
  // left to the end of the grid.
  const int w = gpu::warp_id(), lane = gpu::lane_id();
  int seq, head, list_parts = 0;
  bool warp_row;  // this warp merges a row alone
  if constexpr (kRowList) {
    warp_row = int(blockIdx.x) >= a.combine_cta_rows;
    const int i = warp_row ? a.combine_cta_rows + (blockIdx.x - a.combine_cta_rows) * kCombineWarps + w : blockIdx.x;
    if (warp_row && i >= a.combine_cta_rows + a.combine_warp_rows) return;
    const int row = a.combine_rows[2 * i];
    list_parts = a.combine_rows[2 * i + 1];  // with the row: no load that waits on another
    seq = row / a.q_heads;
    head = row % a.q_heads;
  } else {
    seq = kWarpPerRow ? blockIdx.x : blockIdx.y;
    const int slice = kWarpPerRow ? blockIdx.y : blockIdx.x;
    const int warp_ctas = kWarpPerRow ? (a.q_heads + kCombineWarps - 1) / kCombineWarps : 0;
    warp_row = kWarpPerRow && slice < warp_ctas;
    head = warp_row ? slice * kCombineWarps + w : slice - warp_ctas;
    if (warp_row && head >= a.q_heads) return;
  }
  const std::size_t slot0 = (std::size_t(seq) * a.q_heads + head) * a.num_splits;
  // Splits fill every slot; a persistent grid as many as warps worked on the head's unit, a
  // token-balanced one as many as the plan cut it into.
  const int unit_rows = kRowTiles ? kDecodeMaxGroup * a.row_tiles : kDecodeMaxGroup;
  const int group = a.q_heads / a.kv_heads, chunks = (group + unit_rows - 1) / unit_rows;
  const int unit = (seq * a.kv_heads + head / group) * chunks + (head % group) / unit_rows;
  int slots;
  if constexpr (kRowList) slots = list_parts;  // its unit's count as the work list holds it (negated)
  else slots = a.persistent ? Schedule(a).published[unit] : a.unit_partials ? a.unit_partials[unit] : a.num_splits;
  // A token-balanced unit merged here carries its partial count negated; the others wrote their
  // output whole (one chunk) or were merged by their last chunk in the decode kernel.
  if (a.unit_partials) {
    if (slots > 0) return;
    slots = -slots;
  }
  if (kWarpPerRow && warp_row != (slots <= kWarpRowParts)) return;  // the row is the other part's
  if constexpr (kRowList) gpu::wait_prior_grid();
  // A shared tail's counter is zeroed for the next launch here, the decode grid being done.
  if (a.schedule && !a.persistent && (warp_row ? lane : threadIdx.x) == 0 && head % group % unit_rows == 0)
    a.schedule[unit] = 0;
  if (warp_row) {
    merge_row_in_warp<kQ, kHeadDim>(a, std::size_t(seq) * a.q_heads + head, slots);
    return;
  }
  if constexpr (kRowList) {
    merge_row_in_cta<kQ, kHeadDim>(a, std::size_t(seq) * a.q_heads + head, slots, part, warp_max);
    return;
  }
  float m = -INFINITY;
  for (int sp = threadIdx.x; sp < slots; sp += blockDim.x) m = fmaxf(m, a.partial_lse[slot0 + sp]);
  for (int off = kWarpSize / 2; off > 0; off /= 2) m = fmaxf(m, gpu::shfl_xor(m, off));
  if (lane == 0) warp_max[w] = m;
  gpu::block_sync();
  m = warp_max[0];
  for (int i = 1; i < kCombineWarps; ++i) m = fmaxf(m, warp_max[i]);
  float o[kCols] = {}, wsum = 0.f;
  if (m != -INFINITY) {
    auto add = [&](int sp) {
      const float wgt = gpu::mma::fast_exp2(a.partial_lse[slot0 + sp] - m);
      const float* src = a.partial_o + (slot0 + sp) * kHeadDim + lane * kCols;
      wsum += wgt;
#pragma unroll
      for (int c = 0; c < kCols; ++c) o[c] += wgt * src[c];
    };
    if constexpr (kWarpPerRow) {  // only rows of many partials get here: four in flight a warp
#pragma unroll 4
      for (int sp = w; sp < slots; sp += kCombineWarps) add(sp);
    } else {
      for (int sp = w; sp < slots; sp += kCombineWarps) {
        const float wgt = gpu::mma::fast_exp2(a.partial_lse[slot0 + sp] - m);
        const float* src = a.partial_o + (slot0 + sp) * kHeadDim + lane * kCols;
        wsum += wgt;
#pragma unroll
        for (int c = 0; c < kCols; ++c) o[c] += wgt * src[c];
      }
    }
  }
#pragma unroll
  for (int c = 0; c < kCols; ++c) part[w][lane * kCols + c] = o[c];
  if (lane == 0) part[w][kHeadDim] = wsum;
  gpu::block_sync();
  for (int d = threadIdx.x; d < kHeadDim; d += blockDim.x) {
    float sum = 0.f, weights = 0.f;
    for (int i = 0; i < kCombineWarps; ++i) {
      sum += part[i][d];
      weights += part[i][kHeadDim];
    }
    E::store(static_cast<typename E::storage*>(a.o), (std::size_t(seq) * a.q_heads + head) * kHeadDim + d,
             weights > 0.f ? sum / weights : 0.f);  // no visible key: zeros, as the reference
  }
}

template <class Policy, DType kKv, int kHeadDim, DecodeBody kBody>
auto decode_kernel() {
  return paged_decode_kernel<Policy, kKv, kHeadDim, kBody, gpu::DynamicSmem<kSmemBytes<Policy, kKv, kHeadDim, kBody>>>;
}

// The tensor map of a 16-bit KV pool, encoded once per pool (a host call per launch would sit
// between the timing events).
template <int kHeadDim>
gpu::api::TensorMap pool_tensor_map(const void* pool, const DecodeProblem& p) {
  using T = Tile<DType::bf16, kHeadDim, true>;
  const std::uint64_t rows = std::uint64_t(p.num_pages) * p.kv_heads * p.page_size;
  if (rows > std::uint64_t(INT32_MAX)) throw UnsupportedProblem("paged decode: bulk copies address rows with 32-bit coordinates");
  static std::map<std::pair<const void*, std::uint64_t>, gpu::api::TensorMap> cache;
  auto [it, fresh] = cache.try_emplace({pool, rows});
  if (fresh)
    SCHEDLAB_GPU_CHECK(gpu::api::encode_tensor_map_2d(&it->second, pool, kHeadDim, rows, kHeadDim * 2, T::kBoxCols,
                                                      kDecodeTileTokens, 0));
  return it->second;
}

template <class Policy, DType kKv, int kHeadDim>
void launch_for(const DecodeArgs& args, const DecodePlan& plan, gpu::api::stream_t stream) {
  const DecodeProblem& p = *args.problem;
  if (plan.dynamic() && Policy::kTileSchedule != TileSchedule::persistent)
    throw std::invalid_argument("paged decode: a persistent plan for a policy without a persistent schedule");
  if (plan.needs_schedule() && !args.schedule) throw std::invalid_argument("paged decode: the plan needs the schedule counters");
  if (plan.balanced() && (Policy::kTileSchedule != TileSchedule::token_balanced || !args.work))
    throw std::invalid_argument("paged decode: a token-balanced plan needs a token-balanced policy and its uploaded work list");
  if (plan.row_tiles < 1 || plan.row_tiles > Policy::kMaxRowTiles || (plan.row_tiles > 1 && plan.dynamic()))
    throw std::invalid_argument("paged decode: a plan of " + std::to_string(plan.row_tiles) +
                                " row tiles for a policy of at most " + std::to_string(Policy::kMaxRowTiles));
  const int* work = plan.balanced() ? args.work : nullptr;
  Params a{args.q,      static_cast<const unsigned char*>(args.k_pool), static_cast<const unsigned char*>(args.v_pool),
           args.block_table, args.context_lens, args.k_scale, args.v_scale, args.o, args.partial_o, args.partial_lse, args.probe_slots,
           plan.needs_schedule() ? args.schedule : nullptr, work, work ? work + 4 * std::size_t(plan.work_chunks) : nullptr,
           decode_work_pairs(p, plan.row_tiles), plan.dynamic(),
           p.q_heads,   p.kv_heads, p.page_size, p.max_pages_per_seq, p.window, plan.num_splits, plan.tiles_per_split,
           p.scale() * kLog2e, plan.row_tiles};
#if SCHEDLAB_CTA_TIMELINE
  a.timeline = args.timeline;
#endif
  if constexpr (kBulk<Policy, kKv>) {
    a.k_map = pool_tensor_map<kHeadDim>(args.k_pool, p);
    a.v_map = pool_tensor_map<kHeadDim>(args.v_pool, p);
  }
  auto run = [&]<DecodeBody kBody>(dim3 grid) {
    const dim3 block(kThreadsOf<Policy, kKv, kBody>);
    constexpr int kBytes = kSmemBytes<Policy, kKv, kHeadDim, kBody>;
    auto kernel = decode_kernel<Policy, kKv, kHeadDim, kBody>();
    // Once per kernel: a runtime call between the timing events would be measured.
    static const bool smem_set = (gpu::set_max_dynamic_smem(kernel, kBytes), true);
    (void)smem_set;
    gpu::launch("paged_decode", kernel, gpu::LaunchConfig{grid, block, kBytes, stream}, a);
  };
  if constexpr (Policy::kTileSchedule == TileSchedule::persistent) {
    if (plan.dynamic()) run.template operator()<DecodeBody::dynamic>(dim3(plan.ctas));
  }
  const dim3 grid = plan.balanced() ? dim3(plan.work_chunks)
                                    : dim3(plan.num_splits, p.kv_heads * decode_group_chunks(p, plan.row_tiles), p.batch);
  bool row_tiles = false;
  if constexpr (Policy::kMaxRowTiles > 1) row_tiles = plan.row_tiles > 1;
  if (row_tiles) {
    if constexpr (Policy::kMaxRowTiles > 1) run.template operator()<kRowTileBody<Policy, kKv>>(grid);
  } else if (!plan.dynamic()) {
    run.template operator()<DecodeBody::split>(grid);
  }
  if (plan.needs_combine()) {
    constexpr bool kWarpPerRow = Policy::kCombineWarpPerRow;
    constexpr int kParts = kWarpPerRow ? Policy::kCombineWarpRowMaxPartials : 0;
    constexpr bool kRowList = Policy::kCombineRowList;
    static_assert(!kRowList || kWarpPerRow, "a combine row list needs the combine a warp per row");
    // A token-balanced plan's own list of rows; forced splits (a partial per split of every
    // row) keep the (sequence, slice) grid.
    const bool listed = kRowList && plan.balanced();
    auto combine = decode_combine_kernel<kQueryType<kKv>, kHeadDim, false, kWarpPerRow, kParts>;
    if constexpr (Policy::kMaxRowTiles > 1) {
      if (row_tiles) combine = decode_combine_kernel<kQueryType<kKv>, kHeadDim, true, kWarpPerRow, kParts>;
    }
    if constexpr (kRowList) {
      if (listed) combine = row_tiles ? decode_combine_kernel<kQueryType<kKv>, kHeadDim, true, true, kParts, true>
                                      : decode_combine_kernel<kQueryType<kKv>, kHeadDim, false, true, kParts, true>;
    }
    dim3 grid;
    if (listed) {
      a.combine_rows = a.unit_partials + a.units;
      a.combine_cta_rows = plan.combine_cta_rows;
      a.combine_warp_rows = plan.combine_warp_rows;
      grid = dim3(plan.combine_cta_rows + (plan.combine_warp_rows + kCombineWarps - 1) / kCombineWarps);
    } else {
      // With a warp per row, the CTAs of one row each only where a row may have more partials
      // than a warp merges (num_splits: the most partials of any row of the plan).
      const bool cta_rows = !kWarpPerRow || plan.num_splits > kParts;
      const int row_ctas = (kWarpPerRow ? (p.q_heads + kCombineWarps - 1) / kCombineWarps : 0) + (cta_rows ? p.q_heads : 0);
      grid = kWarpPerRow ? dim3(p.batch, row_ctas) : dim3(row_ctas, p.batch);
    }
    gpu::launch("decode_combine", combine,
                gpu::LaunchConfig{grid, dim3(kCombineWarps * kWarpSize), 0, stream, /*overlap_prior=*/true}, a);
  }
}

}  // namespace schedlab::kernels::decode_detail

namespace schedlab::kernels {

namespace decode_detail {
// Calls f.template operator()<kKv, kHeadDim>() for the problem's KV dtype and head dim.
template <class F>
decltype(auto) dispatch(const DecodeProblem& p, F&& f) {
  if (p.q_dtype != (p.kv_dtype == DType::f16 ? DType::f16 : DType::bf16))
    throw UnsupportedProblem("paged decode: queries are f16 with f16 KV and bf16 otherwise");
  auto by_dim = [&]<DType kKv>() {
    switch (p.head_dim) {
      case 64: return f.template operator()<kKv, 64>();
      case 128: return f.template operator()<kKv, 128>();
      default: throw UnsupportedProblem("paged decode: head_dim " + std::to_string(p.head_dim));
    }
  };
  switch (p.kv_dtype) {
    case DType::bf16: return by_dim.template operator()<DType::bf16>();
    case DType::f16: return by_dim.template operator()<DType::f16>();
    case DType::fp8_e4m3: return by_dim.template operator()<DType::fp8_e4m3>();
    default: throw UnsupportedProblem("paged decode: kv dtype");
  }
}
}  // namespace decode_detail

namespace decode_detail {
// The plan of one instantiation on the current device (its occupancy read from the runtime).
template <class Policy, DType kKv, int kHeadDim>
DecodePlan plan_for(const DecodeProblem& p, int forced_splits) {
  const gpu::DeviceInfo dev = gpu::device_info();
  const std::optional<gpu::GpuArch> arch = gpu::arch_of_device(dev.arch);
  if (!arch) throw UnsupportedProblem("paged decode: no code for device architecture " + dev.arch);
  // A policy whose stages do not fit this device is a skipped case, not a failed run.
  require_decode_fits<Policy>(p, *arch, dev.smem_per_block_optin);
  // A bulk copy moves a box of 16 contiguous rows of the pool, which a page smaller than a tile
  // does not hold.
  if (kBulk<Policy, kKv> && p.page_size < kDecodeTileTokens)
    throw UnsupportedProblem("paged decode: bulk copies need pages of at least " + std::to_string(kDecodeTileTokens) +
                             " keys (page_size " + std::to_string(p.page_size) + ")");
  static_assert(Policy::kMaxRowTiles == 1 || Policy::kTileSchedule == TileSchedule::split ||
                    Policy::kTileSchedule == TileSchedule::token_balanced,
                "row tiles are built for the split and token-balanced schedules only");
  auto slots_of = [&]<DecodeBody kBody>() {
    constexpr int kBodyBytes = kSmemBytes<Policy, kKv, kHeadDim, kBody>;  // checked by require_decode_fits
    auto kernel = decode_kernel<Policy, kKv, kHeadDim, kBody>();
    gpu::set_max_dynamic_smem(kernel, kBodyBytes);
    return dev.sm_count * gpu::max_active_blocks(kernel, kThreadsOf<Policy, kKv, kBody>, kBodyBytes);
  };
  constexpr DecodeBody kBody = Policy::kTileSchedule == TileSchedule::persistent ? DecodeBody::dynamic : DecodeBody::split;
  int slots = 0;
  if constexpr (Policy::kMaxRowTiles > 1) {
    if (decode_row_tiles(p, Policy::kTileSchedule, Policy::kMaxRowTiles) > 1)
      slots = slots_of.template operator()<kRowTileBody<Policy, kKv>>();
  }
  if (slots == 0) slots = slots_of.template operator()<kBody>();
  constexpr int kOverhead = kKv == DType::fp8_e4m3 ? Policy::kChunkOverheadTilesFp8 : Policy::kChunkOverheadTiles;
  return plan_decode(p, slots, kWarpsOf<Policy, kKv>, forced_splits, Policy::kTileSchedule, kOverhead,
                     Policy::kMaxRowTiles, Policy::kMaxInKernelMergeRowsPerWarp,
                     Policy::kCombineRowList ? Policy::kCombineWarpRowMaxPartials : 0, Policy::kMaxInKernelMergeSteps,
                     Policy::kFillSlots);
}
}  // namespace decode_detail

template <class Policy>
DecodePlan plan_paged_decode(const DecodeProblem& p, int forced_splits) {
  using namespace decode_detail;
  return dispatch(p, [&]<DType kKv, int kHeadDim>() { return plan_for<Policy, kKv, kHeadDim>(p, forced_splits); });
}

template <class Policy>
void launch_paged_decode(const DecodeArgs& args, const DecodePlan& plan, gpu::api::stream_t stream) {
  using namespace decode_detail;
  dispatch(*args.problem,
           [&]<DType kKv, int kHeadDim>() { launch_for<Policy, kKv, kHeadDim>(args, plan, stream); });
}

// The plan and the launch of every policy of an experiment's variant list, instantiated by the
// experiment's kernels.cu (`template struct DecodeInstances<Variants>;`), the kernels of each
// with them; its benchmark calls them through the declarations in paged_decode.hpp.
template <class List>
struct DecodeInstances;
template <class... Policies>
struct DecodeInstances<harness::VariantList<Policies...>> {
  // Tables defined out of the class: their explicit instantiation emits them, and with them
  // every function they point to (a use that left no code or data would emit nothing).
  static void (*const launches[])(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
  static DecodePlan (*const plans[])(const DecodeProblem&, int);
};
template <class... Policies>
void (*const DecodeInstances<harness::VariantList<Policies...>>::launches[])(const DecodeArgs&, const DecodePlan&,
                                                                             gpu::api::stream_t) = {
    &launch_paged_decode<Policies>...};
template <class... Policies>
DecodePlan (*const DecodeInstances<harness::VariantList<Policies...>>::plans[])(const DecodeProblem&, int) = {
    &plan_paged_decode<Policies>...};

}  // namespace schedlab::kernels
