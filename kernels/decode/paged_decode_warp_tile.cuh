// The paged decode kernel's per-tile stages on the architecture's attention warp tile
// (common/gpu/attention_tile{,_fp8}.hpp, gpu::attn), for a backend whose m16n8k16 fragments
// are not native (kOnWarpTile: AMD, where gpu::mma only emulates them with VALU arithmetic).
// Each stage here overloads the one of decode_warp_math.cuh with the same signature: this one
// requires kOnWarpTile, that one its negation, so exactly one is viable. On NVIDIA nothing
// here is instantiated and the m16n8k16 stages compile exactly as before. decode_warp_math.cuh
// includes this file after the types it uses (Params, Tile, Softmax, ...) and before the
// stages' callers.
//
// A wave64 computes the padded group's 16 query rows against a 16-token tile with one
// v_mfma_f32_16x16x16 per k16 step (bf16 or f16; fp8 KV as f16 operands, WarpTileKvFp8),
// transposed so that a lane owns one query (backend/hip/attention_tile.hpp):
//   S^T (16 tokens x 16 queries) = K Q^T: lane l holds query l % 16, tokens 4 (l / 16) + i;
//   O^T (head_dim x 16 queries) += V^T P^T, P^T being S^T's accumulator packed in registers;
//   K is read a 16-byte chunk at a time and V^T gathered from row reads, which permutes the
//   head dims of Q and K alike (W::qk_dim) and those of O (W::o_col): WarpTileWideReads.
// The softmax state is per lane; a row reduction is in-lane, then over the query's 4 lanes.
// The decode arrays keep their m16n8k16 shapes and the warp tile uses a part of them: s[0]
// (S^T), pa[0..1] (P^T), qa[kk][0..1] (Q^T of k16 step kk), and the Softmax's slot 0 and
// O^T tiles (see Softmax). Streaming or resident K (Policy::Warp::kStreamKv) orders the K reads as
// on NVIDIA; V is read for the whole tile before its products either way.
#pragma once
#include <cstdint>
#include <type_traits>

#include "common/gpu/attention_tile.hpp"
#include "common/gpu/attention_tile_fp8.hpp"
#include "kernels/attention/smem_tile.hpp"

namespace schedlab::kernels::decode_detail {

// The shared tiles as the warp tile reads them: a 16-bit tile is attention::SmemTile's
// swizzled layout (Tile::offset: chunk c of row r at c ^ (r % 8); the backends without bulk
// copies store no other), an fp8 tile the raw one (Tile::raw_offset).
template <int kHeadDim>
struct RawTileView {
  static __device__ __forceinline__ int offset(int row, int chunk) {
    return Tile<DType::fp8_e4m3, kHeadDim>::raw_offset(row, chunk);
  }
};
template <DType kKv, int kDim>
struct WarpTileCfg {
  static constexpr int kMTiles = 1;                  // the padded group is one m16 tile
  static constexpr int kBlockN = kDecodeTileTokens;  // tokens of S^T
  static constexpr int kHeadDim = kDim;
  using KvTile = std::conditional_t<kKv == DType::fp8_e4m3, RawTileView<kDim>,
                                    attention::SmemTile<attention::SmemLayout::Swizzled, kDecodeTileTokens, kDim * 2>>;
};
template <DType kKv, int kHeadDim>
using WarpTileOf = std::conditional_t<kKv == DType::fp8_e4m3, gpu::attn::WarpTileKvFp8<WarpTileCfg<kKv, kHeadDim>>,
                                      gpu::attn::WarpTileWideReads<WarpTileCfg<kKv, kHeadDim>>>;

// Q^T as the B fragments of every k16 step, converted to the operand type; the padding
// rows are zero.
template <DType kKv, int kHeadDim>
  requires kOnWarpTile
__device__ __forceinline__ void load_q(std::uint32_t (&qa)[kHeadDim / 16][4], const Params& a, int seq, int head0,
                                       int rows) {
  using W = WarpTileOf<kKv, kHeadDim>;
  using E = Element<kQueryType<kKv>>;
  static_assert(W::kQWords == 2, "Q^T of a k16 step is the first two words of qa[kk]");
  const auto* q = static_cast<const typename E::storage*>(a.q) + (std::size_t(seq) * a.q_heads + head0) * kHeadDim;
  auto at = [&](int r, int d) { return r < rows ? E::load(q, std::size_t(r) * kHeadDim + d) : 0.f; };
#pragma unroll
  for (int kk = 0; kk < kHeadDim / 16; ++kk) {
    std::uint32_t b[W::kQWords];
    W::template pack_q_step<Operand<kKv>>(b, kk, at);
    qa[kk][0] = b[0];
    qa[kk][1] = b[1];
  }
}

// STAGE qk: S^T = K Q^T into s[0], one MFMA per k16 step.
template <class Policy, DType kKv, int kHeadDim>
  requires kOnWarpTile
__device__ __forceinline__ void qk_scores(float (&s)[2][4], const std::uint32_t (&qa)[kHeadDim / 16][4],
                                          const unsigned char* k_tile) {
  using W = WarpTileOf<kKv, kHeadDim>;
  constexpr int kSteps = kHeadDim / 16;
  float acc[1][1][4] = {};  // [m16 tile][16-token block][element]
  const int k_off = W::k_lane_offset();
  typename W::KFrags k[kSteps];
  auto product = [&](int kk) {
    const std::uint32_t q[1][W::kQWords] = {{qa[kk][0], qa[kk][1]}};
    W::template qk_step<Operand<kKv>>(acc, q, k[kk]);
  };
  if constexpr (Policy::Warp::kStreamKv) {
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      W::load_k_step(k[kk], k_tile, k_off, kk);
      product(kk);
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) W::load_k_step(k[kk], k_tile, k_off, kk);
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) product(kk);
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) s[0][i] = acc[0][0][i];
}
template <class Policy, int kHeadDim>
  requires kOnWarpTile
__device__ __forceinline__ void qk_scores_fp8(float (&s)[2][4], const std::uint32_t (&qa)[kHeadDim / 16][4],
                                              const unsigned char* k_raw) {
  qk_scores<Policy, DType::fp8_e4m3, kHeadDim>(s, qa, k_raw);
}

// STAGE softmax: scale and mask S^T (fp8 operands give it back its 2^8, kQkScale), update the
// lane's query's running max and sum, rescale O, and pack P^T as the B fragment of P V.
template <class Policy, DType kKv, int kHeadDim>
  requires kOnWarpTile
__device__ __forceinline__ void online_softmax(float (&s)[2][4], Softmax<kHeadDim>& st, std::uint32_t (&pa)[4],
                                               float scale_log2, int tile, int first_key, int seq_len) {
  using W = WarpTileOf<kKv, kHeadDim>;
  const bool dropped = fault_hits<Policy, DecodeFault::drop_tile>(tile, first_key, seq_len);
  const float scale = scale_log2 * W::kQkScale;
  float tile_max = -INFINITY;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int key = W::col(tile * kDecodeTileTokens, 0, i);
    s[0][i] = (key >= first_key && key < seq_len && !dropped) ? s[0][i] * scale : -INFINITY;
    tile_max = fmaxf(tile_max, s[0][i]);
  }
  const auto [corr, m_use] = advance_max(st.m[0], W::row_max(tile_max));
  st.l[0] *= corr;
  scale_o_rows<4>(st.o, {corr});
  float p[1][4];  // [16-token block][element]
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    p[0][i] = gpu::mma::fast_exp2(s[0][i] - m_use);
    st.l[0] += p[0][i];
  }
  std::uint32_t packed[1][W::kPWords];
  W::template pack_p<Operand<kKv>>(packed, p);
  pa[0] = packed[0][0];
  pa[1] = packed[0][1];
}

// STAGE pv: O^T (head_dim x 16 queries) += V^T P^T, one MFMA per 16-dim block.
template <class Policy, DType kKv, int kHeadDim>
  requires kOnWarpTile
__device__ __forceinline__ void pv_accumulate(Softmax<kHeadDim>& st, const std::uint32_t (&pa)[4],
                                              const unsigned char* v_tile) {
  using W = WarpTileOf<kKv, kHeadDim>;
  static_assert(sizeof(st.o) == sizeof(float[1][W::kOTiles][4]), "O^T is the Softmax's o");
  typename W::VFrags v;
  W::load_v_step(v, v_tile, 0);
  const std::uint32_t p[1][1][W::kPWords] = {{{pa[0], pa[1]}}};
  W::template pv_step<Operand<kKv>>(reinterpret_cast<float(&)[1][W::kOTiles][4]>(st.o), p, v, 0);  // one m16 tile
}
template <class Policy, int kHeadDim>
  requires kOnWarpTile
__device__ __forceinline__ void pv_accumulate_fp8(Softmax<kHeadDim>& st, const std::uint32_t (&pa)[4],
                                                  const unsigned char* v_raw) {
  pv_accumulate<Policy, DType::fp8_e4m3, kHeadDim>(st, pa, v_raw);
}

// After the loop: l summed over the lanes of the lane's query row, which is returned.
template <DType kKv, int kHeadDim>
__device__ __forceinline__ int finish_row_on_tile(Softmax<kHeadDim>& st) {
  st.l[0] = WarpTileOf<kKv, kHeadDim>::row_sum(st.l[0]);
  return WarpTileOf<kKv, kHeadDim>::row(0, 0);
}

// combine_warps' stash: the lane's part of its query row of O (times kPvScale), in head-dim
// order, into `mine`, rows of
// `stride` floats (O, then m and l, written by the row's first lane); rows at or past `rows`
// are padding and left out.
template <DType kKv, int kHeadDim>
__device__ __forceinline__ void stash_rows_on_tile(Softmax<kHeadDim>& st, float* mine, int stride, int rows) {
  using W = WarpTileOf<kKv, kHeadDim>;
  const int row = finish_row_on_tile<kKv, kHeadDim>(st);
  if (row >= rows) return;
  float* out = mine + row * stride;
#pragma unroll
  for (int n = 0; n < W::kOTiles; ++n)
#pragma unroll
    for (int i = 0; i < 4; ++i) out[W::o_col(n, i)] = st.o[n][i] * W::kPvScale;
  if (W::col(0, 0, 0) == 0) {
    out[kHeadDim] = st.m[0];
    out[kHeadDim + 1] = st.l[0];
  }
}

// write_warp_partial on the warp tile: the lane's query row of the normalized partial and,
// from the row's first lane, its log-sum-exp, into slot `slot` of the split combine.
template <DType kKv, int kHeadDim>
__device__ __forceinline__ void write_partial_on_tile(Softmax<kHeadDim>& st, const Params& a, int seq, int kvh,
                                                      int head0, int rows, int slot) {
  using W = WarpTileOf<kKv, kHeadDim>;
  const int row = finish_row_on_tile<kKv, kHeadDim>(st);
  if (row >= rows) return;
  const std::size_t at = (std::size_t(seq) * a.q_heads + head0 + row) * a.num_splits + slot;
  const float v_scale = a.v_scale ? a.v_scale[kvh] : 1.f;
  const float inv = inverse_sum(st.l[0], v_scale * W::kPvScale);
  float* o = a.partial_o + at * kHeadDim;
#pragma unroll
  for (int n = 0; n < W::kOTiles; ++n)
#pragma unroll
    for (int i = 0; i < 4; ++i) o[W::o_col(n, i)] = st.o[n][i] * inv;
  if (W::col(0, 0, 0) == 0) a.partial_lse[at] = row_lse(st.m[0], st.l[0]);
}

}  // namespace schedlab::kernels::decode_detail
