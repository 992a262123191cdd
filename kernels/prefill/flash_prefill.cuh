// Forward attention in the FlashAttention-2 style (Dao 2023, arXiv 2307.08691, Algorithm 1)
// on the portability layer. One CTA per (kWarps * kWarpRows query rows, query head,
// sequence); each warp owns kWarpRows query rows (one or two m16 tiles), keeps their Q
// fragments (or re-reads them from shared memory), the O accumulator and the online softmax
// state in registers, and walks the K/V tiles that the CTA stages through shared memory with
// async copies: S = Q K^T, online softmax in the log2 domain, O += P V with P converted in
// registers. Fragment layouts, loads and matrix products are the architecture's warp tile
// (common/gpu/attention_tile.hpp: mma.sync m16n8k16 on NVIDIA, MFMA 16x16x16 on AMD; for
// fp8 e4m3 inputs attention_tile_fp8.hpp: m16n8k32 / 16x16x32 with P in e4m3); this file
// sees only each accumulator element's (row, col) and the tile's row reductions.
// Scheduling knobs come from the Policy (prefill_policy.hpp); the body is shared.
#pragma once
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "common/gpu/attention_tile.hpp"
#include "common/gpu/attention_tile_fp8.hpp"
#include "common/gpu/device.hpp"
#include "common/gpu/probe.hpp"
#include "common/gpu/kernel_traits.hpp"
#include "common/gpu/launch.hpp"
#include "common/gpu/warp_mma.hpp"
#include "kernels/attention/constants.hpp"
#include "kernels/attention/online_softmax.hpp"
#include "kernels/attention/smem_tile.hpp"
#include "kernels/attention/tile_scheduler.hpp"
#include "kernels/attention/write_o.hpp"
#include "kernels/prefill/flash_prefill.hpp"
#include "kernels/prefill/prefill_policy.hpp"

namespace schedlab::kernels::prefill_detail {

using gpu::kWarpSize;
using gpu::Sched;
using attention::kLog2e;
inline constexpr int kMmaRows = 16;  // query rows of one matrix-instruction tile (both backends)

struct Params {
  const unsigned char* q;  // elements of the kernel's input dtype (2 bytes, or 1 for fp8)
  const unsigned char* k;
  const unsigned char* v;
  std::uint16_t* o;  // bf16/f16 (bf16 for fp8 inputs)
  int q_len, kv_len, q_heads, kv_heads;
  bool causal;
  float scale_log2;  // softmax scale * log2(e): scores live in the log2 domain (exp2)
  // fp8 only (else null): dequantization scales per query head (q) and per KV head (k, v).
  // q_scale * k_scale folds into scale_log2 and v_scale into O's 1 / l, per CTA.
  const float *q_scale, *k_scale, *v_scale;
  unsigned long long* probe_slots;  // gpu::kProbeSlots counters; null unless probes are built in
};

template <class Policy, int kHeadDimT, DType kT>
struct Config {
  static constexpr int kThreads = Policy::kWarps * kWarpSize;  // = kThreadsOf<Policy>
  static constexpr int kMTiles = Policy::kWarpRows / kMmaRows;  // m16 tiles per warp: each B fragment feeds kMTiles ops
  static constexpr int kBlockM = Policy::kWarps * Policy::kWarpRows;  // query rows per CTA
  // fp8 e4m3 Q, K, V: 8-bit matrix ops with P in e4m3 (attention_tile_fp8.hpp).
  static constexpr bool kFp8 = kT == DType::fp8_e4m3;
  static constexpr int kElemBytes = kFp8 ? 1 : 2;
  static constexpr int kBlockN = prefill_block_n<Policy>(kT);  // keys per K/V tile
  static constexpr int kHeadDim = kHeadDimT;
  using QTile = attention::SmemTile<Policy::kLayout, kBlockM, kHeadDim * kElemBytes>;   // kBlockM x head_dim
  using KvTile = attention::SmemTile<Policy::kLayout, kBlockN, kHeadDim * kElemBytes>;  // kBlockN x head_dim
  static constexpr int kQkSteps = kHeadDim * kElemBytes / 32;  // k steps of S = Q K^T: 32 bytes each
  static constexpr int kPvSteps = kBlockN / (kFp8 ? 32 : 16);   // k steps of O += P V (keys)
  // k16 steps of QK unrolled: all with Q in registers (its fragments are indexed by the
  // step); Policy::kQkUnroll otherwise, which bounds how many K/Q loads the compiler hoists.
  static constexpr int kQkUnroll = Policy::kQInRegisters ? kQkSteps : Policy::kQkUnroll;
  static constexpr bool kSkipUnitRescale = Policy::kSkipUnitRescale;
  static constexpr float kRescaleThreshold = Policy::kRescaleThreshold;
  static constexpr int kKvBuffers = Policy::kKvBuffers;  // K/V stages of the shared storage
  // With one buffer V(j) arrives after QK(j) starts, so only whole-tile buffers can prefetch it.
  static constexpr bool kPrefetchV = Policy::kKvFragments == KvFragments::Separate && Policy::kKvBuffers >= 2;
  static_assert(kBlockN % 16 == 0 && kHeadDim % 16 == 0, "tiles are whole k16 steps");
  static_assert(Policy::kWarpRows % kMmaRows == 0, "a warp owns whole m16 tiles");
  static_assert(Policy::kKvBuffers >= 1 && Policy::kKvBuffers <= 4, "one to four K/V buffers");
  static_assert(!kFp8 || Policy::kRescaleThreshold <= 8.f, "fp8 P = exp2(s - stale max) <= 2^threshold must stay below 448");
};

// Shared storage of one CTA: the Q tile, then kKvBuffers stages of (K tile, V tile). Stage
// j % kKvBuffers holds key tile j. Every tile is whole 16-byte chunks, so no member pads.
template <class Cfg>
struct SharedStorage {
  struct KvStage {
    typename Cfg::KvTile k;
    typename Cfg::KvTile v;
  };
  typename Cfg::QTile q;
  KvStage kv[Cfg::kKvBuffers];
};

// Bytes of dynamic shared memory a configuration launches with.
template <class Cfg>
inline constexpr int kSmemBytesOf = static_cast<int>(sizeof(SharedStorage<Cfg>));

// The 16-bit matrix operand type, and O's type: fp8 inputs write bf16 (FlashAttention-3's choice).
template <DType kT>
using Operand = std::conditional_t<kT == DType::f16, gpu::mma::F16, gpu::mma::Bf16>;

// The architecture's warp tile for this configuration (common/gpu/attention_tile{,_fp8}.hpp).
template <class Cfg>
using Tile = std::conditional_t<Cfg::kFp8, gpu::attn::WarpTileFp8<Cfg>, gpu::attn::WarpTile<Cfg>>;

// K and V fragments of one k16 step: K for kBlockN keys, V for head_dim columns (seed 003).
template <class Cfg, KvFragments kMode>
struct KvRegs;
template <class Cfg>
struct KvRegs<Cfg, KvFragments::Separate> {
  typename Tile<Cfg>::KFrags k_;
  typename Tile<Cfg>::VFrags v_;
  __device__ auto& k() { return k_; }
  __device__ auto& v() { return v_; }
};
template <class Cfg>
struct KvRegs<Cfg, KvFragments::Union> {
  union {
    typename Tile<Cfg>::KFrags k_;
    typename Tile<Cfg>::VFrags v_;
  };
  __device__ auto& k() { return k_; }
  __device__ auto& v() { return v_; }
};

// The warp's online-softmax rows and O accumulator (kernels/attention/online_softmax.hpp).
template <class Cfg>
using RowState = attention::RowState<Tile<Cfg>, Cfg::kMTiles>;

// STAGE produce: async copies of kRows rows (row stride `stride` elements) into a shared
// tile; rows at or past `rows_left` are zero-filled, not read (V's zeros meet P's zeros).
// A thread copies one chunk column of rows row0, row0 + kRowStep, ...: kRowStep is a
// multiple of 8, so the swizzle is the same for all of them and addresses step by constants.
// Where the backend's asynchronous copy writes lane-contiguously (gfx950 global_load_lds),
// a swizzled tile is filled slot by slot and the swizzle moves to the source chunk
// (attention::lane_copy_source_chunk); that copy cannot zero-fill, so rows past the end
// re-read the last valid row instead: finite values that the mask (K) or P's zeros (V) cancel,
// and Q rows that are never written out.
template <class Tile, int kRows, int kThreads>
__device__ __forceinline__ void produce_tile(unsigned char* tile, const unsigned char* src, std::int64_t stride_bytes,
                                             int rows_left) {
  constexpr int kRowStep = kThreads / Tile::kChunks;
  static_assert(kThreads % Tile::kChunks == 0 && kRowStep % 8 == 0 && kRows % 8 == 0,
                "every thread copies the same chunk column of rows kRowStep apart");
  // kRows need not be a multiple of kRowStep (48-key tiles with 256 AMD threads at D=64):
  // the last pass then leaves out the rows past the tile, whole waves at a time.
  constexpr int kPasses = (kRows + kRowStep - 1) / kRowStep;
  const int row0 = static_cast<int>(threadIdx.x) / Tile::kChunks, chunk = static_cast<int>(threadIdx.x) % Tile::kChunks;
  auto in_tile = [&](int i) { return kRows % kRowStep == 0 || row0 + i * kRowStep < kRows; };
  if constexpr (gpu::kLaneCopyIsAsync && !Tile::kPadded) {
    unsigned char* wave_base = tile + gpu::warp_id() * kWarpSize * 16;  // slot = thread: rows are unpadded
    const unsigned char* from = src + attention::lane_copy_source_chunk(row0, chunk, Tile::kChunks) * 16;
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int row = min(row0 + i * kRowStep, rows_left - 1);
      if (in_tile(i)) gpu::async_copy_16_lanes(wave_base + i * kRowStep * Tile::kRowBytes, from + row * stride_bytes);
    }
  } else {
    unsigned char* dst = tile + Tile::offset(row0, chunk);
    const unsigned char* from = src + row0 * stride_bytes + chunk * 16;
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const bool valid = row0 + i * kRowStep < rows_left;
      if (in_tile(i))
        gpu::async_copy_16(dst + i * kRowStep * Tile::kRowBytes, valid ? from + i * kRowStep * stride_bytes : src, valid);
    }
  }
}

// Q fragments of the warp's rows: loaded once and held in registers, or re-read from the
// shared Q tile at every k16 step (FA2's choice at head dim 128: it frees 16 registers per
// k16 step and m16 tile, for a shared-memory read that feeds a whole row of matrix ops).
template <class Cfg, bool kInRegisters>
struct QFrags;
template <class Cfg>
struct QFrags<Cfg, true> {
  static constexpr int kWords = Tile<Cfg>::kQWords;
  std::uint32_t q[Cfg::kMTiles][Cfg::kQkSteps][kWords];
  __device__ explicit QFrags(const unsigned char* q_tile) {
#pragma unroll
    for (int mt = 0; mt < Cfg::kMTiles; ++mt)
#pragma unroll
      for (int kk = 0; kk < Cfg::kQkSteps; ++kk) Tile<Cfg>::load_q_step(q[mt][kk], q_tile, mt, kk);
  }
  __device__ void step(std::uint32_t (&qa)[Cfg::kMTiles][kWords], int kk) const {
#pragma unroll
    for (int mt = 0; mt < Cfg::kMTiles; ++mt)
#pragma unroll
      for (int i = 0; i < kWords; ++i) qa[mt][i] = q[mt][kk][i];
  }
};
template <class Cfg>
struct QFrags<Cfg, false> {
  static constexpr int kWords = Tile<Cfg>::kQWords;
  const unsigned char* q_tile;
  __device__ explicit QFrags(const unsigned char* tile) : q_tile(tile) {}
  __device__ void step(std::uint32_t (&qa)[Cfg::kMTiles][kWords], int kk) const {
#pragma unroll
    for (int mt = 0; mt < Cfg::kMTiles; ++mt) Tile<Cfg>::load_q_step(qa[mt], q_tile, mt, kk);
  }
};

// STAGE 1: QK gemm, S (kWarpRows x kBlockN) = Q K^T, one k16 step at a time.
template <class Policy, class Cfg, class Op, class Q, class Regs>
__device__ __forceinline__ void compute_qk(float (&s)[Cfg::kMTiles][Tile<Cfg>::kSTiles][4], const Q& q,
                                           const unsigned char* k_tile, const unsigned char* v_tile, Regs& regs) {
  using T = Tile<Cfg>;
  const int k_off = T::k_lane_offset();
#pragma unroll
  for (int mt = 0; mt < Cfg::kMTiles; ++mt)
#pragma unroll
    for (int n = 0; n < T::kSTiles; ++n)
#pragma unroll
      for (int i = 0; i < 4; ++i) s[mt][n][i] = 0.f;
#pragma unroll Cfg::kQkUnroll
  for (int kk = 0; kk < Cfg::kQkSteps; ++kk) {
    std::uint32_t qa[Cfg::kMTiles][T::kQWords];
    q.step(qa, kk);
    // Seed 003: the first K load fenced between the previous PV and this QK matrix group.
    if (Policy::kKLoad == KLoadSchedule::Pinned && kk == 0) gpu::sched_barrier<Sched::NONE>();
    T::load_k_step(regs.k(), k_tile, k_off, kk);
    if (Policy::kKLoad == KLoadSchedule::Pinned && kk == 0) gpu::sched_barrier<Sched::NONE>();
    // Separate registers: V's first step loads before the last QK matrix ops (seed 003).
    if (Cfg::kPrefetchV && kk == Cfg::kQkSteps - 1) T::load_v_step(regs.v(), v_tile, 0);
    T::template qk_step<Op>(s, qa, regs.k());
    if constexpr (Policy::kKLoad == KLoadSchedule::Interleaved) {
      // One shared read, then the matrix ops it feeds; counts follow the tile shape.
#pragma unroll
      for (int r = 0; r < T::kKLoadsPerStep; ++r) {
        gpu::sched_group_barrier<Sched::DS_READ, 1, 0>();
        gpu::sched_group_barrier<Sched::MFMA, T::kMmasPerKLoad, 0>();
      }
    }
  }
}

// STAGE 3: PV gemm, O (kWarpRows x head_dim) += P (kWarpRows x kBlockN) V (kBlockN x head_dim).
// Seed 003 (gfx950 fp8 forward kernel): K and V register tiles in one union, so the V
// fragments are loaded into the K storage only after the QK matrix ops finish, against
// separate registers, which let V's first fragments load before the last QK matrix ops
// (there: 515.7 -> 497.5 us with the K load pinned too; .vgpr_count 172 -> 172).
// `first_loaded`: V's first step is already in regs (loaded during the QK gemm).
template <class Cfg, class Op, class Regs>
__device__ __forceinline__ void compute_pv(RowState<Cfg>& st,
                                           const std::uint32_t (&pa)[Cfg::kMTiles][Cfg::kPvSteps][Tile<Cfg>::kPWords],
                                           const unsigned char* v_tile, Regs& regs, bool first_loaded) {
#pragma unroll
  for (int kk = 0; kk < Cfg::kPvSteps; ++kk) {
    if (!(first_loaded && kk == 0)) Tile<Cfg>::load_v_step(regs.v(), v_tile, kk);
    Tile<Cfg>::template pv_step<Op>(st.o, pa, regs.v(), kk);
  }
}

// Which tile a CTA computes: one per CTA, the tile of its 3-D block index (tile_scheduler.hpp).
using CtaTiles = attention::TileScheduler<attention::TileSchedule::OnePerTileGrid>;

// Threads of a CTA, named without a comma: HIP's __launch_bounds__ is a macro.
template <class Policy>
inline constexpr int kThreadsOf = Policy::kWarps * kWarpSize;

// What one CTA works on: its rows, its key tiles, and where the tiles live.
template <class Policy, int kHeadDim, DType kT>
struct Cta {
  using Cfg = Config<Policy, kHeadDim, kT>;
  static constexpr int kBytes = Cfg::kElemBytes;  // of one input element
  const Params& a;
  SharedStorage<Cfg>& s;
  int q_row0, n_tiles, unmasked_end;  // keys below unmasked_end are visible to every row
  std::int64_t q_off, kv_stride;  // in elements
  const unsigned char *k_rows, *v_rows;
  float scale_log2, o_scale;  // Params::scale_log2 and 1, times the fp8 dequantization scales
  mutable gpu::WaitProbe probe;  // cycles at the waits below (opt-in build; else empty)

  // A thread's copies per commit group: one K or V tile with one buffer, both with more
  // (AMD's counter counts copies; NVIDIA's groups ignore it). Rounded down where threads
  // copy unequal counts (produce_tile's last pass): a wave that copies more then waits for
  // more than it needs, never for less.
  static constexpr int kCopiesPerTile = Cfg::kBlockN * Cfg::KvTile::kChunks / Cfg::kThreads;
  static constexpr int kCopiesPerGroup = (Policy::kKvBuffers == 1 ? 1 : 2) * kCopiesPerTile;

  // The loop's two kinds of wait, timed by the probe: copies landing (async wait + the
  // barrier that publishes them) and a barrier alone (every warp done with a buffer).
  // `newest`: the tile of the newest group committed; past the last tile it is empty.
  template <int kPending>
  __device__ __forceinline__ void wait_copies(int newest) const {
    probe.before();
    gpu::async_wait_groups<kPending, kCopiesPerGroup>(newest < n_tiles);
    gpu::block_sync();
    probe.after(gpu::WaitPoint::AsyncCopy);
  }
  __device__ __forceinline__ void wait_warps() const {
    probe.before();
    gpu::block_sync();
    probe.after(gpu::WaitPoint::BlockBarrier);
  }

  // A phase hand-over of the 8-wave ping-pong: this wave's copies have landed but for the
  // newest kPendingTiles tiles' (all of them where those issued none: `newer_tiles_full`),
  // then a barrier that orders shared memory only, so later copies stay in flight.
  template <int kPendingTiles>
  __device__ __forceinline__ void hand_over(bool newer_tiles_full) const {
    probe.before();
    gpu::async_wait_groups<kPendingTiles, kCopiesPerTile>(newer_tiles_full);
    gpu::block_sync_shared_divergent();  // the groups reach it a phase apart
    probe.after(gpu::WaitPoint::BlockBarrier);
  }
  __device__ __forceinline__ void hand_over() const {  // nothing to wait for
    probe.before();
    gpu::block_sync_shared_divergent();
    probe.after(gpu::WaitPoint::BlockBarrier);
  }

  __device__ Cta(const Params& p, SharedStorage<Cfg>& shared, const attention::TileCoord& t) : a(p), s(shared) {
    const int m_block = t.m_block, head = t.head, batch = t.batch, kv_head = head / (a.q_heads / a.kv_heads);
    const int offset = a.kv_len - a.q_len;  // bottom-right causal alignment
    q_row0 = m_block * Cfg::kBlockM;
    const int last_row = min(q_row0 + Cfg::kBlockM, a.q_len) - 1;
    const int key_end = a.causal ? min(a.kv_len, last_row + offset + 1) : a.kv_len;
    n_tiles = key_end > 0 ? (key_end + Cfg::kBlockN - 1) / Cfg::kBlockN : 0;
    unmasked_end = a.causal ? min(a.kv_len, q_row0 + offset + 1) : a.kv_len;
    const std::int64_t q_stride = std::int64_t(a.q_heads) * kHeadDim;
    kv_stride = std::int64_t(a.kv_heads) * kHeadDim;
    q_off = (std::int64_t(batch) * a.q_len + q_row0) * q_stride + std::int64_t(head) * kHeadDim;
    k_rows = a.k + (std::int64_t(batch) * a.kv_len * kv_stride + std::int64_t(kv_head) * kHeadDim) * kBytes;
    v_rows = a.v + (k_rows - a.k);
    if constexpr (Cfg::kFp8) {  // dequantization (and gfx942's FNUZ reading of OCP bytes: the tile's factors)
      scale_log2 = a.scale_log2 * a.q_scale[head] * a.k_scale[kv_head] * Tile<Cfg>::kQkScale;
      o_scale = a.v_scale[kv_head] * Tile<Cfg>::kPvScale;
    } else {
      scale_log2 = a.scale_log2;
      o_scale = 1.f;
    }
  }
  // Tile j's K and V live in stage j % kKvBuffers. The addresses are int offsets taken from
  // SharedStorage's layout: indexing s.kv[j % kKvBuffers] computes in 64 bits, which gave
  // other SASS (up to 24 fewer instructions and 4 fewer registers: a change to measure on
  // its own, kernels/prefill/LOG.md).
  static constexpr int kKvOffset = offsetof(SharedStorage<Cfg>, kv);
  static constexpr int kStageBytes = sizeof(typename SharedStorage<Cfg>::KvStage);
  static constexpr int kVOffset = offsetof(typename SharedStorage<Cfg>::KvStage, v);
  __device__ unsigned char* q_tile() const { return s.q.bytes; }
  __device__ unsigned char* k_tile(int j) const {
    return reinterpret_cast<unsigned char*>(&s) + kKvOffset + (j % Cfg::kKvBuffers) * kStageBytes;
  }
  __device__ unsigned char* v_tile(int j) const { return k_tile(j) + kVOffset; }
  // Fault injection (Policy::kFault, tests only) sits behind `if constexpr`, with the shipped
  // code verbatim in the other branch: a shipped policy's machine code is unchanged (checked
  // with cuobjdump -sass; even an inlined helper returning j changed the register allocation).
  __device__ bool masked(int j) const {
    if constexpr (Policy::kFault == PrefillFault::skip_mask) return false;
    else return (j + 1) * Cfg::kBlockN > unmasked_end;
  }
  __device__ void produce_q() const {
    produce_tile<typename Cfg::QTile, Cfg::kBlockM, Cfg::kThreads>(q_tile(), a.q + q_off * kBytes,
                                                                   std::int64_t(a.q_heads) * kHeadDim * kBytes, a.q_len - q_row0);
  }
  __device__ void produce_k(int j) const {
    if constexpr (Policy::kFault == PrefillFault::stale_tile) produce_copied(k_tile(j), k_rows, j);
    else if (j < n_tiles)
      produce_tile<typename Cfg::KvTile, Cfg::kBlockN, Cfg::kThreads>(k_tile(j), k_rows + j * Cfg::kBlockN * kv_stride * kBytes,
                                                                      kv_stride * kBytes, a.kv_len - j * Cfg::kBlockN);
  }
  __device__ void produce_v(int j) const {
    if constexpr (Policy::kFault == PrefillFault::stale_tile) produce_copied(v_tile(j), v_rows, j);
    else if (j < n_tiles)
      produce_tile<typename Cfg::KvTile, Cfg::kBlockN, Cfg::kThreads>(v_tile(j), v_rows + j * Cfg::kBlockN * kv_stride * kBytes,
                                                                      kv_stride * kBytes, a.kv_len - j * Cfg::kBlockN);
  }
  // A dropped-tile fault: the CTA's middle tile's scores are -inf, so it adds nothing.
  __device__ void drop_if_hit(float (&s)[Cfg::kMTiles][Tile<Cfg>::kSTiles][4], int j) const {
    if (j != n_tiles / 2) return;
#pragma unroll
    for (int mt = 0; mt < Cfg::kMTiles; ++mt)
#pragma unroll
      for (int n = 0; n < Tile<Cfg>::kSTiles; ++n)
#pragma unroll
        for (int i = 0; i < 4; ++i) s[mt][n][i] = -INFINITY;
  }
  // A stale-tile fault: the CTA's middle tile is copied from the tile its buffer held before.
  __device__ void produce_copied(unsigned char* tile, const unsigned char* rows, int j) const {
    const int src = j == n_tiles / 2 && j >= Policy::kKvBuffers ? j - Policy::kKvBuffers : j;
    if (j < n_tiles)
      produce_tile<typename Cfg::KvTile, Cfg::kBlockN, Cfg::kThreads>(tile, rows + src * Cfg::kBlockN * kv_stride * kBytes,
                                                                      kv_stride * kBytes, a.kv_len - src * Cfg::kBlockN);
  }
};

// STAGE 2: the online softmax of the warp's m16 tiles (kernels/attention/online_softmax.hpp),
// masked by the problem's key end and causal diagonal; rows from warp_row0.
template <class Cfg, class Op, bool kMask>
__device__ __forceinline__ void softmax_tiles(float (&s)[Cfg::kMTiles][Tile<Cfg>::kSTiles][4], RowState<Cfg>& st,
                                              std::uint32_t (&pa)[Cfg::kMTiles][Cfg::kPvSteps][Tile<Cfg>::kPWords], const Params& a,
                                              float scale_log2, int key0, int warp_row0) {
  attention::online_softmax<Tile<Cfg>, Op, Cfg, kMask>(s, st, pa, a, scale_log2, key0, warp_row0);
}

// Main loop without QK pipelining: per tile, QK, softmax, PV. One buffer: FA2's split waits
// (K(j+1) loads during softmax and PV(j), V(j+1) during QK(j+1)); kKvBuffers >= 2: tile
// j + kKvBuffers - 1 loads during all of tile j.
template <class Policy, class Cfg, class Op, class Cta, class Q, class Regs>
__device__ __forceinline__ void mainloop_serial(const Cta& c, const Q& q, RowState<Cfg>& st, Regs& regs, int warp_row0) {
  constexpr int kStages = Policy::kKvBuffers;
  for (int j = 0; j < c.n_tiles; ++j) {
    if constexpr (kStages == 1) {
      c.template wait_copies<1>(j);  // K(j) has landed; V(j) may be in flight
    } else {
      c.template wait_copies<kStages - 2>(j + kStages - 2);  // tile j has landed for all threads; tile j - 1's buffer is free
      c.produce_k(j + kStages - 1);
      c.produce_v(j + kStages - 1);
      gpu::async_commit();
    }
    float s[Cfg::kMTiles][Tile<Cfg>::kSTiles][4];
    compute_qk<Policy, Cfg, Op>(s, q, c.k_tile(j), c.v_tile(j), regs);
    if constexpr (Policy::kFault == PrefillFault::drop_tile) c.drop_if_hit(s, j);
    if constexpr (kStages == 1) {
      c.wait_warps();  // every warp is done reading K(j)
      c.produce_k(j + 1);
      gpu::async_commit();
    }
    std::uint32_t pa[Cfg::kMTiles][Cfg::kPvSteps][Tile<Cfg>::kPWords];
    if (c.masked(j)) softmax_tiles<Cfg, Op, true>(s, st, pa, c.a, c.scale_log2, j * Cfg::kBlockN, warp_row0);
    else softmax_tiles<Cfg, Op, false>(s, st, pa, c.a, c.scale_log2, j * Cfg::kBlockN, warp_row0);
    if constexpr (kStages == 1) {
      c.template wait_copies<1>(j + 1);  // V(j) has landed; K(j + 1) may be in flight
    }
    compute_pv<Cfg, Op>(st, pa, c.v_tile(j), regs, Cfg::kPrefetchV);
    if constexpr (kStages == 1) {
      c.wait_warps();  // every warp is done reading V(j)
      c.produce_v(j + 1);
      gpu::async_commit();
    }
  }
}

// Main loop with QK pipelining (FA3 section 3.2, on mma.sync): S(j + 1) = Q K(j+1)^T is
// issued before the softmax of tile j, so the matrix ops of one overlap the exp2 and max of
// the other inside each warp. Tiles j and j + 1 are read while j + kKvBuffers - 1 loads:
// three buffers at least. Each step is one straight-line block (mask and next tile are
// template arguments) so the compiler can interleave the two.
template <class Policy, class Cfg, class Op, class Cta, class Q, class Regs>
__device__ __forceinline__ void mainloop_pipelined(const Cta& c, const Q& q, RowState<Cfg>& st, Regs& regs,
                                                   int warp_row0) {
  constexpr int kStages = Policy::kKvBuffers;
  static_assert(kStages >= 3, "QK pipelining reads two tiles while a third loads");
  static_assert(Policy::kFault == PrefillFault::none || Policy::kFault == PrefillFault::skip_mask,
                "tile faults are injected in the serial main loop");
  float s[Cfg::kMTiles][Tile<Cfg>::kSTiles][4];
  c.template wait_copies<kStages - 2>(kStages - 2);  // tile 0 has landed
  compute_qk<Policy, Cfg, Op>(s, q, c.k_tile(0), c.v_tile(0), regs);
  auto step = [&]<bool kMask, bool kNext>(int j) {
    float s_next[Cfg::kMTiles][Tile<Cfg>::kSTiles][4];
    if constexpr (kNext) {
      c.template wait_copies<kStages - 3>(j + kStages - 2);  // tile j + 1 has landed; tile j - 1's buffer is free
      c.produce_k(j + kStages - 1);
      c.produce_v(j + kStages - 1);
      gpu::async_commit();
      compute_qk<Policy, Cfg, Op>(s_next, q, c.k_tile(j + 1), c.v_tile(j), regs);
    }
    std::uint32_t pa[Cfg::kMTiles][Cfg::kPvSteps][Tile<Cfg>::kPWords];
    softmax_tiles<Cfg, Op, kMask>(s, st, pa, c.a, c.scale_log2, j * Cfg::kBlockN, warp_row0);
    compute_pv<Cfg, Op>(st, pa, c.v_tile(j), regs, Cfg::kPrefetchV && kNext);
    if constexpr (kNext) {
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt)
#pragma unroll
        for (int n = 0; n < Tile<Cfg>::kSTiles; ++n)
#pragma unroll
          for (int i = 0; i < 4; ++i) s[mt][n][i] = s_next[mt][n][i];
    }
  };
  for (int j = 0; j < c.n_tiles; ++j) {
    const bool next = j + 1 < c.n_tiles;
    if (c.masked(j)) {
      if (next) step.template operator()<true, true>(j);
      else step.template operator()<true, false>(j);
    } else {
      if (next) step.template operator()<false, true>(j);
      else step.template operator()<false, false>(j);
    }
  }
}

// The two groups of the 8-wave ping-pong: waves 0..3 lead, waves 4..7 run one phase behind.
enum class WaveGroupRole { Leading, Lagging };

// Main loop of the 8-wave ping-pong (WaveSchedule::ping_pong_8wave; HipKittens, Hu et al.
// 2025, arXiv 2511.08083). Four phases per tile, each ended by a barrier of all eight waves:
//   memory: copies of K(j+1) | matrix: QK(j) | memory: softmax(j), copies of V(j+1) | matrix: PV(j)
// Group 1 (waves 4..7) passes one barrier more before the loop, so every barrier ends a
// matrix phase of one group and a memory phase of the other, and the groups alternate on
// each SIMD; group 0 passes one more after the loop, so the counts meet. Group 1 runs one
// phase behind: a wave of group 0 in phase p knows only that group 1 has finished phase
// p - 2. Hence two buffers, each tile's K and V copied in different phases (a buffer is
// overwritten three phases after its last read), and each wave waits for its own copies of a
// K or V tile at the end of the phase two before the tile is read.
template <class Policy, class Cfg, class Op, class Cta, class Q, class Regs>
__device__ __forceinline__ void mainloop_ping_pong(const Cta& c, const Q& q, RowState<Cfg>& st, Regs& regs,
                                                   int warp_row0) {
  static_assert(Policy::kWarps == 8, "two groups of four waves: one wave of each group per SIMD");
  static_assert(Policy::kKvBuffers == 2 && !Policy::kPipelineQk, "two K/V buffers, one tile in flight");
  static_assert(Policy::kKvFragments == KvFragments::Union, "V may be read only in the PV phase");
  const WaveGroupRole role = gpu::warp_group_id() == 1 ? WaveGroupRole::Lagging : WaveGroupRole::Leading;
  gpu::async_wait<0>();  // K(0) and V(0) have landed (this wave's copies) ...
  if (role == WaveGroupRole::Lagging) gpu::block_sync_shared_divergent();  // ... group 1 starts one phase late
  for (int j = 0; j < c.n_tiles; ++j) {
    const bool next = j + 1 < c.n_tiles;
    c.produce_k(j + 1);  // into K(j - 1)'s buffer
    gpu::async_commit();
    c.hand_over();  // memory -> matrix
    float s[Cfg::kMTiles][Tile<Cfg>::kSTiles][4];
    gpu::set_priority<1>();
    compute_qk<Policy, Cfg, Op>(s, q, c.k_tile(j), c.v_tile(j), regs);
    gpu::set_priority<0>();
    if constexpr (Policy::kFault == PrefillFault::drop_tile) c.drop_if_hit(s, j);
    c.template hand_over<1>(next);  // matrix -> memory; V(j) has landed, K(j + 1) may be in flight
    std::uint32_t pa[Cfg::kMTiles][Cfg::kPvSteps][Tile<Cfg>::kPWords];
    if (c.masked(j)) softmax_tiles<Cfg, Op, true>(s, st, pa, c.a, c.scale_log2, j * Cfg::kBlockN, warp_row0);
    else softmax_tiles<Cfg, Op, false>(s, st, pa, c.a, c.scale_log2, j * Cfg::kBlockN, warp_row0);
    c.produce_v(j + 1);  // into V(j - 1)'s buffer
    gpu::async_commit();
    c.hand_over();  // memory -> matrix
    gpu::set_priority<1>();
    compute_pv<Cfg, Op>(st, pa, c.v_tile(j), regs, false);
    gpu::set_priority<0>();
    c.template hand_over<1>(next);  // matrix -> memory; K(j + 1) has landed, V(j + 1) may be in flight
  }
  if (role == WaveGroupRole::Leading) gpu::block_sync_shared_divergent();  // group 1's last barrier
}

template <class Policy, DType kT, int kHeadDim, class Dyn>
__global__ void __launch_bounds__(kThreadsOf<Policy>, 1) flash_prefill_kernel(Params a) {
  using Cfg = Config<Policy, kHeadDim, kT>;
  using Op = Operand<kT>;
  static_assert(Dyn::kBytes == kSmemBytesOf<Cfg>, "launch and kernel disagree on shared memory");
  extern __shared__ __align__(128) unsigned char smem[];
  const Cta<Policy, kHeadDim, kT> c(a, *reinterpret_cast<SharedStorage<Cfg>*>(smem), CtaTiles::tile());

  // Prologue: Q, then the first K/V tiles in flight (groups: Q, K0, V0 with one buffer;
  // Q, T0, ..., T(kKvBuffers - 2) with more).
  c.produce_q();
  gpu::async_commit();
  if constexpr (Policy::kKvBuffers == 1) {
    c.produce_k(0);
    gpu::async_commit();
    c.produce_v(0);
    gpu::async_commit();
    gpu::async_wait_groups<2, Cta<Policy, kHeadDim, kT>::kCopiesPerGroup>(0 < c.n_tiles);  // Q has landed
  } else {
#pragma unroll
    for (int t = 0; t < Policy::kKvBuffers - 1; ++t) {
      c.produce_k(t);
      c.produce_v(t);
      gpu::async_commit();
    }
    gpu::async_wait_groups<Policy::kKvBuffers - 1, Cta<Policy, kHeadDim, kT>::kCopiesPerGroup>(
        Policy::kKvBuffers - 2 < c.n_tiles);  // Q has landed
  }
  gpu::block_sync();  // ... for every thread's copies
  const QFrags<Cfg, Policy::kQInRegisters> q(c.q_tile());

  RowState<Cfg> st;
  KvRegs<Cfg, Policy::kKvFragments> regs;
  const int warp_row0 = c.q_row0 + gpu::warp_id() * Policy::kWarpRows;
  if constexpr (Policy::kWaveSchedule == WaveSchedule::ping_pong_8wave) {
    mainloop_ping_pong<Policy, Cfg, Op>(c, q, st, regs, warp_row0);
  } else if constexpr (Policy::kPipelineQk) {
    if (c.n_tiles > 0) mainloop_pipelined<Policy, Cfg, Op>(c, q, st, regs, warp_row0);
  } else {
    mainloop_serial<Policy, Cfg, Op>(c, q, st, regs, warp_row0);
  }
  gpu::async_wait<0>();  // nothing left in flight at exit
  attention::write_o<Tile<Cfg>, Op>(st, a.o + c.q_off, a.q_len - c.q_row0, c.o_scale, std::int64_t(a.q_heads) * kHeadDim,
                                    gpu::warp_id() * Policy::kWarpRows);
  c.probe.flush(a.probe_slots);
}

template <class Policy, DType kT, int kHeadDim, gpu::GpuArch kArch>
void launch_for(const PrefillArgs& args, gpu::api::stream_t stream) {
  using Cfg = Config<Policy, kHeadDim, kT>;
  const PrefillProblem& p = args.problem;
  Params a{static_cast<const unsigned char*>(args.q), static_cast<const unsigned char*>(args.k),
           static_cast<const unsigned char*>(args.v), static_cast<std::uint16_t*>(args.o),
           p.q_len, p.kv_len, p.q_heads, p.kv_heads, p.causal, p.scale() * kLog2e,
           args.q_scale, args.k_scale, args.v_scale, args.probe_slots};
  constexpr int kSmemBytes = kSmemBytesOf<Cfg>;
  static_assert(kSmemBytes == prefill_smem_bytes<Policy>(kHeadDim, kT) && kSmemBytes <= gpu::smem_per_block(kArch),
                "shared storage: as the policy layer counts it, within the architecture's per-block limit");
  auto kernel = flash_prefill_kernel<Policy, kT, kHeadDim, gpu::DynamicSmem<kSmemBytes>>;
  static const bool smem_raised = (gpu::set_max_dynamic_smem(kernel, kSmemBytes), true);  // once per kernel
  (void)smem_raised;
  // One CTA per (query block, head, sequence); longest causal rows first within each head.
  const attention::TileGrid tiles{(p.q_len + Cfg::kBlockM - 1) / Cfg::kBlockM, p.q_heads, p.batch, /*longest_first=*/true};
  gpu::launch("flash_prefill", kernel,
              gpu::LaunchConfig{CtaTiles::grid(tiles, 0), dim3(Cfg::kThreads), kSmemBytes, stream}, a);
}

// The instantiation the plan chose for this device's architecture, among those the build
// holds (gpu::kBuildArchs): Policy's own where it fits, PrefillPolicyFor<Policy, arch> where
// only the cut one does (prefill_policy_on).
template <class Policy, DType kT, int kHeadDim, std::size_t kIndex = 0>
void launch_on_arch(const PrefillPlan& plan, const PrefillArgs& args, gpu::api::stream_t stream) {
  constexpr gpu::GpuArch kArch = gpu::kBuildArchs[kIndex];
  if (plan.arch == kArch) {
    using Launched = prefill_policy_on<Policy, kArch, kHeadDim, kT>;
    if constexpr (std::is_void_v<Launched>) {
      throw UnsupportedProblem("flash prefill: no instantiation fits " + std::string(gpu::arch_name(kArch)));
    } else {
      launch_for<Launched, kT, kHeadDim, kArch>(args, stream);
    }
  } else if constexpr (kIndex + 1 < std::size(gpu::kBuildArchs)) {
    launch_on_arch<Policy, kT, kHeadDim, kIndex + 1>(plan, args, stream);
  } else {
    throw UnsupportedProblem("flash prefill: this build holds no code for " + std::string(gpu::arch_name(plan.arch)));
  }
}

}  // namespace schedlab::kernels::prefill_detail

namespace schedlab::kernels {

template <class Policy>
void launch_flash_prefill(const PrefillArgs& args, gpu::api::stream_t stream) {
  using namespace prefill_detail;
  const PrefillProblem& p = args.problem;
  require_support(p, flash_prefill_support());
  const PrefillPlan plan = plan_prefill_on_device<Policy>(p);
  auto by_dim = [&]<DType kT>() {
    if (p.head_dim == 64) launch_on_arch<Policy, kT, 64>(plan, args, stream);
    else launch_on_arch<Policy, kT, 128>(plan, args, stream);
  };
  if (p.dtype == DType::bf16) by_dim.template operator()<DType::bf16>();
  else if (p.dtype == DType::f16) by_dim.template operator()<DType::f16>();
  else {
    if (!args.q_scale || !args.k_scale || !args.v_scale)
      throw std::invalid_argument("flash prefill: fp8 inputs need q/k/v dequantization scales");
    by_dim.template operator()<DType::fp8_e4m3>();
  }
}

}  // namespace schedlab::kernels
