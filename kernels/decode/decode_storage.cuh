// The paged decode kernel's parameters, tile layouts and per-warp state: what every body of the
// kernel agrees on (the shared storage's byte layouts, which the host plan reads too, are in
// decode_layout.hpp).
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
#include "kernels/attention/online_softmax.hpp"
#include "kernels/attention/pipeline.hpp"
#include "kernels/common/element.hpp"
#include "kernels/decode/decode_layout.hpp"
#include "kernels/decode/decode_policy.hpp"
#include "kernels/decode/paged_decode.hpp"


namespace schedlab::kernels::decode_detail {

using gpu::kWarpSize;
using attention::kLog2e;
// The online softmax steps every family shares (max step, O's rescale, final normalizer,
// log-sum-exp).
using attention::advance_max;
using attention::inverse_sum;
using attention::row_lse;
using attention::scale_o_rows;

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

// The architecture this code is compiled for: bulk copies where the backend has them, and
// the tile geometry they write.
template <class Policy, DType kKv>
inline constexpr bool kBulk = kBulkOn<Policy, kKv, gpu::kHasBulkCopy>;
template <class Policy, DType kKv, int kHeadDim>
using TileOf = Tile<kKv, kHeadDim, kBulk<Policy, kKv>>;
template <class Policy, DType kKv, int kHeadDim>
using Smem = WarpStorage<Policy, kKv, kHeadDim, gpu::kHasBulkCopy>;

// The warpgroup row-tile body runs where this code has wgmma (its storage: GroupSmem).
template <class Policy, DType kKv>
inline constexpr bool kWarpgroupRows = SCHEDLAB_GPU_HAS_WGMMA && kAsksWarpgroupRows<Policy>;

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
