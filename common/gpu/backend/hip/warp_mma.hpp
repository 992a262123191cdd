// The CUDA backend's warp-fragment API (warp_mma.hpp) on AMD CDNA, EMULATED: the m16n8k16
// fragment layouts of a 32-lane warp are kept, each half of the wave64 computes them with
// VALU FMAs and cross-lane shuffles (width 32; the upper half duplicates the lower). This
// keeps one kernel source compiling for gfx942/gfx950 with the same schedule and hints;
// it is not an MFMA kernel (the results record kMatrixInstruction), and no AMD timing is
// claimed. No kernel computes with it on AMD now: the prefill and decode kernels use the native MFMA warp tile (attention_tile.hpp;
// the decode kernel picks it where kHasMatrixUnits is false, kernels/decode/
// paged_decode_warp_tile.cuh). Their code still names these fragments and the helpers
// below (pack2, fast_exp2) where they are not vendor-specific.
#pragma once
#include <hip/hip_runtime.h>

#include <cstdint>
#include <type_traits>

#include "common/numeric.hpp"

namespace schedlab::gpu::mma {

inline constexpr bool kHasMatrixUnits = false;
inline constexpr const char* kMatrixInstruction = "emulated m16n8k16 (VALU FMA + cross-lane shuffles)";
inline constexpr int kFragWidth = 32;  // lanes of one emulated warp

struct Bf16 {};
struct F16 {};

__device__ __forceinline__ int frag_lane() { return static_cast<int>(threadIdx.x) % kFragWidth; }

template <class T>
__device__ __forceinline__ float lo_of(std::uint32_t v) {
  if constexpr (std::is_same_v<T, Bf16>) return numeric::bf16_bits_to_float(static_cast<std::uint16_t>(v & 0xffffu));
  else return numeric::f16_bits_to_float(static_cast<std::uint16_t>(v & 0xffffu));
}
template <class T>
__device__ __forceinline__ float hi_of(std::uint32_t v) {
  if constexpr (std::is_same_v<T, Bf16>) return numeric::bf16_bits_to_float(static_cast<std::uint16_t>(v >> 16));
  else return numeric::f16_bits_to_float(static_cast<std::uint16_t>(v >> 16));
}

// The emulation is out of line (noinline): inlined into every unrolled k-step it makes the
// gfx9 compile of a decode instantiation take minutes, and it is never timed anyway.
#define SCHEDLAB_EMULATED __device__ __attribute__((noinline))

// c (row g, g+8; cols 2t, 2t+1) += A B, gathering row g / g+8 of A from the 4 lanes 4g..4g+3
// and columns 2t, 2t+1 of B from lanes with those g, as the PTX fragment layouts place them.
template <class T>
SCHEDLAB_EMULATED void mma_16816(float (&c)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  const int lane = frag_lane(), g = lane / 4, t = lane % 4;
#pragma unroll
  for (int kq = 0; kq < 4; ++kq) {  // the 4 lanes holding k = 2kq.. and 2kq+8..
    const std::uint32_t a_lo0 = __shfl(a[0], 4 * g + kq, kFragWidth), a_hi0 = __shfl(a[2], 4 * g + kq, kFragWidth);
    const std::uint32_t a_lo1 = __shfl(a[1], 4 * g + kq, kFragWidth), a_hi1 = __shfl(a[3], 4 * g + kq, kFragWidth);
#pragma unroll
    for (int j = 0; j < 2; ++j) {  // output columns n = 2t + j live in lanes 4n + kq
      const int n = 2 * t + j;
      const std::uint32_t b_lo = __shfl(b[0], 4 * n + kq, kFragWidth), b_hi = __shfl(b[1], 4 * n + kq, kFragWidth);
      c[j] += lo_of<T>(a_lo0) * lo_of<T>(b_lo) + hi_of<T>(a_lo0) * hi_of<T>(b_lo) + lo_of<T>(a_hi0) * lo_of<T>(b_hi) +
              hi_of<T>(a_hi0) * hi_of<T>(b_hi);
      c[2 + j] += lo_of<T>(a_lo1) * lo_of<T>(b_lo) + hi_of<T>(a_lo1) * hi_of<T>(b_lo) +
                  lo_of<T>(a_hi1) * lo_of<T>(b_hi) + hi_of<T>(a_hi1) * hi_of<T>(b_hi);
    }
  }
}

// ldmatrix: lane l of each 32-lane half supplies the address of row l % 8 of matrix l / 8;
// lane (g, t) receives elements (g, 2t..2t+1) of each matrix (trans: (2t..2t+1, g)).
SCHEDLAB_EMULATED void ldmatrix_x4(std::uint32_t (&r)[4], const void* row_ptr) {
  const int lane = frag_lane(), g = lane / 4, t = lane % 4;
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    const auto row = reinterpret_cast<const unsigned char*>(__shfl(reinterpret_cast<std::uintptr_t>(row_ptr), 8 * m + g, kFragWidth));
    r[m] = *reinterpret_cast<const std::uint32_t*>(row + 4 * t);
  }
}
SCHEDLAB_EMULATED void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* row_ptr) {
  const int lane = frag_lane(), g = lane / 4, t = lane % 4;
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    const auto r0 = reinterpret_cast<const unsigned char*>(__shfl(reinterpret_cast<std::uintptr_t>(row_ptr), 8 * m + 2 * t, kFragWidth));
    const auto r1 = reinterpret_cast<const unsigned char*>(__shfl(reinterpret_cast<std::uintptr_t>(row_ptr), 8 * m + 2 * t + 1, kFragWidth));
    r[m] = std::uint32_t(*reinterpret_cast<const std::uint16_t*>(r0 + 2 * g)) |
           (std::uint32_t(*reinterpret_cast<const std::uint16_t*>(r1 + 2 * g)) << 16);
  }
}

template <class T>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, Bf16>)
    return std::uint32_t(numeric::float_to_bf16_bits(lo)) | (std::uint32_t(numeric::float_to_bf16_bits(hi)) << 16);
  else
    return std::uint32_t(numeric::float_to_f16_bits(lo)) | (std::uint32_t(numeric::float_to_f16_bits(hi)) << 16);
}

__device__ __forceinline__ std::uint32_t fp8x2_to_f16x2(std::uint16_t v) {
  return pack2<F16>(numeric::fp8_e4m3_bits_to_float(static_cast<std::uint8_t>(v & 0xff)),
                    numeric::fp8_e4m3_bits_to_float(static_cast<std::uint8_t>(v >> 8)));
}

// Bytes of {hi:lo} picked by the selector's low four nibbles (CUDA's __byte_perm, no sign mode).
__device__ __forceinline__ std::uint32_t byte_perm(std::uint32_t lo, std::uint32_t hi, std::uint32_t selector) {
  const std::uint64_t both = (std::uint64_t(hi) << 32) | lo;
  std::uint32_t out = 0;
  for (int i = 0; i < 4; ++i) out |= std::uint32_t((both >> (8 * ((selector >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return out;
}

__device__ __forceinline__ float fast_exp2(float x) { return exp2f(x); }

}  // namespace schedlab::gpu::mma
