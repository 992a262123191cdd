// The paged decode kernel's shared storage as structs: the warps' stages (WarpStorage) and the
// warpgroup row-tile body's steps (GroupSmem). Each region is a member, so every size and offset
// the kernel uses is a sizeof or offsetof of them, and host and device read the same structs:
// the kernel sizes its dynamic shared memory from them, and the plan (decode_smem_bytes) refuses
// a policy whose storage does not fit before anything is launched.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/dtype.hpp"
#include "common/gpu/arch.hpp"
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::kernels {
namespace decode_detail {

// kRows rows of 16-bit head-dim values as bulk tensor copies write them and wgmma reads them:
// 64-column boxes of kRows rows x 128 bytes, each 128-byte swizzled (chunk c of row r at
// c ^ (r % 8): rows 8 apart are 1024 bytes apart, and the 8 rows of an ldmatrix hit 8 bank
// groups), one box after another.
template <int kRows, int kHeadDim>
struct BoxTile {
  static constexpr int kBoxCols = 64, kBoxBytes = kRows * 128;
  static constexpr int kBytes = kHeadDim / kBoxCols * kBoxBytes;
  static constexpr int offset(int row, int chunk) {
    return (chunk / 8) * kBoxBytes + row * 128 + (((chunk % 8) ^ (row % 8)) * 16);
  }
};

// One warp's 16 tokens of K (or V) as they land: head_dim values per token, one byte each for
// fp8, two for 16-bit KV.
template <DType kKv, int kHeadDim>
inline constexpr int kRawTileBytes = kDecodeTileTokens * kHeadDim * (kKv == DType::fp8_e4m3 ? 1 : 2);

// Stages of raw tiles a warp keeps in flight. A stage holds the bytes of kKvBuffers 16-bit
// tiles: an fp8 tile is half as large, so fp8 gets twice the stages and the same bytes in
// flight (a memory-bound loop runs at bytes in flight / latency).
template <class Policy, DType kKv>
inline constexpr int kStages = Policy::Warp::kKvBuffers * (kKv == DType::fp8_e4m3 ? 2 : 1);

template <class Policy, DType kKv>
inline constexpr int kMinCtas = kKv == DType::fp8_e4m3 ? Policy::Warp::kMinCtasPerSmFp8 : Policy::Warp::kMinCtasPerSm;
template <class Policy, DType kKv>
inline constexpr int kWarpsOf = kKv == DType::fp8_e4m3 ? Policy::Warp::kWarpsFp8 : Policy::Warp::kWarps;

// Bulk tensor copies (Policy::Warp::kBulkCopy) where the architecture has them
// (kArchHasBulkCopy), for 16-bit KV; fp8 tiles keep the per-lane copies, whose swizzle their
// lane-wise reads need.
template <class Policy, DType kKv, bool kArchHasBulkCopy>
inline constexpr bool kBulkOn = Policy::Warp::kBulkCopy && kArchHasBulkCopy && kKv != DType::fp8_e4m3;

// The warps' bodies: per warp kStages K+V stages, then (bulk copies) one mbarrier per stage
// after every warp's stages and the combine space (combine_warps, after the loop).
template <class Policy, DType kKv, int kHeadDim, bool kArchHasBulkCopy>
struct WarpStorage {
  static constexpr int kWarps = kWarpsOf<Policy, kKv>, kStagesHere = kStages<Policy, kKv>;
  static constexpr int kTileBytes = kRawTileBytes<kKv, kHeadDim>;  // one tile in shared memory
  struct Stage {
    unsigned char k[kTileBytes], v[kTileBytes];
  };
  struct Warp {
    Stage stages[kStagesHere];
  };
  // The combine space (combine_warps) reuses the stages once every warp's loop is done.
  union Body {
    Warp warps[kWarps];
    float combine[kWarps][kDecodeMaxGroup][kHeadDim + 2];
  };
  struct BodyAndBarriers {
    Body body;
    std::uint64_t full[kWarps][kStagesHere];  // bulk copies: each stage's full barrier
  };
  using Layout = std::conditional_t<kBulkOn<Policy, kKv, kArchHasBulkCopy>, BodyAndBarriers, Body>;
  static constexpr int kStageBytes = kTileBytes;
  static constexpr int kPerWarp = sizeof(Warp);
  static constexpr int kBarriers = sizeof(Body);  // where the barriers start (bulk copies)
  static constexpr int kBytes = sizeof(Layout);
  static_assert(sizeof(Stage) == 2 * kTileBytes && offsetof(BodyAndBarriers, full) == sizeof(Body),
                "the regions lie back to back, unpadded");
};

// fp8 KV in the warpgroup body has a producer warpgroup beside the computing one.
template <class Policy, DType kKv>
inline constexpr bool kFp8Producers = kKv == DType::fp8_e4m3;

// A policy that asks for the warpgroup row-tile body (RowTileMma::warpgroup, groups above 16):
// it runs where the architecture has wgmma, and the warps' body elsewhere.
template <class Policy>
inline constexpr bool kAsksWarpgroupRows =
    Policy::RowTiles::kRowTileMma == RowTileMma::warpgroup && Policy::RowTiles::kMaxRowTiles > 1;

// The warpgroup row-tile body's steps: a step is one 16-token tile per warp, 64 keys; K and V
// of a step, and Q's 64 rows, are BoxTiles, each box 1024-byte aligned, as wgmma's 16-bit
// operands want them. fp8 KV lands in per-warp raw tiles first; each warp converts its own
// tile to f16 rows of the one 16-bit step.
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
  static constexpr int kRawTile = kRawTileBytes<kKv, kHeadDim>;  // fp8: one warp's 16 tokens of K (or V)
  // fp8: the ring of raw slots, each one step's K or V tiles of every warp: two steps, four
  // with raw keys.
  static constexpr int kRawSlots = !kFp8 ? 0 : kRawKeys ? 8 : 4;
  static constexpr int kSlotBytes = kWarps * kRawTile;
  static constexpr int kQPartBytes = kWarps * kDecodeMaxGroup * kHeadDim;  // raw keys: Q's high or low part

  // 16-bit KV: kStages steps of K then V.
  struct Step16 {
    unsigned char k[KV::kBytes], v[KV::kBytes];
  };
  struct Steps16 {
    Step16 steps[kStages];
  };
  // fp8: the raw ring, then the converted 16-bit steps the producers write: K then V, or V alone
  // with raw keys.
  struct StepsFp8 {
    unsigned char raw[kRawSlots > 0 ? kRawSlots : 1][kSlotBytes];
    unsigned char converted[kConvertedSteps][(kRawKeys ? 1 : 2) * KV::kBytes];
  };
  using Steps = std::conditional_t<kFp8, StepsFp8, Steps16>;
  // Then Q's 64 rows (raw keys: its high then low e4m3 parts, together Q::kBytes at head dim
  // 128), and with raw keys each query row's 1 / s.
  struct Loop {
    Steps steps;
    unsigned char q[Q::kBytes];
  };
  struct LoopRawKeys {
    Steps steps;
    unsigned char q[Q::kBytes];
    float row_scale[kWarps * kDecodeMaxGroup];
  };
  // The warps' combine space (combine_warps) reuses the storage after the loop.
  union Layout {
    std::conditional_t<kRawKeys, LoopRawKeys, Loop> loop;
    float combine[kWarps][kDecodeMaxGroup][kHeadDim + 2];
  };
  static constexpr int kStageBytes = sizeof(Step16);  // 16-bit: one step's K and V
  static constexpr int kConverted = kFp8 ? offsetof(StepsFp8, converted) : sizeof(Steps16);
  static constexpr int kConvertedStepBytes = sizeof(StepsFp8::converted[0]);
  static constexpr int kQ = offsetof(Loop, q);
  static constexpr int kRowScales = sizeof(Loop);  // raw keys: offsetof(LoopRawKeys, row_scale)
  static constexpr int kBytes = sizeof(Layout);
  static_assert(!kRawKeys || offsetof(LoopRawKeys, row_scale) == sizeof(Loop), "the regions lie back to back");
  static_assert(kQ % 1024 == 0 && kConverted % 1024 == 0, "every box 1024-byte aligned, as wgmma's operands want");
  static_assert(!kRawKeys || (kSlotBytes % 1024 == 0 && kRawTile == 16 * 128 && 2 * kQPartBytes == Q::kBytes),
                "raw keys: a step's K slot is one 1024-byte aligned BoxTile of 128-byte rows");
  static_assert(!kAsksWarpgroupRows<Policy> || (kWarps == 4 && Policy::RowTiles::kMaxRowTiles == 4),
                "the warpgroup body is one warpgroup of four warps, one 16-row tile each");
  static_assert(kStages >= 2, "a step is computed while the next one lands");
  // Where warp w's raw K (kv 0) or V (kv 1) tile of step j lands (fp8).
  static constexpr int raw_offset(int j, int kv, int w) {
    return ((2 * j + kv) % (kRawSlots > 0 ? kRawSlots : 1)) * kSlotBytes + w * kRawTile;  // 16-bit: unused
  }
  // 16-bit: where stage b's K lies (every warp copies its rows into it; V follows at kVOffset).
  static constexpr int k_offset(int b) { return b * kStageBytes; }
  static constexpr int kVOffset = offsetof(Step16, v);
};

}  // namespace decode_detail

// Shared memory of the paged decode kernel for a policy at a head dim and KV dtype on an
// architecture: the bytes of the storage its launch would use there, so the plan can refuse a
// policy that does not fit before anything is launched. `group_body`: the body a GQA group
// above 16 runs under a row-tile policy (the warpgroup steps where the architecture has wgmma,
// else the warps' own stages). 0 for a head dim or KV dtype the kernel has no storage for
// (the launch refuses those).
template <class Policy>
constexpr int decode_smem_bytes(int head_dim, DType kv, gpu::GpuArch arch, bool group_body = false) {
  using namespace decode_detail;
  auto bytes = [&]<DType kKv, int kHeadDim>() {
    if (group_body && kAsksWarpgroupRows<Policy> && gpu::has_warpgroup_mma(arch)) return GroupSmem<Policy, kKv, kHeadDim>::kBytes;
    return gpu::has_bulk_copy(arch) ? WarpStorage<Policy, kKv, kHeadDim, true>::kBytes
                                    : WarpStorage<Policy, kKv, kHeadDim, false>::kBytes;
  };
  auto by_dim = [&]<DType kKv>() {
    switch (head_dim) {
      case 64: return bytes.template operator()<kKv, 64>();
      case 128: return bytes.template operator()<kKv, 128>();
      default: return 0;
    }
  };
  switch (kv) {
    case DType::bf16: return by_dim.template operator()<DType::bf16>();
    case DType::f16: return by_dim.template operator()<DType::f16>();
    case DType::fp8_e4m3: return by_dim.template operator()<DType::fp8_e4m3>();
    default: return 0;
  }
}

}  // namespace schedlab::kernels
