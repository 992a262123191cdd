// The attention warp tile on AMD CDNA3/CDNA4 (gfx942, gfx950): wave64 MFMA 16x16x16 with
// fp32 accumulation. The kernel's names are the CUDA tile's (backend/cuda/attention_tile.hpp);
// the products are transposed so that a lane owns one query:
//   S^T (keys x queries) = K Q^T:  A = K (lane: key l%16, dims 4(l/16)..+3: one 8-byte
//                                  ds_read), B = Q^T (lane: query l%16, the same dims)
//   O^T (dims x queries) += V^T P^T:  A = V^T (lane: dim l%16, keys 4(l/16)..+3: four 2-byte
//                                  reads of one column), B = P^T, which is S^T's D layout
//                                  packed to 16 bits in registers
// In both D layouts lane l holds query l%16 (mfma_layout.hpp), so the softmax state is per
// lane, a row reduction is in-lane and then XOR 16 and 32, and O leaves as 8-byte stores.
// One row slot per lane, four elements per slot and 16-key block.
// The V^T read is four ds_read_u16 on both targets: gfx950's ds_read_b64_tr_b16 would make it
// one instruction, but its lane mapping could not be checked here without hardware.
#pragma once
#include <hip/hip_runtime.h>

#include <cstdint>
#include <type_traits>

#include "common/gpu/backend/hip/device.hpp"
#include "common/gpu/backend/hip/mfma_layout.hpp"
#include "common/gpu/backend/hip/warp_mma.hpp"

namespace schedlab::gpu::attn {

inline constexpr const char* kMatrixInstruction =
    "v_mfma_f32_16x16x16{bf16_1k,f16} (wave64 MFMA; K and Q by ds_read_b64, V^T by ds_read_u16)";

namespace detail {
using Bf16x4 = short __attribute__((ext_vector_type(4)));
using F16x4 = _Float16 __attribute__((ext_vector_type(4)));
using F32x4 = float __attribute__((ext_vector_type(4)));

// D += A B for one 16x16x16 product; a, b: the lane's four 16-bit elements, two per word.
template <class Op>
__device__ __forceinline__ void mfma_16x16x16(float (&d)[4], const std::uint32_t (&a)[2], const std::uint32_t (&b)[2]) {
  F32x4 acc = {d[0], d[1], d[2], d[3]};
  if constexpr (std::is_same_v<Op, mma::Bf16>)
    acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(__builtin_bit_cast(Bf16x4, a), __builtin_bit_cast(Bf16x4, b), acc,
                                                    0, 0, 0);
  else
    acc = __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(F16x4, a), __builtin_bit_cast(F16x4, b), acc, 0, 0, 0);
#pragma unroll
  for (int i = 0; i < 4; ++i) d[i] = acc[i];
}

// Two floats to a 16-bit pair (low first), round to nearest even, by the hardware's
// conversions: gfx950 has v_cvt_pk_bf16_f32, gfx942 a short VALU sequence. (warp_mma.hpp's
// pack2 is the portable bit-exact software one, with branches, kept for the emulation.)
template <class Op>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<Op, mma::Bf16>) {
    using Bf16x2 = __bf16 __attribute__((ext_vector_type(2)));
    return __builtin_bit_cast(std::uint32_t, Bf16x2{static_cast<__bf16>(lo), static_cast<__bf16>(hi)});
  } else {
    using F16x2 = _Float16 __attribute__((ext_vector_type(2)));
    return __builtin_bit_cast(std::uint32_t, F16x2{static_cast<_Float16>(lo), static_cast<_Float16>(hi)});
  }
}

__device__ __forceinline__ void load_b64(std::uint32_t (&r)[2], const unsigned char* p) {
  const uint2 v = *reinterpret_cast<const uint2*>(p);
  r[0] = v.x;
  r[1] = v.y;
}
// kWords consecutive words in one ds_read (b32, b64 or b128).
template <int kWords>
__device__ __forceinline__ void load_words(std::uint32_t (&r)[kWords], const unsigned char* p) {
  static_assert(kWords == 1 || kWords == 2 || kWords == 4, "a b32, b64 or b128 read");
  if constexpr (kWords == 4) {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
  } else if constexpr (kWords == 2) {
    load_b64(r, p);
  } else {
    r[0] = *reinterpret_cast<const std::uint32_t*>(p);
  }
}
}  // namespace detail

template <class Cfg>
struct WarpTile {
  static constexpr int kMmaRows = mfma16::kDim;               // queries per m16 tile
  static constexpr int kSTiles = Cfg::kBlockN / mfma16::kDim;   // 16-key D tiles of S^T
  static constexpr int kOTiles = Cfg::kHeadDim / mfma16::kDim;  // 16-dim D tiles of O^T
  static constexpr int kRowSlots = 1;                         // query l % 16
  static constexpr int kPerSlot = mfma16::kPerLane;           // 4 keys (or dims) per D tile
  static constexpr int kQWords = 2;                           // Q^T B fragment of one k16 step
  static constexpr int kPWords = 2;                           // P^T B fragment of one 16-key step
  static constexpr int kKLoadsPerStep = kSTiles;              // one ds_read_b64 per 16-key block
  static constexpr int kMmasPerKLoad = Cfg::kMTiles;          // ... feeding one MFMA per m16 tile
  // What a score and an output lack of their true value: 1 here, as 16-bit operands hold their
  // values (the fp8 tiles of attention_tile_fp8.hpp set their own).
  static constexpr float kQkScale = 1.f, kPvScale = 1.f;
  using KFrags = std::uint32_t[kSTiles][2];
  using VFrags = std::uint32_t[kOTiles][2];

  static __device__ __forceinline__ int lane() { return lane_id(); }
  // Query row (from row0) and key (from key0) of element i of accumulator tile n.
  static __device__ __forceinline__ int row(int row0, int) { return row0 + mfma16::d_col(lane()); }
  static __device__ __forceinline__ int col(int key0, int n, int i) {
    return key0 + n * mfma16::kDim + mfma16::d_row(lane(), i);
  }
  static __device__ __forceinline__ float row_max(float x) {
#pragma unroll
    for (int mask : mfma16::kColumnXorMasks) x = fmaxf(x, shfl_xor(x, mask));
    return x;
  }
  static __device__ __forceinline__ float row_sum(float x) {
#pragma unroll
    for (int mask : mfma16::kColumnXorMasks) x += shfl_xor(x, mask);
    return x;
  }

  // The lane's step-0 byte offset of a 16x16 operand read row-wise from a [row][dim] tile:
  // row l % 16, dims 4(l/16)..+3 = 8 bytes inside chunk (l/16)/2. The byte within the chunk
  // is added before Tile::at's XOR, which only flips chunk bits.
  template <class Tile>
  static __device__ __forceinline__ int row_read_offset(int row0) {
    const int l = lane();
    return Tile::lane_offset(row0 + mfma16::a_row(l), (l / mfma16::kDim) / 2) + 8 * ((l / mfma16::kDim) % 2);
  }

  // Q^T as the B fragment of k16 step kk: query l % 16 of m16 tile mt, dims 4(l/16)..+3.
  static __device__ __forceinline__ void load_q_step(std::uint32_t (&qa)[kQWords], const unsigned char* q_tile, int mt,
                                                     int kk) {
    const int off = row_read_offset<typename Cfg::QTile>(warp_id() * Cfg::kMTiles * kMmaRows);
    detail::load_b64(qa, Cfg::QTile::at(q_tile, off, kk, mt * kMmaRows));
  }

  static __device__ __forceinline__ int k_lane_offset() { return row_read_offset<typename Cfg::KvTile>(0); }
  // K of k16 step kk as A fragments: key block kb, one ds_read_b64 each.
  static __device__ __forceinline__ void load_k_step(KFrags& k, const unsigned char* k_tile, int k_off, int kk) {
#pragma unroll
    for (int kb = 0; kb < kSTiles; ++kb) detail::load_b64(k[kb], Cfg::KvTile::at(k_tile, k_off, kk, kb * mfma16::kDim));
  }

  // V^T of keys 16kk..16kk+15 as A fragments: dim block db, lane dim l % 16, keys
  // 4(l/16)+i. Four rows, so four lane offsets (each row has its own swizzle).
  static __device__ __forceinline__ void load_v_step(VFrags& v, const unsigned char* v_tile, int kk) {
    using Tile = typename Cfg::KvTile;
    const int l = lane(), dim = mfma16::a_row(l);
    int off[mfma16::kPerLane];
#pragma unroll
    for (int i = 0; i < mfma16::kPerLane; ++i) off[i] = Tile::lane_offset(mfma16::a_k(l, i), dim / 8) + 2 * (dim % 8);
#pragma unroll
    for (int db = 0; db < kOTiles; ++db) {
      std::uint16_t e[mfma16::kPerLane];
#pragma unroll
      for (int i = 0; i < mfma16::kPerLane; ++i)
        e[i] = *reinterpret_cast<const std::uint16_t*>(Tile::at(v_tile, off[i], db, kk * mfma16::kDim));
      v[db][0] = std::uint32_t(e[0]) | (std::uint32_t(e[1]) << 16);
      v[db][1] = std::uint32_t(e[2]) | (std::uint32_t(e[3]) << 16);
    }
  }

  // S^T += K Q^T for one k16 step of every m16 tile.
  template <class Op>
  static __device__ __forceinline__ void qk_step(float (&s)[Cfg::kMTiles][kSTiles][4],
                                                 const std::uint32_t (&qa)[Cfg::kMTiles][kQWords], const KFrags& k) {
#pragma unroll
    for (int kb = 0; kb < kSTiles; ++kb)
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) detail::mfma_16x16x16<Op>(s[mt][kb], k[kb], qa[mt]);
  }

  // O^T += V^T P^T for the 16 keys of step kk of every m16 tile.
  template <class Op>
  static __device__ __forceinline__ void pv_step(float (&o)[Cfg::kMTiles][kOTiles][4],
                                                 const std::uint32_t (&pa)[Cfg::kMTiles][Cfg::kBlockN / 16][kPWords],
                                                 const VFrags& v, int kk) {
#pragma unroll
    for (int db = 0; db < kOTiles; ++db)
#pragma unroll
      for (int mt = 0; mt < Cfg::kMTiles; ++mt) detail::mfma_16x16x16<Op>(o[mt][db], v[db], pa[mt][kk]);
  }

  // P^T: S^T's D layout (keys 4(l/16)+i, query l%16) is the B layout of a 16-key step.
  template <class Op>
  static __device__ __forceinline__ void pack_p(std::uint32_t (&pa)[Cfg::kBlockN / 16][kPWords],
                                                const float (&s)[kSTiles][4]) {
#pragma unroll
    for (int kb = 0; kb < kSTiles; ++kb) {
      pa[kb][0] = detail::pack2<Op>(s[kb][0], s[kb][1]);
      pa[kb][1] = detail::pack2<Op>(s[kb][2], s[kb][3]);
    }
  }

  // The lane's query row of O: dims 4(l/16)..+3 of each 16-dim block, one 8-byte store each.
  template <class Op>
  static __device__ __forceinline__ void store_o_row(std::uint16_t* row_ptr, const float (&o)[kOTiles][4], int,
                                                     float inv) {
    const int dim0 = mfma16::d_row(lane(), 0);
#pragma unroll
    for (int db = 0; db < kOTiles; ++db)
      *reinterpret_cast<uint2*>(row_ptr + db * mfma16::kDim + dim0) =
          uint2{detail::pack2<Op>(o[db][0] * inv, o[db][1] * inv), detail::pack2<Op>(o[db][2] * inv, o[db][3] * inv)};
  }
};

// The decode kernel's warp tile (one m16 tile whose Q the caller packs, V^T for one 16-key
// step at a time): every shared-memory read is a whole 16-byte chunk per lane, or part of one.
// kKvBytes: bytes of a K or V element (2; the fp8 KV tile, WarpTileKvFp8, 1).
//   K and Q: a lane reads its K row's chunk 4 G + l / 16 once for kStepsPerChunk k16 steps
//   (G = kk / kStepsPerChunk): the head dims of step kk are permuted alike in K and Q
//   (qk_dim; S^T does not see the order), where WarpTile reads 8 bytes a step.
//   V^T: D row m of O tile db is head dim kOTiles m + db (not 16 db + m), so the A fragment of
//   lane l (row l % 16, keys 4 (l / 16) + i) is, for every tile at once, the kOTiles
//   consecutive dims kOTiles (l % 16) .. of four key rows: one 4- to 16-byte read per key and
//   one byte permute per fragment word, where WarpTile reads four 2-byte elements per tile.
//   The lane's O elements are then kHeadDim / 4 consecutive dims of its query row (o_col).
// Cfg::KvTile: XOR-swizzled rows, offset(row, c) = offset(row, 0) ^ 16 c (SmemTile's, and
// the decode's raw fp8 tile).
// Q^T is packed by the caller from values it reads itself (the decode kernel takes its few
// query rows straight from global memory): pack_q_step.
template <class Cfg, int kKvBytes = 2>
struct WarpTileWideReads : WarpTile<Cfg> {
  using Base = WarpTile<Cfg>;
  using typename Base::KFrags;
  using typename Base::VFrags;
  using Base::kOTiles;
  using Base::kQWords;
  using Base::kSTiles;
  using Base::lane;
  static_assert(Cfg::kMTiles == 1, "one m16 tile: the permuted dims are per tile");
  static constexpr int kStepsPerChunk = 16 / (mfma16::kPerLane * kKvBytes);  // 2 (16-bit) or 4 (fp8)

  // Head dim of element i of the lane's K (and Q^T) fragment of k16 step kk.
  static __device__ __forceinline__ int qk_dim(int kk, int i) { return mfma16::wide_qk_dim(lane(), kk, i, kKvBytes); }
  template <class Op, class At>
  static __device__ __forceinline__ void pack_q_step(std::uint32_t (&qa)[kQWords], int kk, At at) {
    const int row = mfma16::b_col(lane());
    qa[0] = detail::pack2<Op>(at(row, qk_dim(kk, 0)), at(row, qk_dim(kk, 1)));
    qa[1] = detail::pack2<Op>(at(row, qk_dim(kk, 2)), at(row, qk_dim(kk, 3)));
  }
  // The lane's K chunk of group 0; group G is chunk 4 G further (an XOR of 64 G bytes).
  static __device__ __forceinline__ int k_lane_offset() {
    const int l = lane();
    return Cfg::KvTile::offset(mfma16::a_row(l), l / mfma16::kDim);
  }
  // K bytes of step kk in key block kb (the caller's tile: one 16-token block).
  static __device__ __forceinline__ const unsigned char* k_step_at(const unsigned char* k_tile, int k_off, int kb,
                                                                   int kk) {
    constexpr int kStepBytes = mfma16::kPerLane * kKvBytes;
    return k_tile + kb * Cfg::KvTile::offset(mfma16::kDim, 0) + (k_off ^ (64 * (kk / kStepsPerChunk))) +
           kStepBytes * (kk % kStepsPerChunk);
  }
  static __device__ __forceinline__ void load_k_step(KFrags& k, const unsigned char* k_tile, int k_off, int kk) {
#pragma unroll
    for (int kb = 0; kb < kSTiles; ++kb) detail::load_b64(k[kb], k_step_at(k_tile, k_off, kb, kk));
  }

  static __device__ __forceinline__ int o_col(int n, int i) {
    return mfma16::wide_o_dim(mfma16::d_row(lane(), i), n, kOTiles);
  }

  // The lane's kOTiles elements of each of its four keys of step kk (keys 4 (l / 16) + i):
  // bytes kOTiles kKvBytes (l % 16) .. of each row, inside one 16-byte chunk.
  static constexpr int kVWords = kOTiles * kKvBytes / 4;
  static __device__ __forceinline__ void load_v_rows(std::uint32_t (&r)[mfma16::kPerLane][kVWords],
                                                     const unsigned char* v_tile, int kk) {
    static_assert(kVWords * 4 <= 16, "a lane's dims of a key lie in one 16-byte chunk");
    const int l = lane(), byte = mfma16::wide_o_dim(mfma16::a_row(l), 0, kOTiles) * kKvBytes;
#pragma unroll
    for (int i = 0; i < mfma16::kPerLane; ++i)
      detail::load_words(r[i], v_tile + Cfg::KvTile::offset(kk * mfma16::kDim + mfma16::a_k(l, i), byte / 16) + byte % 16);
  }
  static __device__ __forceinline__ void load_v_step(VFrags& v, const unsigned char* v_tile, int kk) {
    static_assert(kKvBytes == 2, "16-bit V here; WarpTileKvFp8 reads fp8 V");
    std::uint32_t r[mfma16::kPerLane][kVWords];
    load_v_rows(r, v_tile, kk);
#pragma unroll
    for (int db = 0; db < kOTiles; ++db) {  // dim kOTiles (l % 16) + db: half db % 2 of word db / 2
      const int w = db / 2, sel = db % 2 ? 0x07060302 : 0x05040100;  // two high or two low halves
      v[db][0] = __builtin_amdgcn_perm(r[1][w], r[0][w], sel);  // keys 4 (l / 16) + 0, + 1
      v[db][1] = __builtin_amdgcn_perm(r[3][w], r[2][w], sel);  // + 2, + 3
    }
  }
};

}  // namespace schedlab::gpu::attn
