// The Hopper prefill kernel's producer warpgroup: the thread that issues the bulk copies of
// Q and the K/V tiles (Loader), and for fp8 the warps that transpose each landed V tile into
// the V^T ring (VTransposer). The kernel is described in hopper_prefill.cuh.
#pragma once
#include "kernels/hopper_prefill/hopper_config.cuh"

namespace schedlab::kernels::hopper_detail {

// STAGE produce: the copies of one tile's Q and of K/V tile j, issued by one thread (the
// producer warp's, or a consumer's without warp specialization).
template <class Cfg>
struct Loader {
  const Params& a;
  SharedStorage<Cfg>& s;
  PipelineState<Cfg::kStages> k_state, v_state;
  unsigned q_parity = 0;

  __device__ void load_q(const TileWork<Cfg>& w) {
    gpu::mbarrier_wait(&s.q_empty, q_parity ^ 1u);  // the consumers released the last tile's Q
    gpu::mbarrier_arrive_expect_tx(&s.q_full, Cfg::kQBytes);
#pragma unroll
    for (int cb = 0; cb < Cfg::kColBlocks; ++cb)
      gpu::bulk_tensor_copy_4d(s.q + cb * Cfg::kBlockM * kRowBytes, &a.q_map, cb * kBoxCols, w.q_position(), w.t.head,
                               w.map_batch(), &s.q_full);
    q_parity ^= 1u;
  }
  // kKvUnion: a copy into a slot also waits for the slot's other tenant to be read. `lead` is
  // how many copies of the other ring this copy's waiting state lies past that ring's own:
  // K(j) waits for the readers of V(j - kStages), V(j) for those of K(j) (the wait that would
  // precede K(j + kStages)).
  template <bool kIsK>
  __device__ void load_kv(const TileWork<Cfg>& w, int j, int lead = 0) {
    auto& pipe = kIsK ? s.k_pipe : s.v_pipe;
    auto& state = kIsK ? k_state : v_state;
    pipe.producer_acquire(state);  // every consumer warp released this stage
    if constexpr (Cfg::kKvUnion) {
      if constexpr (kIsK) s.v_pipe.producer_acquire(attention::ahead(v_state, lead));
      else s.k_pipe.producer_acquire(attention::ahead(k_state, lead));
    }
    std::uint64_t* full = pipe.producer_expect(state, Cfg::kKvBytes);
    unsigned char* dst = kIsK ? s.k(state.index()) : s.v(state.index());
#pragma unroll
    for (int cb = 0; cb < Cfg::kColBlocks; ++cb)
      gpu::bulk_tensor_copy_4d(dst + cb * Cfg::kBlockN * kRowBytes, kIsK ? &a.k_map : &a.v_map, cb * kBoxCols,
                               w.kv_position(j), w.kv_head, w.map_batch(), full);
    ++state;
  }
  // The producer warpgroup's whole tile: K(j + 1) goes before V(j), since the overlapped
  // consumer needs S(j + 1) before it multiplies by V(j).
  // kKvUnion: K(j + 1) waits one V copy past v_state (V(j)'s stage, holding V(j + 1 -
  // kStages)); V(j) waits for K(j)'s readers, the wait kStages copies past K(j) in the K ring,
  // where k_state is at K(j + 2), or at K(j + 1) after the last K. (The fp8 producer's 24
  // registers then spill 8 bytes; a loop peeled so that every lead is a constant spilled 168.)
  __device__ void load_tile(const TileWork<Cfg>& w) {
    load_q(w);
    int first = 0;  // the unit's first key tile: a split piece's (kSplitTail), else 0
    if constexpr (Cfg::kSplitTail) first = w.first;
    if (w.n_tiles > first) load_kv<true>(w, first);
    for (int j = first; j < w.n_tiles; ++j) {
      const bool next = j + 1 < w.n_tiles;
      if (next) load_kv<true>(w, j + 1, 1);
      load_kv<false>(w, j, Cfg::kStages - (next ? 2 : 1));
    }
  }
};

// V (keys x 128 columns, 128-byte rows as the copy leaves them) to V^T (columns x keys), the
// K-major B operand of the 8-bit O += P V. The keys of each 16-key half are written in the
// order P holds them (pack_p: logical key 4t + i is the accumulator's key 2t, 2t + 1, 8 + 2t,
// 9 + 2t), so P needs no shuffle. Half h is the 16-byte chunk h % 8 of 128-key column block
// h / 8 of V^T (a 32-key step: two chunks). As FA3's producer does it (a word transpose, with
// three byte permutes per word, was slower: LOG.md, fp8_words): a unit is 16 keys (half h) x
// 32 columns (16-byte chunks 2u, 2u + 1). One ldmatrix.trans x4 reads it, matrix m = keys 16h +
// 8 (m % 2).., chunk 2u + m / 2 (8 rows of 8 distinct swizzled chunks: no bank conflict), and
// leaves lane (g, t) 16-bit pairs: register m holds the bytes of keys 2t, 2t + 1 (+ 8 for odd
// m) at columns 2g, 2g + 1 of its chunk. Two byte permutes per chunk give column 2g's and
// column 2g + 1's four keys in P's order; one stmatrix x4 writes them as V^T rows 16 chunk + g
// (even columns) and 16 chunk + 8 + g (odd): 8 consecutive rows per matrix, again 8 distinct
// chunks (the row order is what makes that so; writing column c to row c would put two rows of
// a phase on one chunk).
// A warp takes every kTransposeWarps-th half and its kHeadDim / 32 units in a row, so that a
// unit's addresses are the half's plus what the instructions carry: the read's swizzled chunk
// (2u + m / 2) ^ r is the lane's (m / 2 ^ r) with u in bits 5 and 6 XORed in (one LOP3), the
// write's chunk pair an offset the store carries. These warps run on three of the four SMSPs, beside
// consumer warps: with a unit's addresses derived from its index each pass (25 instructions
// a unit against 9) fp8 was 4.5% slower without the mask at 8192 keys and 7.4% under it
// (kernels/hopper_prefill/LOG.md, "fp8's V transpose by halves").
template <class Cfg>
__device__ __forceinline__ void transpose_v_matrix(unsigned char* vt, const unsigned char* v, int warp) {
  constexpr unsigned kHalves = Cfg::kBlockN / 16;
  constexpr int kChunkPairs = Cfg::kHeadDim / 32;
  constexpr unsigned kHalfBytes = 16 * kRowBytes, kVtBlockBytes = Cfg::kHeadDim * kRowBytes;
  // Bytes (selector nibbles) of two ldmatrix.trans words (keys 2t, 2t + 1 | 8 + 2t, 9 + 2t) for
  // column 2g (even) and 2g + 1 (odd) in P's order; the fault swaps keys 2t + 1 and 8 + 2t.
  constexpr bool kFault = Cfg::kFault == HopperFault::vt_key_order;
  constexpr std::uint32_t kEven = kFault ? 0x6240 : 0x6420, kOdd = kFault ? 0x7351 : 0x7531;
  // Lane l addresses row r = l % 8 of matrix m = l / 8: key (and V^T row) 8 (m % 2) + r of its
  // 16, chunk m / 2 of the unit's two. Rows of a matrix start at multiples of 8, so the
  // swizzle's row term is r for the reads and the writes alike.
  const unsigned lane = gpu::lane_id(), m = lane >> 3, r = lane & 7, row_in_16 = 8 * (m & 1) + r;
  const std::uint32_t read0 = gpu::smem_u32(v) + row_in_16 * kRowBytes + (((m >> 1) ^ r) << 4);
  const std::uint32_t write0 = gpu::smem_u32(vt) + (16 * (m >> 1) + row_in_16) * kRowBytes;
#pragma unroll 1
  for (unsigned h = warp; h < kHalves; h += Cfg::kTransposeWarps) {
    const std::uint32_t read = read0 + h * kHalfBytes;
    const std::uint32_t write = write0 + h / 8 * kVtBlockBytes + (((h % 8) ^ r) << 4);
#pragma unroll
    for (int u = 0; u < kChunkPairs; ++u) {
      std::uint32_t x[4];
      gpu::mma::ldmatrix_x4_trans_shared(x, read ^ (u << 5));
      const std::uint32_t y[4] = {__byte_perm(x[0], x[1], kEven), __byte_perm(x[0], x[1], kOdd),
                                  __byte_perm(x[2], x[3], kEven), __byte_perm(x[2], x[3], kOdd)};
      gpu::stmatrix_x4_shared(write + u * 32 * kRowBytes, y);
    }
  }
}

// STAGE produce (fp8): one transposing warp's walk over a tile's V ring and the V^T ring.
// The consumers read V^T with wgmma (the async proxy), so the ordinary stores are fenced
// before the arrival that lets them.
template <class Cfg>
struct VTransposer {
  // Rings of one depth walk in step, and one state serves both (a second one spills the
  // producer's 24 registers).
  static constexpr bool kInStep = Cfg::kVtStages == Cfg::kStages;
  struct SameAsV {};
  SharedStorage<Cfg>& s;
  int warp;  // 0..kTransposeWarps - 1
  PipelineState<Cfg::kStages> v_state;
  std::conditional_t<kInStep, SameAsV, PipelineState<Cfg::kVtStages>> own_vt_state{};
  __device__ auto& vt_state() {
    if constexpr (kInStep) return v_state;
    else return own_vt_state;
  }
  __device__ void tile(const TileWork<Cfg>& w) {
    int first = 0;  // the unit's first key tile: a split piece's (kSplitTail), else 0
    if constexpr (Cfg::kSplitTail) first = w.first;
    for (int j = first; j < w.n_tiles; ++j) {
      s.v_pipe.consumer_wait(v_state);          // V(j) has landed
      s.vt_pipe.producer_acquire(vt_state());  // every consumer warp released V^T(j - kVtStages)
      unsigned char* vt = s.vt[vt_state().index()];
      const unsigned char* v = s.v(v_state.index());
      transpose_v_matrix<Cfg>(vt, v, warp);
      gpu::fence_proxy_async_smem();
      gpu::warp_sync();
      if (gpu::lane_id() == 0) {
        s.v_pipe.consumer_release(v_state);     // this warp's reads of V(j) are done
        s.vt_pipe.producer_commit(vt_state());  // its part of V^T(j) is written
      }
      ++v_state;
      if constexpr (!kInStep) ++own_vt_state;
    }
  }
};

}  // namespace schedlab::kernels::hopper_detail
