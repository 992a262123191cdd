// Warp-level matrix primitives for sm_80+ (used on sm_90a): mma.sync m16n8k16 with fp32
// accumulation, ldmatrix, and packed conversions. Fragment layouts are PTX ISA's
// (section "Matrix Fragments for mma.m16n8k16"): with g = lane / 4 and t = lane % 4,
//   A (16x16, row): a0,a1 = (g, 2t..2t+1)  a2,a3 = (g+8, 2t..)  a4,a5 = (g, 2t+8..)  a6,a7 = (g+8, 2t+8..)
//   B (16x8, col):  b0,b1 = (k 2t..2t+1, n g)  b2,b3 = (k 2t+8.., n g)
//   C (16x8):       c0,c1 = (g, 2t..2t+1)  c2,c3 = (g+8, 2t..2t+1)
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace schedlab::gpu::mma {

inline constexpr bool kHasMatrixUnits = true;
inline constexpr const char* kMatrixInstruction = "mma.sync.m16n8k16 (HMMA)";

struct Bf16 {};
struct F16 {};

// The lane index the fragment layouts use (a 32-lane warp here; AMD emulates on halves).
__device__ __forceinline__ int frag_lane() { return static_cast<int>(threadIdx.x) % 32; }

template <class T>
__device__ __forceinline__ void mma_16816(float (&c)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<T, Bf16>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8x8 b16 matrices; lane l supplies the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const void* row_ptr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_ptr)));
}
// ldmatrix_x4_trans at a shared-memory address already in the shared window (smem_addr), for
// callers that derive each lane's address by integer arithmetic rather than from a pointer.
__device__ __forceinline__ void ldmatrix_x4_trans_shared(std::uint32_t (&r)[4], std::uint32_t shared_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const void* row_ptr) {
  ldmatrix_x4_trans_shared(r, smem_addr(row_ptr));
}

template <class T>
__device__ __forceinline__ std::uint32_t pack2(float lo, float hi) {
  if constexpr (std::is_same_v<T, Bf16>) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t*>(&v);
  } else {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<std::uint32_t*>(&v);
  }
}

// Two OCP e4m3 values (low byte first) to f16x2, exactly (every e4m3 value is an f16).
__device__ __forceinline__ std::uint32_t fp8x2_to_f16x2(std::uint16_t v) {
  std::uint32_t out;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(out) : "h"(v));
  return out;
}

// Four floats to e4m3 bytes (x0 in the low byte), round to nearest even, saturating at 448.
__device__ __forceinline__ std::uint32_t pack4_e4m3(float x0, float x1, float x2, float x3) {
  std::uint16_t lo, hi;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(lo) : "f"(x1), "f"(x0));  // first operand: high byte
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(hi) : "f"(x3), "f"(x2));
  return std::uint32_t(lo) | (std::uint32_t(hi) << 16);
}

// The e4m3 pair in 16-bit half `half` of w: the PTX names the half, so ptxas reads it in place
// (F2FP ... R.H1) where a shift would take an instruction of its own.
__device__ __forceinline__ std::uint32_t fp8x2_half_to_f16x2(std::uint32_t w, int half) {
  std::uint32_t out;
  if (half == 0) asm("{\n .reg .b16 lo, hi;\n mov.b32 {lo, hi}, %1;\n cvt.rn.f16x2.e4m3x2 %0, lo;\n}\n" : "=r"(out) : "r"(w));
  else asm("{\n .reg .b16 lo, hi;\n mov.b32 {lo, hi}, %1;\n cvt.rn.f16x2.e4m3x2 %0, hi;\n}\n" : "=r"(out) : "r"(w));
  return out;
}

// Bytes of {hi:lo} picked by the selector's nibbles (PRMT).
__device__ __forceinline__ std::uint32_t byte_perm(std::uint32_t lo, std::uint32_t hi, std::uint32_t selector) {
  return __byte_perm(lo, hi, selector);
}

// 2^x for softmax: ex2.approx.ftz (2 ulp, denormals flushed). exp2f adds a denormal fix-up
// around every call, measured at 2-3% of the prefill kernel (kernels/prefill/LOG.md); the
// probabilities it feeds are rounded to 16 bits right after.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace schedlab::gpu::mma
