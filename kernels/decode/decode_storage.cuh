// The paged decode kernel's parameters, tile layouts and shared storage: what every body of
// the kernel and the host plan agree on (the plan counts the same bytes: decode_smem_bytes).
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
#include "kernels/attention/constants.hpp"
#include "kernels/attention/pipeline.hpp"
#include "kernels/common/element.hpp"
#include "kernels/decode/decode_policy.hpp"
#include "kernels/decode/paged_decode.hpp"


namespace schedlab::kernels::decode_detail {

using gpu::kWarpSize;
using attention::kLog2e;

// The named barriers of the decode kernel (0 is the CTA barrier, __syncthreads): the warpgroup
// body's ring of converted fp8 steps between its producer and computing warpgroups (full and
// empty barriers of its two steps, kRingFirst on), Q's among the computing warps, and the
// computing warps' closing steps once the producers have left (CtaSync).
struct DecodeBarrier {
  static constexpr int kRingFirst = 1, kQReady = 5, kCtaClose = 6;
};

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
inline constexpr int kStages = Policy::Warp::kKvBuffers * (kKv == DType::fp8_e4m3 ? 2 : 1);

template <class Policy, DType kKv>
inline constexpr int kMinCtas = kKv == DType::fp8_e4m3 ? Policy::Warp::kMinCtasPerSmFp8 : Policy::Warp::kMinCtasPerSm;
template <class Policy, DType kKv>
inline constexpr int kWarpsOf = kKv == DType::fp8_e4m3 ? Policy::Warp::kWarpsFp8 : Policy::Warp::kWarps;

// Bulk tensor copies (Policy::Warp::kBulkCopy) where the backend has them, for 16-bit KV; fp8 tiles
// keep the per-lane copies, whose swizzle their lane-wise reads need.
template <class Policy, DType kKv>
inline constexpr bool kBulk = Policy::Warp::kBulkCopy && gpu::kHasBulkCopy && kKv != DType::fp8_e4m3;
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
    SCHEDLAB_GPU_HAS_WGMMA && Policy::RowTiles::kRowTileMma == RowTileMma::warpgroup && Policy::RowTiles::kMaxRowTiles > 1;
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
  static constexpr int kStages = Policy::RowTiles::kRowTileStages;  // 16-bit KV
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
  static_assert(!kWarpgroupRows<Policy, kKv> || (kWarps == 4 && Policy::RowTiles::kMaxRowTiles == 4),
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

}  // namespace schedlab::kernels::decode_detail
