// The attention warp tile on sm_80+ (used on sm_90a): fragments of S = Q K^T and O += P V
// for mma.sync m16n8k16, loaded from shared tiles with ldmatrix (.trans for V). This is the
// code the flash prefill kernel had inline before the AMD MFMA path; it moved here unchanged
// so that the kernel (kernels/prefill/flash_prefill.cuh) holds no fragment layout.
// Fragment layouts: PTX ISA "Matrix Fragments for mma.m16n8k16" (see warp_mma.hpp): with
// g = lane / 4 and t = lane % 4, lane holds rows g and g + 8 (two row slots) and, per n8
// tile, columns 2t and 2t + 1 of each (two elements per slot).
//
// Cfg supplies kMTiles (m16 tiles per warp), kBlockN, kHeadDim, QTile and KvTile (shared
// tiles with lane_offset() / at(): see SmemTile in kernels/attention/smem_tile.hpp).
#pragma once
#include <cstdint>

#include "common/gpu/backend/cuda/device.hpp"
#include "common/gpu/backend/cuda/warp_mma.hpp"

namespace schedlab::gpu::attn {

inline constexpr const char* kMatrixInstruction = "mma.sync.m16n8k16 + ldmatrix (HMMA)";

// The rows of one warp's accumulators: 16 query rows x kBlockN keys of S and 16 x kHeadDim of
// O in n8 C tiles. mma.sync m16n8 lays them out this way, and so does wgmma m64nN for each
// warp's 16 rows of its warpgroup's 64 (PTX ISA, "wgmma D-fragment layout": per 8-column
// block, the same two rows and two columns per lane), so the online softmax, P's packing as
// the 16-bit A operand and the output stage are shared by both prefill families.
template <int kBlockN, int kHeadDim>
struct M16n8Rows {
  static constexpr int kMmaRows = 16;           // query rows per m16 tile
  static constexpr int kSTiles = kBlockN / 8;   // n8 C tiles of S (16 x kBlockN)
  static constexpr int kOTiles = kHeadDim / 8;  // n8 C tiles of O (16 x head_dim)
  static constexpr int kRowSlots = 2;           // rows g and g + 8
  static constexpr int kPerSlot = 2;            // elements of one row slot in a C tile
  static constexpr int kPWords = 4;             // P as the A fragment of one k16 step

  // Row (from the m16 tile's first row row0) and column (from the tile's first key key0) of
  // element i of C tile n.
  static __device__ __forceinline__ int row(int row0, int i) { return row0 + mma::frag_lane() / 4 + 8 * (i / 2); }
  static __device__ __forceinline__ int col(int key0, int n, int i) {
    return key0 + n * 8 + 2 * (mma::frag_lane() % 4) + i % 2;
  }
  // A row's values are spread over the 4 lanes 4g..4g+3.
  static __device__ __forceinline__ float row_max(float x) {
    x = fmaxf(x, shfl_xor(x, 1));
    return fmaxf(x, shfl_xor(x, 2));
  }
  static __device__ __forceinline__ float row_sum(float x) {
    x += shfl_xor(x, 1);
    return x + shfl_xor(x, 2);
  }

  // P (probabilities in S's C layout) as 16-bit A fragments: the C layout of two n8 tiles is
  // the A layout of one k16 step, so P never leaves registers.
  template <class Op>
  static __device__ __forceinline__ void pack_p(std::uint32_t (&pa)[kBlockN / 16][kPWords], const float (&s)[kSTiles][4]) {
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      pa[kk][0] = mma::pack2<Op>(s[2 * kk][0], s[2 * kk][1]);
      pa[kk][1] = mma::pack2<Op>(s[2 * kk][2], s[2 * kk][3]);
      pa[kk][2] = mma::pack2<Op>(s[2 * kk + 1][0], s[2 * kk + 1][1]);
      pa[kk][3] = mma::pack2<Op>(s[2 * kk + 1][2], s[2 * kk + 1][3]);
    }
  }

  // Row slot r of O, times inv, to the output row at `row_ptr` (one 4-byte store per n8 tile).
  template <class Op>
  static __device__ __forceinline__ void store_o_row(std::uint16_t* row_ptr, const float (&o)[kOTiles][4], int r,
                                                     float inv) {
    const int t = mma::frag_lane() % 4;
#pragma unroll
    for (int n = 0; n < kOTiles; ++n)
      *reinterpret_cast<std::uint32_t*>(row_ptr + n * 8 + 2 * t) = mma::pack2<Op>(o[n][2 * r] * inv, o[n][2 * r + 1] * inv);
  }
};

template <class Cfg>
struct WarpTile : M16n8Rows<Cfg::kBlockN, Cfg::kHeadDim> {
  using Rows = M16n8Rows<Cfg::kBlockN, Cfg::kHeadDim>;
  using Rows::kMmaRows, Rows::kSTiles, Rows::kOTiles, Rows::kRowSlots, Rows::kPerSlot, Rows::kPWords;
  static constexpr int kQWords = 4;                       // A fragment of one k16 step
  static constexpr int kKLoadsPerStep = kSTiles / 2;      // ldmatrix_x4 of K per k16 step
  static constexpr int kMmasPerKLoad = 2 * Cfg::kMTiles;  // the matrix ops one K load feeds
  using KFrags = std::uint32_t[kSTiles / 2][4];  // [key pair of n8 tiles][b0,b1 of each]
  using VFrags = std::uint32_t[kOTiles / 2][4];  // [column pair of n8 tiles][b0,b1 of each]

  // One k16 step of m16 tile mt of the warp's query rows as an A fragment.
  static __device__ __forceinline__ void load_q_step(std::uint32_t (&qa)[kQWords], const unsigned char* q_tile, int mt,
                                                     int kk) {
    const int lane = mma::frag_lane();
    const int row = warp_id() * Cfg::kMTiles * kMmaRows + ((lane / 8) % 2) * 8 + lane % 8;  // matrices 1, 3: rows 8-15
    const int off = Cfg::QTile::lane_offset(row, lane / 16);  // matrices 2, 3: dims 8-15
    mma::ldmatrix_x4(qa, Cfg::QTile::at(q_tile, off, kk, mt * kMmaRows));
  }

  // K as B fragments: the lane's step-0 offset, hoisted out of the k16 loop by the caller.
  static __device__ __forceinline__ int k_lane_offset() {
    const int lane = mma::frag_lane();
    const int row = (lane / 16) * 8 + lane % 8;  // key; matrices 2, 3: keys 8-15 of the pair
    return Cfg::KvTile::lane_offset(row, (lane / 8) % 2);  // matrices 1, 3: dims 8-15
  }
  static __device__ __forceinline__ void load_k_step(KFrags& k, const unsigned char* k_tile, int k_off, int kk) {
#pragma unroll
    for (int np = 0; np < kSTiles / 2; ++np) mma::ldmatrix_x4(k[np], Cfg::KvTile::at(k_tile, k_off, kk, np * 16));
  }

  // One k16 step of V (16 keys x head_dim) as B fragments (transposed load: V is [key][dim]).
  static __device__ __forceinline__ void load_v_step(VFrags& v, const unsigned char* v_tile, int kk) {
    const int lane = mma::frag_lane();
    const int row = ((lane / 8) % 2) * 8 + lane % 8;  // matrices 1, 3: keys 8-15
    const int off = Cfg::KvTile::lane_offset(row, lane / 16);  // matrices 2, 3: the second n8 tile
#pragma unroll
    for (int nn = 0; nn < kOTiles / 2; ++nn) mma::ldmatrix_x4_trans(v[nn], Cfg::KvTile::at(v_tile, off, nn, kk * 16));
  }

  // S += Q K^T for one k16 step of every m16 tile.
  template <class Op>
  static __device__ __forceinline__ void qk_step(float (&s)[Cfg::kMTiles][kSTiles][4],
                                                 const std::uint32_t (&qa)[Cfg::kMTiles][kQWords], const KFrags& k) {
#pragma unroll
    for (int np = 0; np < kSTiles / 2; ++np)
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
        mma::mma_16816<Op>(s[mt][2 * np], qa[mt], {k[np][0], k[np][1]});
        mma::mma_16816<Op>(s[mt][2 * np + 1], qa[mt], {k[np][2], k[np][3]});
      }
  }

  // O += P V for k16 step kk of every m16 tile.
  template <class Op>
  static __device__ __forceinline__ void pv_step(float (&o)[Cfg::kMTiles][kOTiles][4],
                                                 const std::uint32_t (&pa)[Cfg::kMTiles][Cfg::kBlockN / 16][kPWords],
                                                 const VFrags& v, int kk) {
#pragma unroll
    for (int nn = 0; nn < kOTiles / 2; ++nn)
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
        mma::mma_16816<Op>(o[mt][2 * nn], pa[mt][kk], {v[nn][0], v[nn][1]});
        mma::mma_16816<Op>(o[mt][2 * nn + 1], pa[mt][kk], {v[nn][2], v[nn][3]});
      }
  }
};

// The decode kernel's warp tile (one m16 tile, whole-chunk K and V reads with permuted head
// dims): only declared here, so that the decode source can name it. On NVIDIA the decode
// kernel keeps its own m16n8k16 path (kernels/decode/paged_decode.cuh); the AMD backend
// defines this tile (backend/hip/attention_tile.hpp).
template <class Cfg, int kKvBytes = 2>
struct WarpTileWideReads;

}  // namespace schedlab::gpu::attn
