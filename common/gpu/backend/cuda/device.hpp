// CUDA device primitives behind schedlab::gpu (device.hpp).
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "common/gpu/arch.hpp"
#include "common/gpu/sched.hpp"

namespace schedlab::gpu {

inline constexpr int kWarpSize = 32;
inline constexpr int kMaxSmemPerBlock = nvidia::kMaxSmemPerBlock;  // shared memory per block, bytes
// The architectures a build of this backend holds code for (CMake's sm_90a / gfx942;gfx950): host
// code dispatches a device to its own instantiations among them (kernels/prefill/flash_prefill.cuh).
inline constexpr GpuArch kBuildArchs[] = {GpuArch::sm_90a};
// NVIDIA exposes no instruction-scheduling or wave-priority hint to CUDA C++: the hints
// below compile to nothing, and the harness records that they were no-ops here.
inline constexpr bool kSchedHintsHonored = false;
inline constexpr bool kPriorityHonored = false;

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) % kWarpSize; }
__device__ __forceinline__ int warp_id() { return static_cast<int>(threadIdx.x) / kWarpSize; }
__device__ __forceinline__ int warp_group_id() { return static_cast<int>(threadIdx.x) / (4 * kWarpSize); }
__device__ __forceinline__ void block_sync() { __syncthreads(); }
// A barrier that orders shared memory only: bar.sync never waits for cp.async copies (they are
// waited for with async_wait), so this is block_sync.
__device__ __forceinline__ void block_sync_shared() { __syncthreads(); }
// block_sync_shared for warps that reach the barrier at different instructions (the 8-wave
// ping-pong's groups pass it a phase apart): barrier.sync without .aligned, which PTX allows
// there; __syncthreads is barrier.sync.aligned, whose use from different instructions is
// undefined (compute-sanitizer's synccheck reports it as divergent threads at a barrier).
__device__ __forceinline__ void block_sync_shared_divergent() { asm volatile("barrier.sync 0;" ::: "memory"); }
__device__ __forceinline__ void warp_sync() { __syncwarp(); }

// Whether the predicate holds in any lane of the warp (a warp-uniform branch condition).
__device__ __forceinline__ bool warp_any(bool pred) { return __any_sync(0xffffffffu, pred) != 0; }
// Whether the predicate holds in every lane of the warp.
__device__ __forceinline__ bool warp_all(bool pred) { return __all_sync(0xffffffffu, pred) != 0; }
// Whether the predicate holds in any thread of the block: a block barrier that carries it.
// The AMD form passes it through the first word of the block's dynamic shared memory, which
// the caller must be done with; here the barrier itself carries it (__syncthreads_or).
__device__ __forceinline__ bool block_any_in_spent_smem(bool pred) { return __syncthreads_or(pred) != 0; }

template <class T>
__device__ __forceinline__ T shfl_xor(T v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
template <class T>
__device__ __forceinline__ T shfl(T v, int src_lane) { return __shfl_sync(0xffffffffu, v, src_lane); }

// Device-scope fence: this thread's earlier global writes and atomics are seen by every
// later observer of its later ones (a work counter handed between CTAs).
__device__ __forceinline__ void fence_device() { __threadfence(); }
// A load of a word other CTAs change with atomics: not served from this SM's L1.
__device__ __forceinline__ int load_coherent(const int* p) { return *static_cast<const volatile int*>(p); }
__device__ __forceinline__ float load_coherent(const float* p) { return *static_cast<const volatile float*>(p); }

template <Sched kMask>
__device__ __forceinline__ void sched_barrier() {}
template <Sched kMask, int kSize, int kSyncId>
__device__ __forceinline__ void sched_group_barrier() {}
template <int kPriority>
__device__ __forceinline__ void set_priority() {}

// Async global->shared copy of 16 bytes per thread (cp.async.cg bypasses L1: the KV and
// K/V tiles are streamed once). `valid == false` zero-fills the destination instead.
__device__ __forceinline__ void async_copy_16(void* smem_dst, const void* gmem_src, bool valid = true) {
  const auto dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(src_bytes)
               : "memory");
}
// The lane-contiguous form (lane i writes smem_wave_base + 16 * i) is what AMD's
// global_load_lds can do; on NVIDIA it is the general form with that address.
__device__ __forceinline__ void async_copy_16_lanes(void* smem_wave_base, const void* gmem_src) {
  async_copy_16(static_cast<char*>(smem_wave_base) + 16 * lane_id(), gmem_src);
}
// Bulk copies (sm_90's TMA unit): one instruction moves a contiguous run of bytes (a multiple
// of 16, 16-byte aligned) from global to shared memory and counts them against an mbarrier in
// shared memory, which completes its phase when the bytes it expects have landed.
inline constexpr bool kHasBulkCopy = true;
static_assert([] {
  for (GpuArch a : kBuildArchs)
    if (has_bulk_copy(a) != kHasBulkCopy) return false;
  return true;
}(), "the host's view of the architectures (common/gpu/arch.hpp) and this backend agree");
// Kernel parameters whose address is taken (a tensor map inside them): not copied to local memory.
#define SCHEDLAB_GRID_CONSTANT __grid_constant__
__device__ __forceinline__ unsigned smem_u32(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(arrivals) : "memory");
}
// Makes initialized barriers visible to the bulk-copy (async) proxy before it signals them.
__device__ __forceinline__ void mbarrier_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
// One arrival that also adds `bytes` to the transfer count the phase waits for.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
// A box of a 2D tensor map (api::TensorMap, in kernel-parameter, constant or global memory)
// at element coordinates (c0 inner, c1 outer); its shared destination is 1024-byte aligned
// for the 128-byte swizzle.
__device__ __forceinline__ void bulk_tensor_copy_2d(void* smem_dst, const void* map, int c0, int c1, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          smem_u32(smem_dst)),
      "l"(map), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done;\n"
      "WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n @!done bra WAIT_%=;\n}\n" ::"r"(smem_u32(bar)),
      "r"(parity)
      : "memory");
}
// mbarrier_wait for a whole warp that leaves together: every lane tests the phase and the
// warp loops until all saw it complete (vote.all), so the branch is warp-uniform (bra.uni) and
// ptxas knows the warp converged after it. Code after a per-lane wait loop is, to ptxas,
// possibly divergent: in the Hopper prefill's persistent loops that moved the consumers' wgmma
// descriptors from uniform to vector registers. A lane that saw the phase early tests it
// again harmlessly: the barrier cannot complete its next phase without this warp.
__device__ __forceinline__ void mbarrier_wait_warp(std::uint64_t* bar, unsigned parity) {
  asm volatile(
      "{\n .reg .pred done, all;\n"
      "WAIT_%=:\n mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " vote.sync.all.pred all, done, 0xffffffff;\n @!all bra.uni WAIT_%=;\n}\n" ::"r"(smem_u32(bar)),
      "r"(parity)
      : "memory");
}
// Orders this thread's ordinary shared-memory writes before later bulk copies to the same bytes.
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Wait until at most kPendingGroups committed groups are still in flight.
// kCopiesPerGroup matters on AMD only, whose counter counts copies, not groups.
template <int kPendingGroups, int kCopiesPerGroup = 1>
__device__ __forceinline__ void async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPendingGroups) : "memory");
}
// The same wait where the newest groups may be empty: cp.async groups count even when empty,
// so the flag (which AMD's copy counter needs) changes nothing here.
template <int kPendingGroups, int kCopiesPerGroup>
__device__ __forceinline__ void async_wait_groups(bool /*newer_groups_full*/) {
  async_wait<kPendingGroups, kCopiesPerGroup>();
}
// cp.async takes any per-thread shared address; lane-contiguous copies gain nothing.
inline constexpr bool kLaneCopyIsAsync = false;
inline constexpr const char* kAsyncCopyMode = "cp.async";

__device__ __forceinline__ std::uint64_t cycle_counter() { return static_cast<std::uint64_t>(clock64()); }
// Nanoseconds on a clock every SM shares (%globaltimer), and the SM this thread runs on.
__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

// In a kernel launched with LaunchConfig::overlap_prior: wait until the previous kernel in
// the stream has finished and its writes are visible (PTX griddepcontrol, sm_90).
__device__ __forceinline__ void wait_prior_grid() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
// In the kernel a dependent launch follows: once every CTA has called this (or exited), the
// dependent kernel may be scheduled; it still waits in wait_prior_grid() for this one's writes.
__device__ __forceinline__ void allow_dependent_launch() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }

}  // namespace schedlab::gpu
