// The Hopper prefill kernel's configuration and storage: the constants every role derives
// from a policy (Config), the shared storage and its rings, the kernel's parameters, and the
// keys and scales of one output tile. The kernel is described in hopper_prefill.cuh.
#pragma once
#include <cstdint>
#include <map>
#include <tuple>
#include <type_traits>

#include "common/gpu/backend/cuda/attention_tile_fp8.hpp"
#include "common/gpu/backend/cuda/hopper.hpp"
#include "common/gpu/device.hpp"
#include "common/gpu/kernel_traits.hpp"
#include "common/gpu/launch.hpp"
#include "common/gpu/runtime.hpp"
#include "kernels/attention/constants.hpp"
#include "kernels/attention/dynamic_tile_scheduler.hpp"
#include "kernels/attention/online_softmax.hpp"
#include "kernels/attention/pipeline.hpp"
#include "kernels/attention/ragged_blocks.hpp"
#include "kernels/attention/split_tail.hpp"
#include "kernels/attention/tile_scheduler.hpp"
#include "kernels/attention/write_o.hpp"
#include "kernels/hopper_prefill/hopper_policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill.hpp"

namespace schedlab::kernels::hopper_detail {

using attention::PipelineState;
using attention::TileCoord;
using gpu::kWarpGroupThreads;
using gpu::kWarpSize;
namespace wgmma = gpu::wgmma;
using attention::kLog2e;
inline constexpr int kBoxCols = 64;      // 16-bit tensor-map columns of one 128-byte-swizzled box
inline constexpr int kRowBytes = 128;    // one box row: 64 bf16 / f16 or 128 e4m3 values
inline constexpr int kAtomBytes = 1024;  // 8 swizzled rows: the wgmma stride offset
inline constexpr int kStepBytes = 32;    // the k extent of one wgmma: k16 of 16-bit, k32 of 8-bit values
inline constexpr int kStepsPerRow = kRowBytes / kStepBytes;
// Named barriers: 0 is __syncthreads; kTurnBarrier0 + c is consumer c's ping-pong turn;
// kExpMeetBarrier and the next the two consumers' meeting between their exponentials
// (Config::kExpMeet).
inline constexpr int kTurnBarrier0 = 2;
inline constexpr int kExpMeetBarrier = 6;

// The m16n8 rows of O when V^T's row 16c + i holds column 16c + 2i (i < 8) or 16c + 2(i - 8) + 1
// (fp8's matrix transpose of V, transpose_v_matrix): a lane's slot of C tiles 2c and 2c + 1
// then holds columns 16c + 4t .. 16c + 4t + 3, in the order (2c, 0), (2c + 1, 0), (2c, 1), (2c + 1, 1); one 8-byte store each.
template <int kBlockN, int kHeadDim>
struct M16n8RowsPairedCols : gpu::attn::M16n8Rows<kBlockN, kHeadDim> {
  using Base = gpu::attn::M16n8Rows<kBlockN, kHeadDim>;
  template <class Op>
  static __device__ __forceinline__ void store_o_row(std::uint16_t* row_ptr, const float (&o)[Base::kOTiles][4], int r,
                                                     float inv) {
    const int t = gpu::mma::frag_lane() % 4;
#pragma unroll
    for (int c = 0; c < Base::kOTiles / 2; ++c)
      *reinterpret_cast<uint2*>(row_ptr + 16 * c + 4 * t) =
          make_uint2(gpu::mma::pack2<Op>(o[2 * c][2 * r] * inv, o[2 * c + 1][2 * r] * inv),
                     gpu::mma::pack2<Op>(o[2 * c][2 * r + 1] * inv, o[2 * c + 1][2 * r + 1] * inv));
  }
};

template <class Policy, DType kT, int kHeadDimT, bool kCausalT, bool kRaggedT = false>
struct Config {
  static constexpr int kHeadDim = kHeadDimT;
  static constexpr bool kCausal = kCausalT;
  // A ragged batch (PrefillProblem::lengths): the tensors hold the sequences packed, a tile's
  // sequence and its block come from Params::blocks. A compile-time choice, so that the
  // uniform kernels carry none of it.
  static constexpr bool kRagged = kRaggedT;
  static constexpr bool kFp8 = kT == DType::fp8_e4m3;
  static constexpr int kElemBytes = kFp8 ? 1 : 2;
  static constexpr HopperTile kTile = kFp8 ? Policy::fp8_tile(kCausal) : Policy::tile(kHeadDim, kCausal);
  static constexpr int kConsumers = kTile.consumers;  // consumer warpgroups
  static constexpr int kWgRows = 64;    // query rows of one consumer (wgmma m64)
  static constexpr int kBlockM = kConsumers * kWgRows;
  static constexpr bool kBlocksFromEnd = kCausal && Policy::kCausalBlocksFromEnd;
  static constexpr int kBlockN = kTile.block_n;
  static constexpr int kKvRows = kBlockN;  // rows of a K / V tile in shared memory (NarrowTile keeps them)
  static constexpr int kStages = Policy::kStages;
  // One shared-memory slot per stage holding K(j), then V(j); else a K ring and a V ring.
  static constexpr bool kKvUnion = Policy::kKvUnion;
  // The ring O += P V reads: V as copied (kStages), or fp8's V^T ring (kVtStages). V^T(j) is
  // freed only once O += P V(j) completes, during the consumers' next tile, so with two stages
  // the producer transposes V(j + 2) inside one tile of the consumers' time (a third stage was
  // no faster: kernels/hopper_prefill/LOG.md, fp8_vt3).
  static constexpr int kVtStages = 2;
  static constexpr int kPvStages = kT == DType::fp8_e4m3 ? kVtStages : kStages;
  static constexpr int kTileQueueSlots = Policy::kTileQueueSlots;
  // The persistent static walk without the mask, one length: the last wave's tiles split by
  // keys (Policy::kSplitTailFill; attention/split_tail.hpp).
  static constexpr bool kSplitTail = Policy::kSplitTailFill > 0.f && !kCausal && !kRagged &&
                                     Policy::kSchedule == attention::TileSchedule::Persistent;
  // With the split, whole tiles run a body of their own, the key-tile loop of the kernel without
  // the split (Consumer::run_tile): fp8, whose loop compiled otherwise in one body with the
  // split units'. 16-bit keeps one body: in two, ptxas serialized every wgmma of its loops.
  static constexpr bool kSplitWholeApart = kSplitTail && kFp8;
  static constexpr int kProducers = Policy::kWarpSpecialized ? 1 : 0;
  static constexpr int kThreads = (kConsumers + kProducers) * kWarpGroupThreads;
  static constexpr int kConsumerWarps = kConsumers * kWarpGroupThreads / kWarpSize;  // arrivals that free a stage
  static constexpr int kColBlocks = kHeadDim * kElemBytes / kRowBytes;  // 128-byte boxes per row
  static constexpr int kQBytes = kBlockM * kHeadDim * kElemBytes;
  static constexpr int kKvBytes = kBlockN * kHeadDim * kElemBytes;
  static constexpr int kStepElems = kStepBytes / kElemBytes;  // k of one wgmma: 16 or 32
  static constexpr int kQkSteps = kHeadDim / kStepElems;      // k steps of S = Q K^T
  static constexpr int kPvSteps = kBlockN / kStepElems;       // k steps of O += P V
  static constexpr int kSRegs = kBlockN / 2;      // S accumulators per thread (m64 x kBlockN)
  static constexpr int kORegs = kHeadDim / 2;     // O accumulators per thread (m64 x head dim)
  // The online softmax's form (kernels/attention/online_softmax.hpp): row chains, the sum
  // folded once per tile, the mask by each row's first invisible key.
  static constexpr int kRowChains = kTile.row_chains;
  static constexpr int kPBuffers = kTile.p_buffers;
  static_assert(kPBuffers == 1 || kPBuffers == 2, "P in one register buffer or two");
  // The overlapped loop with one P buffer: PV(j - 1) waited for in the exponentials' block
  // (Policy::pv_wait_from_keys), for the tiles of at least kPvWaitFromKeys keys (0: every
  // one; the others then run a loop of their own that waits after it; -1: none). The serial loop waits for
  // each GEMM where it issues it.
  static constexpr bool kPvWaitInSoftmax =
      Policy::kIntraOverlap && kPBuffers == 1 && Policy::pv_wait_from_keys(kHeadDim, kCausal) >= 0;
  // A 16-bit kernel of one CTA a tile beside a short kernel for its mask (kHasShortSeq) runs the
  // launches of more than short_keys keys only (a ragged batch's shorter sequences with them):
  // where those reach pv_wait_from_keys it holds the one loop.
  static constexpr int kPvWaitFromKeys =
      !kPvWaitInSoftmax || (!kFp8 && kHasShortSeq<Policy, kCausal> &&
                            Policy::short_keys(kCausal) >= Policy::pv_wait_from_keys(kHeadDim, kCausal))
          ? 0
          : Policy::pv_wait_from_keys(kHeadDim, kCausal);
  static constexpr int kPvWaitBehindExp = kPvWaitInSoftmax ? Policy::pv_wait_behind_exp(kHeadDim, kCausal) : -1;
  static constexpr bool kMaskLoops = Policy::mask_loops(kHeadDim, kCausal);
  static_assert(kPvWaitBehindExp < kSRegs, "pv_wait_behind_exp names one of S's registers");
  static constexpr bool kFoldSum = true, kRowLimitMask = true, kSkipUnitRescale = false;
  // fp8: the two consumers' exponentials alternate (Policy::kExpMeetFp8, ExpMeet).
  static constexpr bool kExpMeet = kFp8 && Policy::kExpMeetFp8;
  static_assert(!kExpMeet || (kConsumers == 2 && Policy::kStagedOutput),
                "the exponentials' meeting is of two consumers, tied to a word of each warp's staging rows");
  // P packed in the exponentials' block of the serial loop (Policy::kMeetPackInBlock).
  static constexpr bool kMeetPackInBlock = kExpMeet && Policy::kMeetPackInBlock;
  // Under the mask a tile's last key tile runs as NarrowTile (Policy::kNarrowLastTile): in
  // Fp8Meet's serial loop, and in the overlapped loop on one P buffer whose PV wait is in the
  // exponentials' block at every length (both take the warpgroup's mask bound, so its four warps
  // issue one GEMM width). Key tiles of whole 64-key steps (not the 176-key tile).
  static constexpr int kNarrowStep = 64;
  static constexpr bool kNarrowLast =
      Policy::kNarrowLastTile && kCausal && kBlockN % kNarrowStep == 0 &&
      (kExpMeet ? !Policy::kIntraOverlap
                : Policy::kIntraOverlap && kPBuffers == 1 && kPvWaitInSoftmax && kPvWaitFromKeys == 0 && !kMaskLoops);
  // fp8's V^T rows (O's columns) are permuted within 16-column chunks by the matrix transpose.
  static constexpr bool kPairedCols = kFp8;
  // O through each consumer warp's shared staging rows (Policy::kStagedOutput, hopper_output.cuh).
  static constexpr bool kStagedOutput = Policy::kStagedOutput;
  // A warp's 16 rows of a consumer's m64 wgmma accumulators, laid out as m16n8 C tiles.
  using Rows = std::conditional_t<kPairedCols, M16n8RowsPairedCols<kBlockN, kHeadDim>, gpu::attn::M16n8Rows<kBlockN, kHeadDim>>;
  static constexpr int kConsumerRegs = kTile.consumer_regs;
  static constexpr int kProducerRegs = kFp8 ? Policy::kProducerRegsFp8 : Policy::kProducerRegs;
  static constexpr float kRescaleThreshold = Policy::kRescaleThreshold;
  static constexpr HopperFault kFault = Policy::kFault;
  // fp8: V^T (head dim rows x keys) in 128-key column blocks, written by producer warps 1..3.
  static constexpr int kTransposeWarps = kFp8 ? 3 : 0;
  static constexpr int kVtBlocks = (kBlockN + kRowBytes - 1) / kRowBytes;
  static constexpr int kVtBytes = kVtBlocks * kHeadDim * kRowBytes;
  static constexpr int kVReaderWarps = kFp8 ? kTransposeWarps : kConsumerWarps;  // arrivals that free a V stage
  static_assert(kHeadDim * kElemBytes % kRowBytes == 0, "rows in whole 128-byte boxes");
  static_assert(kBlockN % 16 == 0 && kBlockN <= 256, "a K/V tile is whole k16 steps and one box of at most 256 rows");
  static_assert(kStages >= 2 && kStages <= 4 && kVtStages >= 2 && kVtStages <= 4, "two to four stages in each ring");
  static_assert(!kKvUnion || Policy::kWarpSpecialized, "one slot for K and V: the producer thread orders its copies");
  static_assert(Policy::kWarpSpecialized || !Policy::kRegisterRealloc,
                "register reallocation moves registers from a producer warpgroup to the consumers");
  static_assert(!kFp8 || kHopperFp8Capable<Policy>, "fp8 needs the producer warpgroup (its warps 1-3 transpose V)");
  static_assert(!kFp8 || (kHeadDim == 128 && kBlockN % kStepElems == 0),
                "fp8: head dim 128 (a lane of a transposing warp takes 4 of its 128 columns), whole k32 steps");
  // P = exp2(s - m) <= 2^threshold goes to e4m3 with a fixed scale of 1: 2^8 = 256 < 448.
  static_assert(!kFp8 || kRescaleThreshold <= 8.f, "fp8 P must stay within e4m3's range");
  static_assert(Policy::kWarpSpecialized || Policy::kSchedule == attention::TileSchedule::OnePerTile,
                "without a producer warpgroup, a CTA computes one tile");
  // setmaxnreg moves registers within what the CTA was given at launch (the launch bound's
  // per-thread count, a multiple of 8, times its threads); an increase past that pool waits
  // forever, so the budgets must fit the launch allocation, not the whole register file.
  static constexpr int kLaunchRegsPerThread = 65536 / kThreads / 8 * 8;
  static_assert(!Policy::kRegisterRealloc ||
                    kProducerRegs * kWarpGroupThreads + kConsumerRegs * kConsumers * kWarpGroupThreads <=
                        kLaunchRegsPerThread * kThreads,
                "the register budgets exceed the registers the CTA is allocated at launch");
};

// The first kN keys of a key tile as the GEMMs and the softmax see it (Config::kNarrowLast):
// S from an m64nN GEMM into the first kN / 2 of S's accumulators (the same layout), kN / 32 PV
// steps over the first kN keys of V^T (in 128-key column blocks). The tile in shared memory
// keeps its kKvRows rows.
template <class Cfg, int kN>
struct NarrowTile : Cfg {
  static constexpr int kBlockN = kN;
  static constexpr int kPvSteps = kN / Cfg::kStepElems;
  static constexpr int kSRegs = kN / 2;
  using Rows = std::conditional_t<Cfg::kPairedCols, M16n8RowsPairedCols<kN, Cfg::kHeadDim>,
                                  gpu::attn::M16n8Rows<kN, Cfg::kHeadDim>>;
  static_assert(kN % Cfg::kStepElems == 0 && kN <= Cfg::kBlockN, "whole k steps of the tile's keys");
};

// fp8's V^T ring: kVtBlocks blocks of [head dim][128 keys], 128-byte swizzled as the copies
// would leave them, so that V^T is a K-major B operand like K. Full: one arrival per
// transposing warp; empty: one per consumer warp.
template <class Cfg>
struct TransposedV {
  alignas(kAtomBytes) unsigned char vt[Cfg::kVtStages][Cfg::kVtBytes];
  attention::FullEmptyPipeline<Cfg::kVtStages> vt_pipe;
};
struct NoTransposedV {};

// The V ring of its own (an empty member under kKvUnion, where V(j) lands in K(j)'s slot).
template <class Cfg>
struct VRing {
  alignas(kAtomBytes) unsigned char v[Cfg::kStages][Cfg::kKvBytes];
};
struct NoVRing {};

// Each consumer warp's staging rows for O (Config::kStagedOutput; hopper_output.cuh): its 16
// rows, one 128-byte segment (64 16-bit columns) of each at a time.
inline constexpr int kStageRows = 16;
template <class Cfg>
struct OStage {
  alignas(kRowBytes) unsigned char rows[Cfg::kConsumerWarps][kStageRows * kRowBytes];
};
struct NoOStage {};

// Shared storage: Q, the K and V rings, their barriers. Each tile is 1024-byte aligned (the
// 128-byte swizzle repeats every 8 rows) and laid out as the copies leave it: kColBlocks
// blocks of [rows][128 bytes]. fp8 adds the V^T ring (an empty base otherwise).
template <class Cfg>
struct SharedStorage : std::conditional_t<Cfg::kFp8, TransposedV<Cfg>, NoTransposedV> {
  alignas(kAtomBytes) unsigned char q[Cfg::kQBytes];
  alignas(kAtomBytes) unsigned char k_ring[Cfg::kStages][Cfg::kKvBytes];
  std::conditional_t<Cfg::kKvUnion, NoVRing, VRing<Cfg>> v_ring;
  std::conditional_t<Cfg::kStagedOutput, OStage<Cfg>, NoOStage> o_stage;
  attention::TmaPipeline<Cfg::kStages> k_pipe, v_pipe;
  attention::TileQueue<Cfg::kTileQueueSlots> tile_queue;  // the dynamic schedule's tile ids, producer to consumers
  std::uint64_t q_full;   // Q of the current tile has landed
  std::uint64_t q_empty;  // the consumers are done with Q (persistent CTAs reload it)
  static constexpr int kLaunchBytes = int(sizeof(SharedStorage)) + kAtomBytes;  // + alignment slack
  __device__ unsigned char* k(int stage) { return k_ring[stage]; }
  __device__ unsigned char* v(int stage) {
    if constexpr (Cfg::kKvUnion) return k_ring[stage];
    else return v_ring.v[stage];
  }
};

struct Params {
  gpu::api::TensorMap q_map, k_map, v_map;  // dims (head_dim, position, head, batch); ragged: batch 1
  std::uint16_t* o;
  int q_len, kv_len, q_heads, kv_heads;  // ragged: the longest sequence's
  float scale_log2;  // softmax scale * log2(e): scores live in the log2 domain (exp2)
  attention::TileGrid tiles;  // ragged: query blocks are the entries of `blocks`, batch 1
  const float *q_scale, *k_scale, *v_scale;  // fp8: per-head dequantization scales (null otherwise)
  const attention::RaggedBlock* blocks;      // ragged: every query block of the batch (null otherwise)
  attention::SplitTail split;  // Config::kSplitTail: the walk's split tail (none: every tile whole)
  float* partials;             // the split tiles' pieces (hopper_split.cuh)
  unsigned* arrivals;          // per split tile and consumer warp: its pieces arrived (zero between launches)
  int max_pieces;              // pieces a split tile has at most (the partials' stride)
};

// The lengths the masks read (kv_len, q_len): a ragged tile's own sequence's.
struct SeqLens {
  int q_len, kv_len;
};
// A ragged tile's sequence: its lengths and its first row in the packed tensors (a base of
// TileWork only in the ragged kernel, so that the uniform one's tile state is as it was).
struct RaggedSeq {
  SeqLens lens;
  int start;
};
struct NoRaggedSeq {};
// A unit of the split walk (Config::kSplitTail): its first key tile (TileWork::n_tiles its end)
// and, for a unit of the split tiles, its first key tile among theirs (-1: a whole tile), from
// which the epilogue finds its place among its tile's pieces again (SplitTail::unit_at), so that
// one word, not three, is held across the key-tile loop.
struct SplitPiece {
  int first, split_at;
};
struct NoSplitPiece {};

// The keys one output tile needs, the same for every role of the CTA. A ragged tile looks its
// query block up (t.m_block indexes Params::blocks) and becomes block m_block of sequence
// t.batch, whose rows start at `start` in every packed tensor.
template <class Cfg>
struct TileWork : std::conditional_t<Cfg::kRagged, RaggedSeq, NoRaggedSeq>,
                  std::conditional_t<Cfg::kSplitTail, SplitPiece, NoSplitPiece> {
  TileCoord t;
  int q_row0, n_tiles, kv_head;
  // A unit of the split walk: key tiles [u.first, u.end) of its tile.
  __device__ TileWork(const Params& a, const attention::SplitUnit& u) : TileWork(a, a.tiles.at(u.tile)) {
    static_assert(Cfg::kSplitTail, "units of the split walk");
    n_tiles = u.end;
    this->first = u.first;
    this->split_at = u.tile < a.split.whole_tiles ? -1 : u.split_tile * a.split.key_tiles + u.first;
  }
  __device__ TileWork(const Params& a, TileCoord tile) : t(tile) {
    int q_len = a.q_len, kv_len = a.kv_len;
    if constexpr (Cfg::kRagged) {
      const attention::RaggedBlock b = a.blocks[t.m_block];
      t.m_block = b.m_block;
      t.batch = b.seq;
      // As many keys as queries: one length, so that the masks' kv_len - q_len folds to 0 and
      // one register holds both.
      q_len = kv_len = b.len;
      this->lens = {b.len, b.len};
      this->start = b.start;
    }
    q_row0 = t.m_block * Cfg::kBlockM;
    if constexpr (Cfg::kBlocksFromEnd) q_row0 -= (Cfg::kBlockM - q_len % Cfg::kBlockM) % Cfg::kBlockM;
    kv_head = t.head / (a.q_heads / a.kv_heads);
    n_tiles = tiles_seen_by(min(q_row0 + Cfg::kBlockM, q_len) - 1, q_len, kv_len);
  }
  // The key tiles query rows up to last_row see (under the causal mask, the last row's keys).
  static __device__ int tiles_seen_by(int last_row, int q_len, int kv_len) {
    const int key_end = Cfg::kCausal ? min(kv_len, last_row + kv_len - q_len + 1) : kv_len;
    return key_end > 0 ? (key_end + Cfg::kBlockN - 1) / Cfg::kBlockN : 0;
  }
  // The tensor-map coordinates of the tile's first query row and of key tile j: (position,
  // batch), a ragged batch being one packed batch.
  __device__ int q_position() const {
    if constexpr (Cfg::kRagged) return this->start + q_row0;
    else return q_row0;
  }
  __device__ int kv_position(int j) const {
    if constexpr (Cfg::kRagged) return this->start + j * Cfg::kBlockN;
    else return j * Cfg::kBlockN;
  }
  __device__ int map_batch() const {
    if constexpr (Cfg::kRagged) return 0;
    else return t.batch;
  }
};

// The tile's score scale (log2 domain) and O's factor besides 1 / l: fp8 folds q_scale *
// k_scale into the first and v_scale into the second (a stored value is byte * scale).
struct TileScales {
  float qk_log2, o;
};
template <class Cfg>
__device__ __forceinline__ TileScales tile_scales(const Params& a, const TileWork<Cfg>& w) {
  if constexpr (Cfg::kFp8) return {a.scale_log2 * a.q_scale[w.t.head] * a.k_scale[w.kv_head], a.v_scale[w.kv_head]};
  else return {a.scale_log2, 1.f};
}

}  // namespace schedlab::kernels::hopper_detail
