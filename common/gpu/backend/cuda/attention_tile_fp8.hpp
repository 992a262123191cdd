// The attention warp tile for OCP fp8 e4m3 Q, K, V on sm_89+ (used on sm_90a):
// mma.sync m16n8k32 e4m3.e4m3 -> f32 for S = Q K^T and for O += P V, with P quantized to
// e4m3 in registers (as FlashAttention-3's fp8 path does).
//
// Why Q and K need nothing new: the byte layout of the 8-bit m16n8k32 A and B fragments
// (PTX ISA, "Matrix Fragments for mma.m16n8k32") is the byte layout of the 16-bit m16n8k16
// ones: A reg 0..3 = (row g, bytes 4t..4t+3), (g+8, 4t..), (g, 16+4t..), (g+8, 16+4t..) of a
// 32-byte slab; B reg 0, 1 = (col g, bytes 4t.. and 16+4t..). So the 16-bit tile's ldmatrix
// loads of one 32-byte k step (16 bf16 dims or 32 fp8 dims) are reused as they are.
//
// P and V (there is no 8-bit ldmatrix.trans): the PV product sums over keys, so the order of
// the 32 keys of one k32 step may be permuted as long as P and V agree. Logical k 4t+i of a
// lane holds the keys its own S accumulators already hold: 2t, 2t+1, 8+2t, 9+2t (and +16
// for the second register), so P packs to e4m3 in-lane with no shuffle. V is read with the
// 16-bit ldmatrix.x4.trans of 4 key octets x one 16-byte dim chunk: lane (g, t) gets the
// bytes of keys {2t, 2t+1} x dims {2g, 2g+1} per octet, and two byte permutes (PRMT) per
// register pair give the B fragments of dim 2g and of dim 2g+1 in that key order. The O
// columns are thus permuted: C tile 2nn holds dims 16nn + 4t + {0, 2}, tile 2nn+1 holds
// 16nn + 4t + {1, 3}; store_o_row puts them back (one 8-byte store of 4 bf16 per chunk).
// V stays [key][dim] in memory: no transposed-V layout is required of the caller.
#pragma once
#include <cstdint>

#include "common/gpu/backend/cuda/attention_tile.hpp"

namespace schedlab::gpu::attn {

inline constexpr bool kHasFp8Tile = true;
inline constexpr const char* kFp8MatrixInstruction =
    "mma.sync.m16n8k32.e4m3.e4m3.f32 + ldmatrix (V by ldmatrix.trans b16 + PRMT)";

namespace fp8_detail {
// D += A B, one m16n8k32 product of e4m3 operands with f32 accumulation.
__device__ __forceinline__ void mma_16832(float (&c)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
using mma::pack4_e4m3;
inline constexpr std::uint32_t kEvenBytes = 0x6420;  // PRMT: bytes 0, 2 of a and 0, 2 of b
inline constexpr std::uint32_t kOddBytes = 0x7531;   // PRMT: bytes 1, 3 of a and 1, 3 of b
}  // namespace fp8_detail

template <class Cfg>
struct WarpTileFp8 : WarpTile<Cfg> {
  using Base = WarpTile<Cfg>;
  using typename Base::VFrags;  // [dim chunk][key octet]: ldmatrix.trans words (load_v_step)
  using Base::kOTiles;
  using Base::kSTiles;
  static constexpr int kPvKeys = 32;  // keys of one k32 step of O += P V
  static constexpr float kQkScale = 1.f, kPvScale = 1.f;  // e4m3 here is OCP's: no rescaling
  static_assert(Cfg::kBlockN % kPvKeys == 0, "fp8 P V steps over whole 32-key blocks");

  // S += Q K^T for one 32-byte (32-dim) step of every m16 tile.
  template <class Op>
  static __device__ __forceinline__ void qk_step(float (&s)[Cfg::kMTiles][kSTiles][4],
                                                 const std::uint32_t (&qa)[Cfg::kMTiles][Base::kQWords],
                                                 const typename Base::KFrags& k) {
#pragma unroll
    for (int np = 0; np < kSTiles / 2; ++np)
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
        fp8_detail::mma_16832(s[mt][2 * np], qa[mt], {k[np][0], k[np][1]});
        fp8_detail::mma_16832(s[mt][2 * np + 1], qa[mt], {k[np][2], k[np][3]});
      }
  }

  // V of the 32 keys of step kk, as ldmatrix.trans leaves it: v[nn][o] holds octet o's keys
  // 8o + {2t, 2t+1} x dims 16nn + {2g, 2g+1}. pv_step permutes bytes right before each
  // product, so the raw and the permuted words are not both live for the whole step.
  static __device__ __forceinline__ void load_v_step(VFrags& v, const unsigned char* v_tile, int kk) {
    // Lane l supplies key l of the step (octet l / 8); one offset per chunk parity: the
    // tile's at() steps by chunk pairs.
    const int lane = mma::frag_lane();
    const int off[2] = {Cfg::KvTile::lane_offset(lane, 0), Cfg::KvTile::lane_offset(lane, 1)};
#pragma unroll
    for (int nn = 0; nn < kOTiles / 2; ++nn)
      mma::ldmatrix_x4_trans(v[nn], Cfg::KvTile::at(v_tile, off[nn % 2], nn / 2, kk * kPvKeys));
  }

  // O += P V for k32 step kk of every m16 tile. The B fragment of dim 16nn + 2g takes bytes
  // 0 and 2 of octets (0, 1) and (2, 3): keys 2t, 2t+1, 8+2t, 9+2t (+16), P's order; the
  // fragment of dim 16nn + 2g + 1 takes bytes 1 and 3.
  template <class Op>
  static __device__ __forceinline__ void pv_step(float (&o)[Cfg::kMTiles][kOTiles][4],
                                                 const std::uint32_t (&pa)[Cfg::kMTiles][Cfg::kPvSteps][Base::kPWords],
                                                 const VFrags& v, int kk) {
#pragma unroll
    for (int nn = 0; nn < kOTiles / 2; ++nn) {
      const std::uint32_t even[2] = {mma::byte_perm(v[nn][0], v[nn][1], fp8_detail::kEvenBytes),
                                     mma::byte_perm(v[nn][2], v[nn][3], fp8_detail::kEvenBytes)};
      const std::uint32_t odd[2] = {mma::byte_perm(v[nn][0], v[nn][1], fp8_detail::kOddBytes),
                                    mma::byte_perm(v[nn][2], v[nn][3], fp8_detail::kOddBytes)};
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) {
        fp8_detail::mma_16832(o[mt][2 * nn], pa[mt][kk], even);
        fp8_detail::mma_16832(o[mt][2 * nn + 1], pa[mt][kk], odd);
      }
    }
  }

  // P as e4m3 A fragments of each k32 step, keys in the lane's own order (header comment).
  template <class Op>
  static __device__ __forceinline__ void pack_p(std::uint32_t (&pa)[Cfg::kPvSteps][Base::kPWords],
                                                const float (&s)[kSTiles][4]) {
#pragma unroll
    for (int kk = 0; kk < Cfg::kPvSteps; ++kk) {
      const float(&s0)[4] = s[4 * kk], (&s1)[4] = s[4 * kk + 1], (&s2)[4] = s[4 * kk + 2], (&s3)[4] = s[4 * kk + 3];
      pa[kk][0] = fp8_detail::pack4_e4m3(s0[0], s0[1], s1[0], s1[1]);  // row g
      pa[kk][1] = fp8_detail::pack4_e4m3(s0[2], s0[3], s1[2], s1[3]);  // row g + 8
      pa[kk][2] = fp8_detail::pack4_e4m3(s2[0], s2[1], s3[0], s3[1]);
      pa[kk][3] = fp8_detail::pack4_e4m3(s2[2], s2[3], s3[2], s3[3]);
    }
  }

  // Row slot r of O, times inv, as Op (16-bit) values: dims 16nn + 4t .. + 3, one 8-byte store.
  template <class Op>
  static __device__ __forceinline__ void store_o_row(std::uint16_t* row_ptr, const float (&o)[kOTiles][4], int r,
                                                     float inv) {
    const int t = mma::frag_lane() % 4;
#pragma unroll
    for (int nn = 0; nn < kOTiles / 2; ++nn) {
      const float(&even)[4] = o[2 * nn], (&odd)[4] = o[2 * nn + 1];
      *reinterpret_cast<uint2*>(row_ptr + 16 * nn + 4 * t) =
          uint2{mma::pack2<Op>(even[2 * r] * inv, odd[2 * r] * inv),
                mma::pack2<Op>(even[2 * r + 1] * inv, odd[2 * r + 1] * inv)};
    }
  }
};

// fp8 e4m3 K and V with 16-bit Q and P (the decode kernel's inputs): only declared here, so
// that the decode source can name it. On NVIDIA the decode kernel keeps its own m16n8k16
// path, which converts e4m3 pairs with cvt.rn.f16x2.e4m3x2 (kernels/decode/paged_decode.cuh);
// the AMD backend defines this tile (backend/hip/attention_tile_fp8.hpp).
template <class Cfg>
struct WarpTileKvFp8;

}  // namespace schedlab::gpu::attn
