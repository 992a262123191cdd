// Forward attention on Hopper in FlashAttention-3's structure (Shah et al. 2024, arXiv
// 2407.08608, sections 3.1-3.2). A CTA owns 128 query rows of one (head, batch): two
// consumer warpgroups of 64 rows each and, warp-specialized, one producer warpgroup. The
// producer brings Q and the K/V tiles into a shared-memory ring with bulk tensor copies
// (128-byte-swizzled 64-column boxes, zero-filled past the end of a sequence); each consumer
// computes S = Q K^T with wgmma from shared memory, the online softmax in registers, and
// O += P V with P from registers and V from shared memory (transposed operand), then writes
// O / l. Every scheduling choice is a Policy member (hopper_policy.hpp): warp specialization
// and register reallocation, ping-pong between the consumers, the intra-warpgroup overlap of
// the two GEMMs with the softmax, the tile schedule, the ring depth.
//
// fp8 e4m3 (head dim 128) runs through the same body: 8-bit wgmma (k32) takes both shared
// operands K-major, so the producer's warps 1-3 transpose each landed V tile into a second
// ring (transpose_v_matrix) before the consumers' O += P V; the per-head
// scales fold into the softmax scale and O's 1 / l; O is written in bf16.
#pragma once
#include "kernels/hopper_prefill/hopper_output.cuh"
#include "kernels/hopper_prefill/hopper_producer.cuh"
#include "kernels/hopper_prefill/hopper_split.cuh"
#include "kernels/hopper_prefill/hopper_turns.cuh"

namespace schedlab::kernels::hopper_detail {

// What a warpgroup does (the roles of CUTLASS's ping-pong kernel): with warp specialization,
// warpgroup 0 is the producer (the copies, and fp8's V transpose) and the others are the
// consumers; without it, every warpgroup is a consumer.
enum class WarpGroupRole { Producer, Consumer };
template <class Cfg>
__device__ __forceinline__ WarpGroupRole role_of(int group) {
  return Cfg::kProducers > 0 && group == 0 ? WarpGroupRole::Producer : WarpGroupRole::Consumer;
}

// A warp's online-softmax rows and its O accumulators (kernels/attention/online_softmax.hpp).
template <class Cfg>
using RowState = attention::RowState<typename Cfg::Rows, 1>;

// STAGE 1: QK gemm, S (64 x kBlockN) = Q K^T, kQkSteps wgmma from shared memory, one group (a
// k step is 32 bytes of a row whatever the dtype). Cfg may be a NarrowTile: S of the K tile's
// first kBlockN keys.
//
// Each operand's descriptor is built once and advanced by each step's constant offset
// (wgmma::advance, one 64-bit uniform add): built anew before every wgmma, a descriptor cost
// five uniform-datapath instructions (add, mask, shift, or, the high word). Fewer instructions
// a key tile, the same time on the H200 (kernels/hopper_prefill/LOG.md, "Instruction issue at
// head dim 64").
template <class Cfg, class Op>
__device__ __forceinline__ void issue_qk(float (&s)[Cfg::kSRegs], const unsigned char* q_rows, const unsigned char* k) {
  const std::uint64_t a0 = wgmma::descriptor(q_rows, 16, kAtomBytes);
  const std::uint64_t b0 = wgmma::descriptor(k, 16, kAtomBytes);
  wgmma::fence();
#pragma unroll
  for (int kk = 0; kk < Cfg::kQkSteps; ++kk) {
    const int col = kk / kStepsPerRow, in_row = (kk % kStepsPerRow) * kStepBytes;  // 128-byte box, step's offset
    wgmma::mma_ss<Cfg::kBlockN, Op>(s, wgmma::advance(a0, col * Cfg::kBlockM * kRowBytes + in_row),
                          wgmma::advance(b0, col * Cfg::kKvRows * kRowBytes + in_row), kk > 0);
  }
  wgmma::commit();
}

// STAGE 3: PV gemm, O (64 x head_dim) += P V: P from registers, V (keys x head_dim, stored
// key-major) from shared memory as the transposed operand; fp8: V^T (head_dim x keys), K-major
// like K. One group.
template <class Cfg, class Op>
__device__ __forceinline__ void issue_pv(float (&o)[Cfg::kORegs], const std::uint32_t (&p)[Cfg::kPvSteps][4],
                                         const unsigned char* v) {
  // One descriptor, advanced per step (issue_qk says why).
  const std::uint64_t b0 = Cfg::kFp8 ? wgmma::descriptor(v, 16, kAtomBytes)
                                     : wgmma::descriptor(v, Cfg::kKvRows * kRowBytes, kAtomBytes);
  wgmma::fence_operands(o);
  wgmma::fence();
#pragma unroll
  for (int kk = 0; kk < Cfg::kPvSteps; ++kk) {
    const int offset = Cfg::kFp8 ? kk / kStepsPerRow * Cfg::kHeadDim * kRowBytes + kk % kStepsPerRow * kStepBytes
                                 : kk * 16 * kRowBytes;
    wgmma::mma_rs<Cfg::kHeadDim, Op>(o, p[kk], wgmma::advance(b0, offset), true);
  }
  wgmma::commit();
}

// S (m64 x kBlockN per warpgroup, kSRegs per thread) as the warp's n8 C tiles of the shared
// online softmax: the wgmma D layout per 8-column block is the m16n8 C layout.
template <class Cfg>
__device__ __forceinline__ float (&s_tiles(float (&s)[Cfg::kSRegs]))[Cfg::kSRegs / 4][4] {
  return reinterpret_cast<float(&)[Cfg::kSRegs / 4][4]>(s);
}

// P as the A operand of the PV wgmma. 16-bit: the D layout of S, k16 step kk, is already the
// A-fragment layout (registers (g, 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8)), packed
// as in the register-tile family. fp8, k32 step kk: register r of half h (2h + r) holds row
// g + 8r, logical keys 16h + 4t..16h + 4t + 3, which are the accumulators' keys 16h + {2t,
// 2t + 1, 8 + 2t, 9 + 2t} (the order transpose_v writes V^T in), quantized to e4m3 with a
// scale of 1.
template <class Cfg, class Op>
__device__ __forceinline__ void pack_p(std::uint32_t (&p)[Cfg::kPvSteps][4], float (&s)[Cfg::kSRegs]) {
  if constexpr (Cfg::kFp8) {
#pragma unroll
    for (int kk = 0; kk < Cfg::kPvSteps; ++kk)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const float* x = s + 16 * kk + 8 * (i >> 1) + 2 * (i & 1);
        p[kk][i] = gpu::attn::fp8_detail::pack4_e4m3(x[0], x[1], x[4], x[5]);
      }
  } else {
    Cfg::Rows::template pack_p<Op>(p, s_tiles<Cfg>(s));
  }
}

// Which softmax a key tile takes: by a test of the warp's mask bound, or known to the loop.
enum class MaskTest { per_tile, open, masked };

// One consumer warpgroup's view of the tile: its rows, masks, and the stages it reads.
template <class Policy, class Cfg, class Op, class Out>
struct Consumer {
  const Params& a;
  SharedStorage<Cfg>& s;
  Loader<Cfg> loader;  // used by the thread that issues copies without a producer warpgroup
  bool issues_copies;
  TurnOrder<Policy::kPingPong, Cfg::kConsumers> turn;
  int consumer;
  PipelineState<Cfg::kStages> k_state;
  PipelineState<Cfg::kPvStages> v_state;
  TileScales scales{};
  int mask_end = 0;  // the tile's unmasked_end, for this warp (or its warpgroup: run_tile)

  // The ring O += P V reads: V as copied, or fp8's V^T.
  __device__ auto& v_ring() const {
    if constexpr (Cfg::kFp8) return s.vt_pipe;
    else return s.v_pipe;
  }
  __device__ const unsigned char* v_tile() const {
    if constexpr (Cfg::kFp8) return s.vt[v_state.index()];
    else return s.v(v_state.index());
  }

  // Q is free once the warpgroup's last QK of the tile (key tile n - 1) is complete: a
  // persistent producer loads the next tile's Q while this one finishes its last softmax, PV
  // and output.
  __device__ void release_q_after(int j, int n) const {
    if (j == n - 1 && gpu::lane_id() == 0) gpu::mbarrier_arrive(&s.q_empty);
  }
  // A warp's lane 0 frees a stage once the warp's wgmma reads of it are complete; without a
  // producer warpgroup the issuing thread then refills it with tile j + kStages.
  // `after`: a test the K free waits for (always true: pv_wait_behind_exp's bit test).
  template <bool kIsK>
  __device__ void release(const TileWork<Cfg>& w, int j, bool after = true) {
    if constexpr (kIsK) {
      if (gpu::lane_id() == 0 && after) s.k_pipe.consumer_release(k_state);
      ++k_state;
    } else {
      if (gpu::lane_id() == 0) v_ring().consumer_release(v_state);
      ++v_state;
    }
    if (issues_copies && j + Cfg::kStages < w.n_tiles) loader.template load_kv<kIsK>(w, j + Cfg::kStages);
    gpu::warp_sync();
  }
  // What the masks read (kv_len, q_len): the problem's, in kernel-parameter space, or a ragged
  // tile's sequence's.
  __device__ decltype(auto) lens(const TileWork<Cfg>& w) const {
    if constexpr (Cfg::kRagged && Cfg::kFault != HopperFault::ragged_longest_lens) return (w.lens);
    else return (a);
  }
  // The end of the keys the warp's first row sees (the first visible key of that row bounds the
  // unmasked tiles): tile j is masked when (j + 1) * kBlockN > it. Taken once a tile, before the
  // key-tile loop: evaluated in the loop, ptxas loaded the lengths from the parameters again each
  // key tile and computed the bound between the matrix ops' issues, inside the ping-pong turn.
  // (As a tile index, by a signed division behind a test, it cost the persistent loops their
  // uniform wgmma descriptors, as own_tiles says.)
  __device__ int unmasked_end(const TileWork<Cfg>& w, int row0) const {
    const auto& n = lens(w);
    return Cfg::kCausal ? min(n.kv_len, row0 + n.kv_len - n.q_len + 1) : n.kv_len;
  }
  // STAGE 2: the online softmax of S(j) in place (S becomes P; corr: the factor O is to be
  // rescaled by), from the warp's first query row row0; then `then()` inside each of the mask's
  // two branches, in the exponentials' basic block (placed after the branches merge, ptxas
  // kept P's packing there, in one run, rather than among the exponentials). kMask: the tile's
  // mask tested here against the warp's bound, or known to the caller's loop (mask_loops).
  // T: Cfg, or the NarrowTile of the last key tile (S of its first T::kBlockN keys).
  template <MaskTest kMask = MaskTest::per_tile, class T = Cfg, class Then>
  __device__ void softmax(float (&sc)[T::kSRegs], RowState<Cfg>& st, float (&corr)[1][2], const TileWork<Cfg>& w,
                          int j, int row0, Then then) const {
    if constexpr (kMask == MaskTest::per_tile) {
      if ((j + 1) * Cfg::kBlockN > mask_end) softmax<MaskTest::masked, T>(sc, st, corr, w, j, row0, then);
      else softmax<MaskTest::open, T>(sc, st, corr, w, j, row0, then);
    } else {
      attention::softmax_rows<typename T::Rows, T, kMask == MaskTest::masked>(
          s_tiles<T>(sc), st.m[0], st.l[0], corr[0], lens(w), scales.qk_log2, j * Cfg::kBlockN, row0,
          ExpMeet<Cfg::kExpMeet>{consumer, -float(lens(w).kv_len), meet_word()});
      then();
    }
  }
  __device__ void softmax(float (&sc)[Cfg::kSRegs], RowState<Cfg>& st, float (&corr)[1][2], const TileWork<Cfg>& w,
                          int j, int row0) const {
    softmax(sc, st, corr, w, j, row0, [] {});
  }
  // The staging rows of this consumer's warp warp_in_group (Config::kStagedOutput).
  __device__ unsigned char* stage_rows(int warp_in_group) const {
    return s.o_stage.rows[consumer * (kWarpGroupThreads / kWarpSize) + warp_in_group];
  }
  // The first word of the warp's own staging rows (ExpMeet's tie; nullptr where there are none).
  __device__ const unsigned char* meet_word() const {
    if constexpr (Cfg::kExpMeet) return stage_rows(gpu::warp_id() % 4);
    else return nullptr;
  }
  // O *= corr (thresholded: skipped unless some row of the warp moved its max).
  __device__ void rescale_o(RowState<Cfg>& st, const float (&corr)[1][2]) const {
    attention::rescale_o<typename Cfg::Rows, Cfg>(st, corr);
  }
  // O, a warp's accumulators as the wgmma operand (the m16n8 C tiles of RowState, flattened).
  static __device__ float (&o_regs(RowState<Cfg>& st))[Cfg::kORegs] {
    return reinterpret_cast<float(&)[Cfg::kORegs]>(st.o[0]);
  }
  __device__ const unsigned char* q_rows() const { return s.q + consumer * Cfg::kWgRows * kRowBytes; }

  // STAGE 1 on its own: S(j) = Q K(j)^T issued in this consumer's turn and waited for; K(j)
  // (and Q, after the last of the n key tiles it computes) released.
  // T: Cfg, or the NarrowTile of the last key tile.
  template <class T = Cfg>
  __device__ void qk_waited(float (&sc)[T::kSRegs], const TileWork<Cfg>& w, int j, int n) {
    s.k_pipe.consumer_wait(k_state);
    turn.begin();
    issue_qk<T, Op>(sc, q_rows(), s.k(k_state.index()));
    turn.end();
    wgmma::wait<0>();
    wgmma::fence_operands(sc);
    release<true>(w, j);
    release_q_after(j, n);
  }
  // STAGE 3 on its own: O += P V(j) issued in this consumer's turn and waited for; V(j) released.
  template <class T = Cfg>
  __device__ void pv_waited(float (&o)[Cfg::kORegs], const std::uint32_t (&p)[T::kPvSteps][4],
                            const TileWork<Cfg>& w, int j) {
    v_ring().consumer_wait(v_state);
    turn.begin();
    issue_pv<T, Op>(o, p, v_tile());
    turn.end();
    wgmma::wait<0>();
    wgmma::fence_operands(o);
    release<false>(w, j);
  }

  // Per key tile first <= j < n (first: a split unit's first key tile, else 0): QK, softmax, PV,
  // each GEMM waited for before the next step; with Config::kNarrowLast the last one after the
  // loop, as wide as the warpgroup's rows see (last_tile).
  __device__ void mainloop_serial(const TileWork<Cfg>& w, RowState<Cfg>& st, int row0, int first, int n) {
    for (int j = first; j < (Cfg::kNarrowLast ? n - 1 : n); ++j) {
      float sc[Cfg::kSRegs], corr[1][2];
      qk_waited(sc, w, j, n);
      std::uint32_t p[Cfg::kPvSteps][4];
      if constexpr (Cfg::kMeetPackInBlock) {
        softmax(sc, st, corr, w, j, row0, [&] { pack_p<Cfg, Op>(p, sc); });
        rescale_o(st, corr);
      } else {
        softmax(sc, st, corr, w, j, row0);
        rescale_o(st, corr);
        pack_p<Cfg, Op>(p, sc);
      }
      pv_waited(o_regs(st), p, w, j);
    }
    if constexpr (Cfg::kNarrowLast) last_tile(w, st, row0, n);
  }

  // Key tile n - 1 under the mask (the loop's last): its keys past the warpgroup's last row's last
  // visible key are masked for every row of the warpgroup, so it runs as NarrowTile<Cfg, kN>,
  // kN the keys its rows see rounded up to kNarrowStep: fewer GEMM columns, exponentials and PV
  // steps. Its one meeting of the exponentials is the loop's (ExpMeet pairs the consumers' key
  // tiles in turn, whatever their width). Warpgroup-uniform (mask_end is the warpgroup's).
  __device__ void last_tile(const TileWork<Cfg>& w, RowState<Cfg>& st, int row0, int n) {
    last_tile_from<Cfg::kNarrowStep>(w, st, row0, n, last_tile_seen(w, n));
  }
  // The keys of key tile n - 1 the warpgroup's rows see.
  __device__ int last_tile_seen(const TileWork<Cfg>& w, int n) const {
    int seen = min(lens(w).kv_len, mask_end + Cfg::kWgRows - 1) - (n - 1) * Cfg::kBlockN;
    if constexpr (Cfg::kFault == HopperFault::narrow_last_short) seen -= Cfg::kNarrowStep;
    return seen;
  }
  template <int kN>
  __device__ void last_tile_from(const TileWork<Cfg>& w, RowState<Cfg>& st, int row0, int n, int seen) {
    if constexpr (kN < Cfg::kBlockN) {
      if (seen > kN) return last_tile_from<kN + Cfg::kNarrowStep>(w, st, row0, n, seen);
    }
    using T = NarrowTile<Cfg, kN>;
    const int j = n - 1;
    float sc[T::kSRegs], corr[1][2];
    qk_waited<T>(sc, w, j, n);
    softmax<MaskTest::masked, T>(sc, st, corr, w, j, row0, [] {});
    std::uint32_t p[T::kPvSteps][4];
    pack_p<T, Op>(p, sc);
    rescale_o(st, corr);
    pv_waited<T>(o_regs(st), p, w, j);
  }

  // P in the A-operand layout of O += P V (pack_p).
  using PFrag = std::uint32_t[Cfg::kPvSteps][4];

  // The overlapped loop's last key tile n - 1 as NarrowTile<Cfg, kNarrowStep> (Config::kNarrowLast,
  // where the warpgroup's rows see no more of it): S(n - 1) from the narrow GEMM issued with O +=
  // P(n - 2) V(n - 2), then its own narrow PV. Wider, it runs in the loop: with a second, whole
  // copy of the tile after the loop, ptxas compiled the loop's exponentials apart from P's packs.
  __device__ void narrow_last_tile_overlapped(const TileWork<Cfg>& w, RowState<Cfg>& st, const PFrag& p_prev,
                                              int row0, int n) {
    using T = NarrowTile<Cfg, Cfg::kNarrowStep>;
    float sc[T::kSRegs];
    std::uint32_t p[T::kPvSteps][4];
    overlapped_tile<true, MaskTest::masked, T>(w, st, sc, p_prev, p, n - 1, row0, n);
    pv_waited<T>(o_regs(st), p, w, n - 1);
  }

  // O += P(j - 1) V(j - 1) complete (P(j - 1)'s registers free); V(j - 1) freed.
  __device__ void finish_pv(RowState<Cfg>& st, const TileWork<Cfg>& w, int j) {
    wgmma::wait<0>();
    wgmma::fence_operands(o_regs(st));
    release<false>(w, j - 1);
  }

  // Key tile 0 < j < n of FA3's Algorithm 2: S(j) = Q K(j)^T and O += P(j-1) V(j-1) issued
  // together; the softmax of S(j) runs while the PV GEMM does, and O is rescaled once that GEMM
  // is done. P(j) goes to p_next: with one buffer (p_next is p_prev) only after PV(j-1) has read
  // p_prev, after the softmax or inside its block (kWaitInBlock: pv_wait_from_keys); with two,
  // among the softmax's exponentials (HopperTile::p_buffers).
  // T: Cfg, or the NarrowTile of the last key tile (S(j) and P(j) of its width).
  template <bool kWaitInBlock = Cfg::kPvWaitInSoftmax, MaskTest kMask = MaskTest::per_tile, class T = Cfg>
  __device__ void overlapped_tile(const TileWork<Cfg>& w, RowState<Cfg>& st, float (&sc)[T::kSRegs],
                                  const PFrag& p_prev, std::uint32_t (&p_next)[T::kPvSteps][4], int j, int row0,
                                  int n) {
    float corr[1][2];
    s.k_pipe.consumer_wait(k_state);
    v_ring().consumer_wait(v_state);
    turn.begin();
    issue_qk<T, Op>(sc, q_rows(), s.k(k_state.index()));
    issue_pv<Cfg, Op>(o_regs(st), p_prev, v_tile());
    turn.end();
    wgmma::wait<1>();  // S(j) is done; PV(j - 1) may still run (it reads p_prev)
    wgmma::fence_operands(sc);
    // K(j) (and Q) freed: here, or in the exponentials' block ahead of the PV wait, which ptxas
    // then keeps after the frees (it hoists the wait to the top of its block, before the row
    // maxima, where nothing with a side effect precedes it in the block).
    const auto free_k = [&] {
      // Always true (MUFU.EX2 gives no such NaN; ptxas folds a test of the sign or the range
      // of an exponential): it only orders the free after that exponential.
      // (A narrow S's last register where it has fewer.)
      constexpr int kBehind = Cfg::kPvWaitBehindExp < T::kSRegs ? Cfg::kPvWaitBehindExp : T::kSRegs - 1;
      if constexpr (kWaitInBlock && Cfg::kPvWaitBehindExp >= 0) release<true>(w, j, __float_as_uint(sc[kBehind]) != 0xffffffffu);
      else release<true>(w, j);
      release_q_after(j, n);
    };
    if constexpr (!kWaitInBlock) free_k();
    if constexpr (Cfg::kPBuffers == 2) {
      softmax<kMask, T>(sc, st, corr, w, j, row0, [&] { pack_p<T, Op>(p_next, sc); });
    } else if constexpr (kWaitInBlock) {
      softmax<kMask, T>(sc, st, corr, w, j, row0, [&] {
        free_k();
        finish_pv(st, w, j);
        pack_p<T, Op>(p_next, sc);
      });
    } else {
      softmax<kMask, T>(sc, st, corr, w, j, row0, [] {});
    }
    if constexpr (!kWaitInBlock) finish_pv(st, w, j);
    rescale_o(st, corr);
    if constexpr (Cfg::kPBuffers == 1 && !kWaitInBlock) pack_p<T, Op>(p_next, sc);
  }

  // FA3 Algorithm 2 over key tiles first <= j < n (overlapped_tile), P in one register buffer or two.
  __device__ void mainloop_overlapped(const TileWork<Cfg>& w, RowState<Cfg>& st, int row0, int first, int n) {
    float sc[Cfg::kSRegs], corr[1][2];
    PFrag p[Cfg::kPBuffers];
    qk_waited(sc, w, first, n);
    softmax(sc, st, corr, w, first, row0);  // O is still zero: nothing to rescale
    pack_p<Cfg, Op>(p[0], sc);
    int j = first + 1;
    if constexpr (Cfg::kPBuffers == 2) {
      for (; j + 1 < n; j += 2) {
        overlapped_tile(w, st, sc, p[0], p[1], j, row0, n);
        overlapped_tile(w, st, sc, p[1], p[0], j + 1, row0, n);
      }
      if (j < n) {
        overlapped_tile(w, st, sc, p[0], p[1], j, row0, n);
        return pv_waited(o_regs(st), p[1], w, n - 1);
      }
    } else if constexpr (Cfg::kNarrowLast) {
      // The last key tile narrow after the loop where it follows another (a tile of one key
      // tile keeps it whole).
      const bool narrow = j < n && last_tile_seen(w, n) <= Cfg::kNarrowStep;
      overlapped_tiles<true>(w, st, sc, p[0], j, row0, n, narrow ? n - 1 : n);
      if (narrow) return narrow_last_tile_overlapped(w, st, p[0], row0, n);
    } else if constexpr (Cfg::kPvWaitFromKeys > 0) {
      // Two loops: the wait in the block only where the warpgroup's rows see enough keys.
      if (n * Cfg::kBlockN >= Cfg::kPvWaitFromKeys) overlapped_tiles<true>(w, st, sc, p[0], j, row0, n, n);
      else overlapped_tiles<false>(w, st, sc, p[0], j, row0, n, n);
    } else {
      overlapped_tiles<Cfg::kPvWaitInSoftmax>(w, st, sc, p[0], j, row0, n, n);
    }
    pv_waited(o_regs(st), p[0], w, n - 1);
  }
  // Key tiles j to end - 1 on one P buffer (end: n, or n - 1 where the last runs narrow). With
  // Policy::mask_loops, the tiles no row of the warp needs masked first, in a loop of their own,
  // then the rest: each loop holds one softmax and no test of the mask's bound; otherwise one
  // loop tests it every tile.
  template <bool kWaitInBlock>
  __device__ void overlapped_tiles(const TileWork<Cfg>& w, RowState<Cfg>& st, float (&sc)[Cfg::kSRegs], PFrag& p,
                                   int j, int row0, int n, int end) {
    if constexpr (Cfg::kMaskLoops) {
      static_assert(Cfg::kPvWaitInSoftmax, "the loops' bound must be the warpgroup's: its four warps issue one wgmma");
      // Tile j is open while (j + 1) * kBlockN <= mask_end. Unsigned, by a constant: a signed
      // division cost the persistent loops their uniform descriptors (unmasked_end says so).
      const int open_end = min(end, int(unsigned(max(mask_end, 0)) / unsigned(Cfg::kBlockN)));
      for (; j < open_end; ++j) overlapped_tile<kWaitInBlock, MaskTest::open>(w, st, sc, p, p, j, row0, n);
      for (; j < end; ++j) overlapped_tile<kWaitInBlock, MaskTest::masked>(w, st, sc, p, p, j, row0, n);
    } else {
      for (; j < end; ++j) overlapped_tile<kWaitInBlock>(w, st, sc, p, p, j, row0, n);
    }
  }

  // The key tiles this warpgroup's rows see, at most the tile's n_tiles (those of its lowest
  // row): under the causal mask the warpgroups of a CTA's first rows see fewer (at head dim
  // 64's 192 rows and 128 keys, one or two of the three miss the last key tile of every query
  // block), and a warpgroup whose rows are all past the sequence's end sees none. Written
  // without TileWork::tiles_seen_by's signed division and early return: with those, ptxas moved
  // the persistent loops' wgmma descriptors from uniform to vector registers (about 70
  // instructions more a key tile).
  __device__ int own_tiles(const TileWork<Cfg>& w) const {
    const auto& n = lens(w);
    const int first = w.q_row0 + consumer * Cfg::kWgRows;
    const int key_end = Cfg::kCausal ? min(n.kv_len, min(first + Cfg::kWgRows, n.q_len) + n.kv_len - n.q_len) : n.kv_len;
    return first < n.q_len && key_end > 0 ? min(w.n_tiles, int((unsigned(key_end) + Cfg::kBlockN - 1) / Cfg::kBlockN)) : 0;
  }
  // Key tiles n to the tile's last, which no row of this warpgroup sees: no GEMM and no softmax
  // (exp2 of a masked score adds nothing), but the turns a computed tile takes, so the other
  // consumers' turns still come in order. Each stage is freed once it has landed (freed before,
  // the arrival would count toward the stage's previous phase) and no later in the turn order
  // than a computed tile frees it: without a producer warpgroup, consumer 0's copying thread
  // waits in its own turn for every warp to free a stage, and a stage freed one turn late would
  // wait for that very turn. Overlapped, turn t issues QK(t) and PV(t - 1), and turn n (PV(n -
  // 1)) was this warpgroup's last own one; serial, turns 2t and 2t + 1 issue QK(t) and PV(t).
  // The warp waits as one (consumer_wait_warp): after a per-lane wait with no wgmma behind it,
  // ptxas took the persistent loops for divergent and moved the computed tiles' wgmma
  // descriptors from uniform to vector registers (about 70 instructions more a key tile).
  // (A split piece's tiles start at its first.)
  template <bool kPiece>
  __device__ void pass_tiles(const TileWork<Cfg>& w, int first, int n) {
    if constexpr (kPiece) n = max(n, first);
    for (int j = n; j < w.n_tiles; ++j) {
      s.k_pipe.consumer_wait_warp(k_state);
      if (!Policy::kIntraOverlap || j == first || j > n) pass_turn();
      release<true>(w, j);
      v_ring().consumer_wait_warp(v_state);
      if constexpr (!Policy::kIntraOverlap) pass_turn();
      release<false>(w, j);
    }
    if (Policy::kIntraOverlap && n < w.n_tiles) pass_turn();  // turn n_tiles, the last PV's
  }
  __device__ void pass_turn() const {
    turn.begin();
    turn.end();
  }

  // A tile, or a unit of the split walk (kPiece: key tiles [w.first, w.n_tiles), then the
  // pieces' meeting where the tile is split). With Config::kSplitWholeApart a whole tile runs the
  // body of a kernel without the split instead, from key tile 0 to a count taken from the
  // parameters: in one body the unit's first and end (computed by the walk, in vector registers)
  // and the meeting's state lived across the key-tile loop, and ptxas scheduled Fp8Meet's loop
  // otherwise, 1.7% to 3.1% slower where no tile was split (kernels/hopper_prefill/LOG.md, "The
  // last wave split by keys"); in a body of its own the loop compiles as without the split.
  __device__ void run_tile(const TileWork<Cfg>& w, unsigned& q_parity) {
    if constexpr (Cfg::kSplitTail) {
      if (!Cfg::kSplitWholeApart || w.split_at >= 0) return run_unit<true>(w, q_parity);
    }
    run_unit<false>(w, q_parity);
  }
  template <bool kPiece>
  __device__ void run_unit(const TileWork<Cfg>& w, unsigned& q_parity) {
    const int warp_in_group = gpu::shfl(gpu::warp_id(), 0) % 4;  // warp-uniform: see prefill_cta's `group`
    const int group_row0 = w.q_row0 + consumer * Cfg::kWgRows;  // the warpgroup's first query row
    const int row0 = group_row0 + warp_in_group * 16;            // the warp's
    RowState<Cfg> st;  // O starts at zero
    scales = tile_scales<Cfg>(a, w);
    // With the PV wait inside the mask's branches (kPvWaitInSoftmax) the four warps must take
    // the same one: wgmma.wait_group is .aligned, one instruction for the whole warpgroup
    // (compute-sanitizer's synccheck reports the two PCs otherwise); so must they with the
    // exponentials' meetings in the branches (kExpMeet: bar.sync and bar.arrive are .aligned,
    // and under the mask a warp's own bound put a warpgroup's warps on both sides). The
    // warpgroup's first row then decides, whose masked tiles include each warp's own.
    mask_end = unmasked_end(w, Cfg::kPvWaitInSoftmax || Cfg::kExpMeet ? group_row0 : row0);
    gpu::mbarrier_wait(&s.q_full, q_parity);
    q_parity ^= 1u;
    // fp8 keeps the tile's loop: with a bound of its own, its long causal kernel kept a word in
    // local memory inside the loop (hopper_policy.hpp, kOwnTiles).
    int n = Policy::kOwnTiles && !Cfg::kFp8 ? own_tiles(w) : w.n_tiles;
    // A whole tile of the split walk: every key tile of the launch (no mask, one length), from the
    // parameters, as the kernels without the split count them.
    static_assert(!Cfg::kSplitTail || (!Cfg::kCausal && !Cfg::kRagged), "the split walk's tiles are equal");
    if constexpr (Cfg::kSplitTail && !kPiece) n = TileWork<Cfg>::tiles_seen_by(0, a.q_len, a.kv_len);
    int first = 0;  // the unit's first key tile: a split tile's unit's (run_tile), else 0
    if constexpr (kPiece) first = w.first;
    if (n > first) {
      if constexpr (Policy::kIntraOverlap) mainloop_overlapped(w, st, row0, first, n);
      else mainloop_serial(w, st, row0, first, n);
    } else if (gpu::lane_id() == 0) {
      gpu::mbarrier_arrive(&s.q_empty);  // no key to see: Q was never read
    }
    pass_tiles<kPiece>(w, first, n);
    // A split tile's piece: written by the warp that holds every piece's rows (hopper_split.cuh).
    if constexpr (kPiece) {
      if (w.split_at >= 0) {
        const attention::SplitUnit u = a.split.unit_at(int(blockIdx.x), w.split_at);
        if (u.pieces > 1 && !PieceMeeting<Cfg>::arrive(a, u, consumer * 4 + warp_in_group, st)) return;
      }
    }
    // STAGE 4: O / l (times fp8's v_scale) to the output rows of the (batch, head), in the
    // output dtype, rows counted from the sequence's first (none past its end).
    const std::int64_t row_stride = std::int64_t(a.q_heads) * Cfg::kHeadDim;
    std::int64_t first_row;
    if constexpr (Cfg::kRagged) first_row = w.start;
    else first_row = std::int64_t(w.t.batch) * a.q_len;
    std::uint16_t* o_rows = a.o + first_row * row_stride + std::int64_t(w.t.head) * Cfg::kHeadDim;
    if constexpr (Cfg::kStagedOutput)
      write_o_staged<typename Cfg::Rows, Out, Cfg::kBlocksFromEnd, Cfg::kHeadDim, Cfg::kPairedCols>(
          st, stage_rows(warp_in_group), o_rows, lens(w).q_len,
          scales.o, row_stride, row0);
    else
      attention::write_o<typename Cfg::Rows, Out, Cfg::kBlocksFromEnd>(st, o_rows, lens(w).q_len, scales.o, row_stride,
                                                                       row0);
  }
};

// The matrix ops' operand type and O's type: fp8 inputs write bf16.
template <DType kT>
using Operand = std::conditional_t<kT == DType::fp8_e4m3, gpu::wgmma::E4m3,
                                   std::conditional_t<kT == DType::bf16, gpu::mma::Bf16, gpu::mma::F16>>;
template <DType kT>
using Output = std::conditional_t<kT == DType::f16, gpu::mma::F16, gpu::mma::Bf16>;

template <class Policy, DType kT, int kHeadDim, bool kCausal>
inline constexpr int kThreadsOf = Config<Policy, kT, kHeadDim, kCausal>::kThreads;

// The whole CTA: barriers, then each role's loop over the tiles. The uniform and the ragged
// kernels below are this body over their Config.
template <class Policy, DType kT, class Cfg, class Dyn>
__device__ __forceinline__ void prefill_cta(const Params& a) {
  using Storage = SharedStorage<Cfg>;
  static_assert(Dyn::kBytes == Storage::kLaunchBytes, "launch and kernel disagree on shared memory");
  extern __shared__ unsigned char smem_raw[];
  const unsigned pad = (kAtomBytes - gpu::smem_u32(smem_raw) % kAtomBytes) % kAtomBytes;
  Storage& s = *reinterpret_cast<Storage*>(smem_raw + pad);
  if (threadIdx.x == 0) {
    s.k_pipe.init(Cfg::kConsumerWarps);
    s.v_pipe.init(Cfg::kVReaderWarps);
    if constexpr (Cfg::kFp8)
      s.vt_pipe.init(Cfg::kTransposeWarps, Cfg::kConsumerWarps);
    gpu::mbarrier_init(&s.q_full, 1);
    gpu::mbarrier_init(&s.q_empty, Cfg::kConsumerWarps);
    // The ids' readers: the consumer warps and the copying thread, or with fp8 the consumer warps
    // and the transposing warps (the copying thread draws the ids itself there: kSelfDraw).
    s.tile_queue.init(Cfg::kConsumerWarps + (Cfg::kFp8 ? Cfg::kTransposeWarps : 1));
    gpu::mbarrier_init_fence();
  }
  gpu::block_sync();  // barriers initialized before any role uses them

  // The warpgroup index taken from lane 0: derived from threadIdx it is per lane to the compiler,
  // and so was everything computed from it (the consumer's Q rows and descriptors, the warp's
  // first row, the mask branch), which kept the consumers' address arithmetic on the vector ALU
  // with R2UR moves before each wgmma. From lane 0 it is warp-uniform, as CUTLASS's
  // canonical_warp_idx_sync makes its warp index (kernels/hopper_prefill/LOG.md, "Warp-uniform
  // warp indices").
  const int group = gpu::shfl(gpu::warp_group_id(), 0);
  // Every role walks the same tiles; each builds its own walker with its role known at compile
  // time (no dead fetch state in the consumers' registers). Dynamic schedule: the producer's
  // second warp draws the tiles and the copying thread reads them like the consumers; with fp8,
  // whose producer warps 1-3 transpose V, the copying thread draws them itself (kSelfDraw): it
  // runs a tile's copies ahead of the consumers, so the draw's latency stays off their path.
  constexpr bool kDynamic = Policy::kSchedule == attention::TileSchedule::Dynamic;
  constexpr bool kSelfDraw = kDynamic && Cfg::kFp8;
  using Tiles = std::conditional_t<Cfg::kSplitTail, attention::SplitTailScheduler,
                                   attention::TileSchedulerOf<Policy::kSchedule, Cfg::kTileQueueSlots>>;
  // What the walk hands each role: a tile, or a unit of the split walk (a tile's key tiles).
  std::conditional_t<Cfg::kSplitTail, attention::SplitUnit, TileCoord> t;
  const auto& walk = [&]() -> const auto& {
    if constexpr (Cfg::kSplitTail) return a.split;
    else return a.tiles;
  }();
  // (The policy's test first, though role_of implies it: folded before the call, it leaves the
  // machine code of the policies without a producer exactly as it was; role_of alone reordered it.)
  if (Policy::kWarpSpecialized && role_of<Cfg>(group) == WarpGroupRole::Producer) {
    // Producer warpgroup: one thread issues every copy; fp8's warps 1..3 transpose V; the
    // others have nothing to do.
    if constexpr (Policy::kRegisterRealloc) gpu::regs_decrease<Cfg::kProducerRegs>();
    if (threadIdx.x == 0) {
      Loader<Cfg> loader{a, s};
      Tiles tiles(walk, s.tile_queue, kSelfDraw ? attention::TileRole::Fetcher : attention::TileRole::LoneReader);
      while (tiles.next(t)) loader.load_tile(TileWork<Cfg>(a, t));
    } else if (kDynamic && !kSelfDraw && threadIdx.x == kWarpSize) {
      Tiles tiles(walk, s.tile_queue, attention::TileRole::Fetcher);
      while (tiles.next(t)) {
      }
    } else if constexpr (Cfg::kFp8) {
      if (gpu::warp_id() > 0) {
        VTransposer<Cfg> transposer{s, gpu::warp_id() - 1};
        Tiles tiles(walk, s.tile_queue, attention::TileRole::WarpReader);
        while (tiles.next(t)) transposer.tile(TileWork<Cfg>(a, t));
      }
    }
    return;
  }
  if constexpr (Policy::kRegisterRealloc) gpu::regs_increase<Cfg::kConsumerRegs>();
  const int consumer = group - Cfg::kProducers;  // consumers numbered from 0
  // Without a producer, thread 0 issues Q and the first kStages tiles, then refills each
  // stage as it is released (Consumer::release). The loader is held by value, not through
  // a pointer, so its pipeline state stays in registers.
  const bool issues_copies = !Policy::kWarpSpecialized && threadIdx.x == 0;
  Consumer<Policy, Cfg, Operand<kT>, Output<kT>> c{a, s, Loader<Cfg>{a, s}, issues_copies,
                                                  TurnOrder<Policy::kPingPong, Cfg::kConsumers>(consumer), consumer};
  if (Policy::kPingPong && consumer == Cfg::kConsumers - 1) c.turn.end();  // consumer 0 goes first
  unsigned q_parity = 0;
  Tiles tiles(walk, s.tile_queue, attention::TileRole::WarpReader);
  while (tiles.next(t)) {
    const TileWork<Cfg> w(a, t);
    if (issues_copies) {
      c.loader.load_q(w);
      for (int j = 0; j < min(Cfg::kStages, w.n_tiles); ++j) {
        c.loader.template load_kv<true>(w, j);
        c.loader.template load_kv<false>(w, j);
      }
    }
    gpu::warp_sync();
    c.run_tile(w, q_parity);
  }
  if (Policy::kPingPong && consumer == 0) c.turn.begin();  // take consumer 1's last hand-over
}

template <class Policy, DType kT, int kHeadDim, bool kCausal, class Dyn>
__global__ void __launch_bounds__(kThreadsOf<Policy, kT, kHeadDim, kCausal>, 1)
    hopper_prefill_kernel(const __grid_constant__ Params a) {
  prefill_cta<Policy, kT, Config<Policy, kT, kHeadDim, kCausal>, Dyn>(a);
}

// A ragged batch (Config::kRagged): a kernel of its own name, so that profiles tell them apart.
template <class Policy, DType kT, int kHeadDim, bool kCausal, class Dyn>
__global__ void __launch_bounds__(kThreadsOf<Policy, kT, kHeadDim, kCausal>, 1)
    hopper_ragged_prefill_kernel(const __grid_constant__ Params a) {
  prefill_cta<Policy, kT, Config<Policy, kT, kHeadDim, kCausal, true>, Dyn>(a);
}

// Tensor maps of Q, K, V: (row words, position, head, batch), boxes of 64 16-bit columns x
// `rows`; a row is head_dim values, row_words 16-bit words (fp8: two values a word, which
// the copy moves as they are). Encoded once per buffer and shape (a host call between the
// timing events would be timed).
inline gpu::api::TensorMap qkv_tensor_map(const void* base, int row_words, int len, int heads, int batch, int rows) {
  static std::map<std::tuple<const void*, int, int, int, int, int>, gpu::api::TensorMap> cache;
  auto [it, fresh] = cache.try_emplace({base, row_words, len, heads, batch, rows});
  if (fresh) {
    const std::uint64_t dims[4] = {std::uint64_t(row_words), std::uint64_t(len), std::uint64_t(heads), std::uint64_t(batch)};
    const std::uint64_t strides[3] = {std::uint64_t(heads) * row_words * 2, std::uint64_t(row_words) * 2,
                                      std::uint64_t(len) * heads * row_words * 2};
    const std::uint32_t box[4] = {std::uint32_t(kBoxCols), std::uint32_t(rows), 1, 1};
    SCHEDLAB_GPU_CHECK(gpu::api::encode_tensor_map(&it->second, base, 4, dims, strides, box, 128));
  }
  return it->second;
}

inline const gpu::DeviceInfo& device() {
  static const gpu::DeviceInfo info = gpu::device_info();  // once: a host query between timing events would be timed
  return info;
}

template <class Policy, DType kT, int kHeadDim, bool kCausal>
void require_fits() {
  constexpr int kBytes = SharedStorage<Config<Policy, kT, kHeadDim, kCausal>>::kLaunchBytes;
  if (kBytes > device().smem_per_block_optin)
    throw UnsupportedProblem("hopper prefill: " + std::to_string(kBytes) + " bytes of shared memory at head dim " +
                             std::to_string(kHeadDim) + ", over the device's " +
                             std::to_string(device().smem_per_block_optin) + " per block");
}

// A ragged batch's query blocks (attention::ragged_blocks) on the device, built and copied once
// per batch and tile shape (a copy between the timing events would be timed), as the tensor
// maps are.
template <int kBlockM, int kBlockN, bool kCausal>
const attention::RaggedBlock* ragged_blocks_on_device(const std::vector<int>& lengths, int& count) {
  static std::map<std::vector<int>, gpu::DeviceBuffer<attention::RaggedBlock>> cache;
  auto [it, fresh] = cache.try_emplace(lengths);
  if (fresh) {
    const auto blocks = attention::ragged_blocks(lengths, kBlockM, kBlockN, kCausal);
    it->second = gpu::DeviceBuffer<attention::RaggedBlock>(blocks.size());
    it->second.upload(blocks);
  }
  count = static_cast<int>(it->second.size());
  return it->second.data();
}

template <class Policy, DType kT, int kHeadDim, bool kCausal>
void launch_for(const PrefillArgs& args, gpu::api::stream_t stream) {
  using Cfg = Config<Policy, kT, kHeadDim, kCausal>;
  constexpr int kBytes = SharedStorage<Cfg>::kLaunchBytes;
  constexpr int kRowWords = kHeadDim * Cfg::kElemBytes / 2;
  const PrefillProblem& p = args.problem;
  require_fits<Policy, kT, kHeadDim, kCausal>();
  // Refused before anything is built for the call (the tensor maps are cached by address).
  if (Cfg::kStagedOutput && reinterpret_cast<std::uintptr_t>(args.o) % 16 != 0)
    throw UnsupportedProblem("hopper prefill: the output is not 16-byte aligned (its rows are written 16 bytes at a time)");
  Params a{};
  // A ragged batch is one batch of all its tokens to the copies; its tiles are its query
  // blocks (one entry each in a.blocks) by head, walked longest first.
  const bool ragged = p.ragged();
  const int map_batch = ragged ? 1 : p.batch;
  const int q_rows = ragged ? int(p.q_start(p.batch)) : p.q_len, kv_rows = ragged ? int(p.kv_start(p.batch)) : p.kv_len;
  a.q_map = qkv_tensor_map(args.q, kRowWords, q_rows, p.q_heads, map_batch, Cfg::kBlockM);
  a.k_map = qkv_tensor_map(args.k, kRowWords, kv_rows, p.kv_heads, map_batch, Cfg::kBlockN);
  a.v_map = qkv_tensor_map(args.v, kRowWords, kv_rows, p.kv_heads, map_batch, Cfg::kBlockN);
  a.o = static_cast<std::uint16_t*>(args.o);
  a.q_len = p.q_len;
  a.kv_len = p.kv_len;
  a.q_heads = p.q_heads;
  a.kv_heads = p.kv_heads;
  a.scale_log2 = p.scale() * kLog2e;
  a.q_scale = args.q_scale;
  a.k_scale = args.k_scale;
  a.v_scale = args.v_scale;
  const int sm_count = device().sm_count;
  if (ragged) {
    int blocks = 0;
    a.blocks = ragged_blocks_on_device<Cfg::kBlockM, Cfg::kBlockN, kCausal>(p.lengths, blocks);
    a.tiles = attention::TileGrid{blocks, p.q_heads, 1, true,
                                  attention::head_sections(Policy::kCausalOrder, blocks, p.q_heads, sm_count)};
  } else {
    const int m_blocks = (p.q_len + Cfg::kBlockM - 1) / Cfg::kBlockM;
    a.tiles = attention::TileGrid{m_blocks, p.q_heads, p.batch, kCausal,
                                  attention::head_sections(Policy::kCausalOrder, m_blocks, p.q_heads * p.batch, sm_count)};
  }
  if constexpr (Cfg::kSplitTail) {
    a.split = attention::SplitTail::of(a.tiles.count(), (p.kv_len + Cfg::kBlockN - 1) / Cfg::kBlockN, sm_count,
                                       Policy::kSplitTailFill,
                                       (Policy::kSplitTailMinShareKeys + Cfg::kBlockN - 1) / Cfg::kBlockN);
    a.max_pieces = a.split.max_pieces();
    // The pieces' slots and counts, one set per kernel, grown to the largest split launched
    // (the first launch of a shape: a warm-up) and never cleared: the last piece of each tile
    // zeroes its counts. Launches of one kernel on concurrent streams would share them.
    static gpu::DeviceBuffer<float> partials;
    static gpu::DeviceBuffer<unsigned> arrivals;
    const std::size_t slots = PieceMeeting<Cfg>::floats(a.split);
    const std::size_t counts = std::size_t(a.split.split_tiles) * Cfg::kConsumerWarps;
    if (partials.size() < slots) partials = gpu::DeviceBuffer<float>(slots);
    if (arrivals.size() < counts) {
      arrivals = gpu::DeviceBuffer<unsigned>(counts);
      arrivals.upload(std::vector<unsigned>(counts, 0u));
    }
    a.partials = partials.data();
    a.arrivals = arrivals.data();
  }
  unsigned* next_base = nullptr;
  if constexpr (Policy::kSchedule == attention::TileSchedule::Dynamic) {
    // One counter per kernel, zeroed once and never reset: each launch starts where the last
    // one left it (TileGrid::base), so no memset sits between the timing events.
    static gpu::DeviceBuffer<unsigned> counter = [] {
      gpu::DeviceBuffer<unsigned> c(1);
      c.upload({0u});
      return c;
    }();
    static unsigned base = 0;
    a.tiles.counter = counter.data();
    a.tiles.base = base;
    next_base = &base;
  }
  dim3 grid = attention::TileSchedulerOf<Policy::kSchedule, Policy::kTileQueueSlots>::grid(a.tiles, sm_count);
  if constexpr (Cfg::kSplitTail) grid.x = std::max(grid.x, unsigned(a.split.split_ctas));  // fewer tiles than SMs
  const gpu::LaunchConfig config{grid, dim3(Cfg::kThreads), kBytes, stream};
  if (ragged) {
    auto kernel = hopper_ragged_prefill_kernel<Policy, kT, kHeadDim, kCausal, gpu::DynamicSmem<kBytes>>;
    static const bool smem_raised = (gpu::set_max_dynamic_smem(kernel, kBytes), true);  // once per kernel
    (void)smem_raised;
    gpu::launch("hopper_ragged_prefill", kernel, config, a);
  } else {
    auto kernel = hopper_prefill_kernel<Policy, kT, kHeadDim, kCausal, gpu::DynamicSmem<kBytes>>;
    static const bool smem_raised = (gpu::set_max_dynamic_smem(kernel, kBytes), true);  // once per kernel
    (void)smem_raised;
    gpu::launch("hopper_prefill", kernel, config, a);
  }
  if (next_base) *next_base += static_cast<unsigned>(a.tiles.count());  // launched: its draws are taken
}

}  // namespace schedlab::kernels::hopper_detail

namespace schedlab::kernels {

namespace hopper_detail {
// fp8 runs at head dim 128 on the policies that can (kHopperFp8Capable); anything else is
// refused with the reason, before any launch.
template <class Policy>
void require_fp8_support(const PrefillProblem& p) {
  if (p.dtype != DType::fp8_e4m3) return;
  if (!kHopperFp8Capable<Policy>)
    throw UnsupportedProblem(
        "hopper prefill fp8: the policy has no producer warpgroup to transpose V (no warp specialization)");
  if (p.head_dim != 128)
    throw UnsupportedProblem("hopper prefill fp8: head dim " + std::to_string(p.head_dim) + ", only 128 has an fp8 tile");
}
}  // namespace hopper_detail

namespace hopper_detail {
// The kernel a problem runs, handed to f as f.template operator()<KernelPolicy, dtype, head dim,
// causal>(): the short kernels by length (ShortSeq, and Fp8Meet's for short fp8 launches without
// the mask), Fp8MeetCausal for fp8 under the mask, the long causal ones (LongCausal), else the
// policy's own. launch_hopper_prefill launches it and require_hopper_prefill_fits checks it, so
// the two never disagree.
template <class Policy, class F>
void with_kernel(const PrefillProblem& p, F&& f) {
  auto by_dim = [&]<DType kT, bool kCausal>() {
    if constexpr (kT == DType::fp8_e4m3) {
      if constexpr (kCausal && kHasFp8MeetCausal<Policy>) {  // implies a producer warpgroup
        f.template operator()<Fp8MeetCausal<Policy>, kT, 128, true>();
      } else if constexpr (kHopperFp8Capable<Policy>) {
        if constexpr (kCausal && kHasLongCausalFp8<Policy>) {
          if (p.kv_len >= Policy::kLongCausalFromKeys) return f.template operator()<LongCausal<Policy>, kT, 128, true>();
        }
        if constexpr (!kCausal && kHasFp8Meet<Policy>) {
          if (p.kv_len <= kFp8MeetKeysOf<Policy>)
            return f.template operator()<ShortSeq<Fp8Meet<Policy>, false>, kT, 128, false>();
        }
        // The short kernel of the policy's own fp8 tile, where Fp8Meet's does not cover its lengths.
        if constexpr (!kCausal && kHasShortSeqFp8<Policy> &&
                      !(kHasFp8Meet<Policy> && kFp8MeetKeysOf<Policy> >= kFp8ShortKeysOf<Policy>)) {
          if (p.kv_len <= kFp8ShortKeysOf<Policy>) return f.template operator()<ShortSeq<Policy, false>, kT, 128, false>();
        }
        f.template operator()<Policy, kT, 128, kCausal>();
      }
    } else {
      if constexpr (kHasShortSeq<Policy, kCausal>) {
        if (p.kv_len <= Policy::short_keys(kCausal))
          return p.head_dim == 64 ? f.template operator()<ShortSeq<Policy, kCausal>, kT, 64, kCausal>()
                                  : f.template operator()<ShortSeq<Policy, kCausal>, kT, 128, kCausal>();
      }
      if (p.head_dim == 64) return f.template operator()<Policy, kT, 64, kCausal>();
      if constexpr (kCausal && kHasLongCausal<Policy>) {
        if (p.kv_len >= Policy::kLongCausalFromKeys) return f.template operator()<LongCausal<Policy>, kT, 128, true>();
      }
      f.template operator()<Policy, kT, 128, kCausal>();
    }
  };
  auto by_mask = [&]<DType kT>() {
    if (p.causal) by_dim.template operator()<kT, true>();
    else by_dim.template operator()<kT, false>();
  };
  if (p.dtype == DType::bf16) by_mask.template operator()<DType::bf16>();
  else if (p.dtype == DType::f16) by_mask.template operator()<DType::f16>();
  else by_mask.template operator()<DType::fp8_e4m3>();
}
}  // namespace hopper_detail

template <class Policy>
void launch_hopper_prefill(const PrefillArgs& args, gpu::api::stream_t stream) {
  using namespace hopper_detail;
  const PrefillProblem& p = args.problem;
  require_support(p, hopper_prefill_support());
  require_fp8_support<Policy>(p);
  with_kernel<Policy>(p, [&]<class Kernel, DType kT, int kHeadDim, bool kCausal>() {
    launch_for<Kernel, kT, kHeadDim, kCausal>(args, stream);
  });
}

template <class Policy>
void require_hopper_prefill_fits(const PrefillProblem& p) {
  using namespace hopper_detail;
  require_fp8_support<Policy>(p);
  with_kernel<Policy>(p, []<class Kernel, DType kT, int kHeadDim, bool kCausal>() {
    require_fits<Kernel, kT, kHeadDim, kCausal>();
  });
}

}  // namespace schedlab::kernels
