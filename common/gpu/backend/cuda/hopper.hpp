// sm_90a primitives of the Hopper prefill family, beside the mbarrier and bulk-copy wrappers
// of device.hpp: warpgroup matrix ops (wgmma) and their shared-memory descriptors, the
// warpgroup fences, named barriers, register reallocation (setmaxnreg) and 4D bulk tensor
// copies. CUDA only: the AMD build has no such family (its kernels never include this).
// Every wrapper is one PTX instruction (PTX ISA 8.x, sections "Asynchronous Warpgroup Level
// Matrix Multiply-Accumulate" and "Parallel Synchronization and Communication").
#pragma once
#include <cstdint>
#include <type_traits>

#include "common/gpu/backend/cuda/device.hpp"
#include "common/gpu/backend/cuda/warp_mma.hpp"
#include "common/gpu/backend/cuda/wgmma_ops.hpp"

namespace schedlab::gpu {

inline constexpr int kWarpGroupThreads = 128;  // a warpgroup: 4 consecutive warps

// --- mbarriers: the plain arrival (a consumer releasing a pipeline stage) ----------------
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

// --- bulk tensor copies of a 4D map (dims: head_dim, position, head, batch) --------------
__device__ __forceinline__ void bulk_tensor_copy_4d(void* smem_dst, const void* map, int c0, int c1, int c2, int c3,
                                                    std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(smem_u32(smem_dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(smem_u32(bar))
      : "memory");
}

// --- named barriers (ids 1..15; 0 is __syncthreads) --------------------------------------
// sync: wait until `threads` threads (this warp's included) have arrived at `id`.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// arrive: count this warp at `id` without waiting (the other side syncs).
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// --- register reallocation between warpgroups (sm_90a) ------------------------------------
// Takes effect only when the kernel has a register cap at entry (__launch_bounds__ with a
// minimum of 1 block); every warp of the warpgroup executes the same one.
template <int kRegs>
__device__ __forceinline__ void regs_increase() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void regs_decrease() {
  static_assert(kRegs % 8 == 0 && kRegs >= 24 && kRegs <= 256, "setmaxnreg takes a multiple of 8 in [24, 256]");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// Four 8x8 b16 matrices to shared memory (sm_90): lane l supplies the address of row l % 8 of
// matrix l / 8; register m of lane (g, t) is row g of matrix m, elements 2t and 2t + 1. The
// address is in the shared window already (for lanes that derive it by integer arithmetic);
// stmatrix_x4 takes a pointer.
__device__ __forceinline__ void stmatrix_x4_shared(std::uint32_t shared_address, const std::uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(shared_address), "r"(r[0]),
               "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}
__device__ __forceinline__ void stmatrix_x4(void* row_ptr, const std::uint32_t (&r)[4]) {
  stmatrix_x4_shared(smem_u32(row_ptr), r);
}

// One lane of the warp (the lowest active): the issuer of a warp's bulk copies.
__device__ __forceinline__ bool elect_one() {
  unsigned pred = 0;
  asm volatile(
      "{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(pred));
  return pred != 0;
}

namespace wgmma {

// Shared-memory matrix descriptor (PTX "Matrix Descriptor Format") for tiles stored as the
// bulk copies leave them: 64-column blocks of 128-byte rows, 128-byte swizzled, each block
// 1024-byte aligned. start: the operand's first byte; lbo/sbo: the leading / stride byte
// offsets. With this swizzle:
//   K-major (Q as A, K as B of S = Q K^T): rows 8 apart are 1024 bytes apart (sbo); the
//     leading offset is unused (a k16 step stays inside one 128-byte row); a k16 step within
//     the row adds 32 bytes to start.
//   MN-major (V as B of O = P V, transposed): 8 keys are one 1024-byte group (sbo) and the
//     64-column blocks of head_dim are `lbo` apart (the tile's rows x 128 bytes).
__device__ __forceinline__ std::uint64_t descriptor(const void* start, std::uint32_t lbo, std::uint32_t sbo) {
  constexpr std::uint64_t kSwizzle128B = 1;
  const std::uint64_t addr = smem_u32(start);
  return ((addr & 0x3FFFF) >> 4) | (std::uint64_t((lbo >> 4) & 0x3FFF) << 16) |
         (std::uint64_t((sbo >> 4) & 0x3FFF) << 32) | (kSwizzle128B << 62);
}

// The descriptor of the same layout `bytes` further on (a multiple of 16 that stays inside
// shared memory): the start address / 16 is the low field, so the offset adds to it. One add
// where building each descriptor anew takes a chain of uniform-datapath instructions before
// every wgmma.
__device__ __forceinline__ std::uint64_t advance(std::uint64_t desc, std::uint32_t bytes) { return desc + (bytes >> 4); }

// Orders this thread's register writes (accumulators, A fragments) before the next wgmma.
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// Closes the wgmma ops issued since the last commit into one group.
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most kPending committed groups are still running.
template <int kPending>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Keeps the compiler from moving reads or writes of accumulators across a wgmma issue or
// wait: their values change asynchronously between the two.
template <int kN>
__device__ __forceinline__ void fence_operands(float (&d)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// The same for A fragments read from registers: they stay live (and unchanged) until here,
// so the compiler cannot hand a running wgmma's A registers to later values.
template <int kN>
__device__ __forceinline__ void fence_operands(std::uint32_t (&a)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+r"(a[i])::"memory");
}

// D (64 x kN per warpgroup, kN / 2 floats per thread) (+)= A B: A and B from shared memory,
// both K-major.
template <int kN, class T>
__device__ __forceinline__ void mma_ss(float (&d)[kN / 2], std::uint64_t a, std::uint64_t b, bool accumulate) {
  detail::Op<kN, T>::ss(d, a, b, accumulate);
}
// The same with A from registers (the m16n8k16 A-fragment layout per warp, warp w of the
// warpgroup holding rows 16w..16w+15) and B from shared memory, MN-major (kTransB, 16-bit
// operands only) or K-major.
template <int kN, class T, bool kTransB = true>
__device__ __forceinline__ void mma_rs(float (&d)[kN / 2], const std::uint32_t (&a)[4], std::uint64_t b,
                                       bool accumulate) {
  if constexpr (std::is_same_v<T, E4m3>) detail::Op<kN, T>::rs(d, a, b, accumulate);
  else detail::Op<kN, T>::template rs<kTransB>(d, a, b, accumulate);
}

}  // namespace wgmma
}  // namespace schedlab::gpu
