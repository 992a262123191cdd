// The warp body's stages on one 16-token tile: S = Q K^T, the online softmax (shared with the
// warpgroup body's 64-key steps), O += P V, for 16-bit and fp8 KV, and Q's fragments.
#pragma once
#include "kernels/decode/decode_copy.cuh"

namespace schedlab::kernels::decode_detail {

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
  if constexpr (Policy::Warp::kStreamKv) {
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
  if (Policy::kFault != DecodeFault::stale_max && gpu::warp_any(r.moved)) scale_o_rows<2>(st.o, r.corr);
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
      const float m_old = st.m[r];
      corr[r] = advance_max(st.m[r], tile_max[r]).corr;
      moved = moved || st.m[r] != m_old;
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
  if constexpr (Policy::Warp::kStreamKv) {
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
  if constexpr (Policy::Warp::kStreamKv) {
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
