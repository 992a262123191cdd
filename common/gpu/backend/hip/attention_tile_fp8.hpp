// The attention warp tile for OCP fp8 e4m3 Q, K, V on AMD CDNA3/CDNA4 (gfx942, gfx950):
// wave64 v_mfma_f32_16x16x32_fp8_fp8 for S^T = K Q^T and O^T += V^T P^T, P in fp8.
// Lane layouts of the 16x16x32 8-bit form (AMD matrix instruction calculator): lane l holds
// 8 bytes of each operand, A[l % 16][8 (l / 16) + i], B[8 (l / 16) + i][l % 16]; D as the
// 16x16x16 form (mfma_layout.hpp). So K and Q^T are one 8-byte ds_read of a 32-byte step,
// the 16-bit tile's reads unchanged (its 4 dims of 2 bytes are 8 dims of 1 byte here).
// P^T needs keys 8 (l / 16) + i of a 32-key step; a lane's S^T accumulators hold keys
// 4 (l / 16) + i of each 16-key block, so logical key 8 (l / 16) + i is block 0's key
// 4 (l / 16) + i for i < 4 and block 1's for i >= 4: P packs in-lane, and V^T's A fragment
// reads the same keys (eight ds_read_u8 of one dim column; the 16-bit tile reads four u16).
//
// FNUZ and OCP: gfx950's fp8 is OCP e4m3 (bias 7), the format of the inputs. gfx942's is
// e4m3 FNUZ (bias 8, no -0, NaN = 0x80): the same byte of an OCP finite value reads as half
// the value, so on gfx942 the products are 4x (S) and 2x (V) small, folded into the kernel's
// scales (kQkScale, kPvScale); P is converted by the hardware's own cvt, so it is exact in its
// format; and OCP -0 (0x80), which FNUZ reads as NaN, is turned into +0 as K, Q and V bytes
// are read (kCanonicalizeNegZero). OCP NaN inputs (0x7F, 0xFF) read as +-240 there; inputs
// are expected finite. Compile-only: no AMD run checks these numbers.
#pragma once
#include <hip/hip_runtime.h>

#include <cstdint>

#include "common/gpu/backend/hip/attention_tile.hpp"
#include "common/gpu/backend/hip/e4m3_to_f16.hpp"

namespace schedlab::gpu::attn {

inline constexpr bool kHasFp8Tile = true;
inline constexpr const char* kFp8MatrixInstruction =
    "v_mfma_f32_16x16x32_fp8_fp8 (gfx950 OCP e4m3; gfx942 FNUZ with OCP bytes rescaled)";

namespace fp8_detail {
#if defined(__gfx942__)
inline constexpr bool kFnuz = true;
#else
inline constexpr bool kFnuz = false;
#endif
inline constexpr float kQkScale = kFnuz ? 4.f : 1.f;  // S of OCP bytes / S the FNUZ MFMA computes
inline constexpr float kPvScale = kFnuz ? 2.f : 1.f;  // V of OCP bytes / V as FNUZ reads it

// Bytes equal to 0x80 (OCP -0) become 0x00 on FNUZ hardware (where 0x80 is NaN).
__device__ __forceinline__ std::uint32_t canonical(std::uint32_t x) {
  if constexpr (!kFnuz) return x;
  const std::uint32_t m = x ^ 0x80808080u;  // 0x00 where x held 0x80
  const std::uint32_t zero = ~(((m & 0x7F7F7F7Fu) + 0x7F7F7F7Fu) | m | 0x7F7F7F7Fu);  // 0x80 in those bytes
  return x & ~zero;
}
__device__ __forceinline__ void mfma_16x16x32(float (&d)[4], const std::uint32_t (&a)[2], const std::uint32_t (&b)[2]) {
  detail::F32x4 acc = {d[0], d[1], d[2], d[3]};
  const long av = static_cast<long>((std::uint64_t(a[1]) << 32) | a[0]);
  const long bv = static_cast<long>((std::uint64_t(b[1]) << 32) | b[0]);
  acc = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(av, bv, acc, 0, 0, 0);
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = acc[i];
}
// Four floats to the hardware's fp8 (x0 in the low byte): v_cvt_pk_fp8_f32, RNE, saturating.
__device__ __forceinline__ std::uint32_t pack4(float x0, float x1, float x2, float x3) {
  int w = __builtin_amdgcn_cvt_pk_fp8_f32(x0, x1, 0, false);
  w = __builtin_amdgcn_cvt_pk_fp8_f32(x2, x3, w, true);
  return static_cast<std::uint32_t>(w);
}
}  // namespace fp8_detail

template <class Cfg>
struct WarpTileFp8 : WarpTile<Cfg> {
  using Base = WarpTile<Cfg>;
  using typename Base::KFrags;
  using typename Base::VFrags;  // [dim block][8 bytes: logical keys 8 (l / 16) .. + 7]
  using Base::kOTiles;
  using Base::kSTiles;
  using Base::lane;
  static constexpr int kPvKeys = 32;
  static constexpr float kQkScale = fp8_detail::kQkScale, kPvScale = fp8_detail::kPvScale;
  static_assert(Cfg::kBlockN % kPvKeys == 0, "fp8 P V steps over whole 32-key blocks");

  static __device__ __forceinline__ void load_q_step(std::uint32_t (&qa)[Base::kQWords], const unsigned char* q_tile,
                                                     int mt, int kk) {
    Base::load_q_step(qa, q_tile, mt, kk);
    qa[0] = fp8_detail::canonical(qa[0]);
    qa[1] = fp8_detail::canonical(qa[1]);
  }
  static __device__ __forceinline__ void load_k_step(KFrags& k, const unsigned char* k_tile, int k_off, int kk) {
    Base::load_k_step(k, k_tile, k_off, kk);
#pragma unroll
    for (int kb = 0; kb < kSTiles; ++kb) k[kb][0] = fp8_detail::canonical(k[kb][0]), k[kb][1] = fp8_detail::canonical(k[kb][1]);
  }

  // V^T of the 32 keys of step kk: dim l % 16 of block db, keys in P's order (header).
  static __device__ __forceinline__ void load_v_step(VFrags& v, const unsigned char* v_tile, int kk) {
    using Tile = typename Cfg::KvTile;
    const int l = lane(), dim = mfma16::a_row(l), quad = l / mfma16::kDim;
#pragma unroll
    for (int db = 0; db < kOTiles; ++db) {  // dim block db is 16-byte chunk db of a row
      std::uint32_t w[2] = {0, 0};
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const int key = kk * kPvKeys + (i / 4) * 16 + 4 * quad + i % 4;
        w[i / 4] |= std::uint32_t(v_tile[Tile::offset(key, db) + dim]) << (8 * (i % 4));
      }
      v[db][0] = fp8_detail::canonical(w[0]);
      v[db][1] = fp8_detail::canonical(w[1]);
    }
  }

  template <class Op>
  static __device__ __forceinline__ void qk_step(float (&s)[Cfg::kMTiles][kSTiles][4],
                                                 const std::uint32_t (&qa)[Cfg::kMTiles][Base::kQWords], const KFrags& k) {
#pragma unroll
    for (int kb = 0; kb < kSTiles; ++kb)
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) fp8_detail::mfma_16x16x32(s[mt][kb], k[kb], qa[mt]);
  }

  template <class Op>
  static __device__ __forceinline__ void pv_step(float (&o)[Cfg::kMTiles][kOTiles][4],
                                                 const std::uint32_t (&pa)[Cfg::kMTiles][Cfg::kPvSteps][Base::kPWords],
                                                 const VFrags& v, int kk) {
#pragma unroll
    for (int db = 0; db < kOTiles; ++db)
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) fp8_detail::mfma_16x16x32(o[mt][db], v[db], pa[mt][kk]);
  }

  // P^T of each 32-key step: block 2kk's four keys, then block 2kk + 1's (header).
  template <class Op>
  static __device__ __forceinline__ void pack_p(std::uint32_t (&pa)[Cfg::kPvSteps][Base::kPWords],
                                                const float (&s)[kSTiles][4]) {
#pragma unroll
    for (int kk = 0; kk < Cfg::kPvSteps; ++kk) {
      pa[kk][0] = fp8_detail::pack4(s[2 * kk][0], s[2 * kk][1], s[2 * kk][2], s[2 * kk][3]);
      pa[kk][1] = fp8_detail::pack4(s[2 * kk + 1][0], s[2 * kk + 1][1], s[2 * kk + 1][2], s[2 * kk + 1][3]);
    }
  }
  // O leaves as the 16-bit tile writes it (the dims of D are not permuted here).
};

// fp8 e4m3 K and V with 16-bit Q and P: the decode kernel's inputs (its queries stay bf16 or
// f16, and P is kept in f16 as on NVIDIA, so no 8-bit rounding of Q or P is added). The
// products are the 16-bit tile's v_mfma_f32_16x16x16f16; the K and V bytes become f16
// operands in registers by bit moves (e4m3_to_f16.hpp: a v_perm_b32 and three VALU ops per
// two values), the same on gfx942 (FNUZ hardware) and gfx950 (OCP). Those operands are 2^-8
// of the values: kQkScale and kPvScale give it back. The reads and the permuted dims are
// WarpTileWideReads' with 1-byte elements: a lane's K chunk serves four k16 steps, its V^T
// fragments come from kOTiles bytes of each of four key rows.
template <class Cfg>
struct WarpTileKvFp8 : WarpTileWideReads<Cfg, 1> {
  using Base = WarpTileWideReads<Cfg, 1>;
  using typename Base::KFrags;
  using typename Base::VFrags;
  using Base::kOTiles;
  using Base::kSTiles;
  using Base::kVWords;
  static constexpr float kQkScale = e4m3::kE4m3AsF16Scale, kPvScale = e4m3::kE4m3AsF16Scale;

  // e4m3 byte j_lo of lo and byte j_hi of hi as f16x2 (2^-8 of each).
  static __device__ __forceinline__ std::uint32_t f16x2(std::uint32_t hi, std::uint32_t lo, int j_lo, int j_hi) {
    return e4m3::f16x2_from_high_bytes(__builtin_amdgcn_perm(hi, lo, e4m3::byte_pair_selector(j_lo, j_hi)));
  }

  static __device__ __forceinline__ void load_k_step(KFrags& k, const unsigned char* k_tile, int k_off, int kk) {
#pragma unroll
    for (int kb = 0; kb < kSTiles; ++kb) {
      const std::uint32_t w = *reinterpret_cast<const std::uint32_t*>(Base::k_step_at(k_tile, k_off, kb, kk));
      k[kb][0] = f16x2(w, w, 0, 1);
      k[kb][1] = f16x2(w, w, 2, 3);
    }
  }
  static __device__ __forceinline__ void load_v_step(VFrags& v, const unsigned char* v_tile, int kk) {
    std::uint32_t r[mfma16::kPerLane][kVWords];
    Base::load_v_rows(r, v_tile, kk);
#pragma unroll
    for (int db = 0; db < kOTiles; ++db) {  // dim kOTiles (l % 16) + db: byte db % 4 of word db / 4
      const int w = db / 4, j = db % 4;
      v[db][0] = f16x2(r[1][w], r[0][w], j, j);  // keys 4 (l / 16) + 0, + 1
      v[db][1] = f16x2(r[3][w], r[2][w], j, j);  // + 2, + 3
    }
  }
};

}  // namespace schedlab::gpu::attn
