// HIP (AMD CDNA) device primitives behind schedlab::gpu (device.hpp).
#pragma once
#include <hip/hip_runtime.h>

#include <cstdint>

#include "common/gpu/arch.hpp"
#include "common/gpu/sched.hpp"

namespace schedlab::gpu {

inline constexpr int kWarpSize = 64;  // gfx942 / gfx950 run wave64
inline constexpr int kMaxSmemPerBlock = amd::kMaxSmemPerBlock;  // LDS per workgroup, bytes (gfx950's)
// The architectures a build of this backend holds code for (CMake's sm_90a / gfx942;gfx950): host
// code dispatches a device to its own instantiations among them (kernels/prefill/flash_prefill.cuh).
inline constexpr GpuArch kBuildArchs[] = {GpuArch::gfx942, GpuArch::gfx950};
inline constexpr bool kSchedHintsHonored = true;
inline constexpr bool kPriorityHonored = true;

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) % kWarpSize; }
__device__ __forceinline__ int warp_id() { return static_cast<int>(threadIdx.x) / kWarpSize; }
__device__ __forceinline__ int warp_group_id() { return static_cast<int>(threadIdx.x) / (4 * kWarpSize); }
__device__ __forceinline__ void block_sync() { __syncthreads(); }
// A workgroup barrier that orders LDS only: the release fence waits for this wave's LDS
// operations (lgkmcnt), not for its global loads and asynchronous copies (vmcnt), which stay
// in flight across it; block_sync's fence waits for both. s_barrier between the two fences.
__device__ __forceinline__ void block_sync_shared() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup", "local");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup", "local");
}
// s_barrier counts each wave's arrival wherever it executes, so the form for waves that reach
// the barrier at different instructions is the same.
__device__ __forceinline__ void block_sync_shared_divergent() { block_sync_shared(); }
// A wave executes in lockstep; the fence keeps LDS traffic ordered around the sync point.
__device__ __forceinline__ void warp_sync() { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront"); }

// Whether the predicate holds in any lane of the warp (a warp-uniform branch condition).
// A ballot, not __any: that one is an ockl library call the device-only compile keeps.
__device__ __forceinline__ bool warp_any(bool pred) { return __builtin_amdgcn_ballot_w64(pred) != 0; }
// Whether the predicate holds in every active lane of the wave: none holds its negation.
__device__ __forceinline__ bool warp_all(bool pred) { return !warp_any(!pred); }
// Whether the predicate holds in any thread of the block, through the first word of the
// block's dynamic shared memory, which the caller must be done with. __syncthreads_or is the
// device library's work-group OR (__ockl_wgred_or_i32), which keeps an LDS array of its own:
// static LDS comes before the dynamic region, so beside 64 KiB of dynamic LDS (aligned to 1
// KiB, as the decode kernel's) the kernel no longer fits gfx942's 64 KiB.
__device__ __forceinline__ bool block_any_in_spent_smem(bool pred) {
  extern __shared__ int dynamic_smem_words[];
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) dynamic_smem_words[0] = 0;
  block_sync();
  if (warp_any(pred) && lane_id() == 0) __hip_atomic_fetch_or(dynamic_smem_words, 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  block_sync();
  return dynamic_smem_words[0] != 0;
}

template <class T>
__device__ __forceinline__ T shfl_xor(T v, int mask) { return __shfl_xor(v, mask); }
template <class T>
__device__ __forceinline__ T shfl(T v, int src_lane) { return __shfl(v, src_lane); }

// Device-scope fence: this thread's earlier global writes and atomics are seen by every
// later observer of its later ones (a work counter handed between CTAs).
__device__ __forceinline__ void fence_device() { __threadfence(); }
// A load of a word other CTAs change with atomics: not served from this SM's L1.
__device__ __forceinline__ int load_coherent(const int* p) { return *static_cast<const volatile int*>(p); }
__device__ __forceinline__ float load_coherent(const float* p) { return *static_cast<const volatile float*>(p); }

template <Sched kMask>
__device__ __forceinline__ void sched_barrier() { __builtin_amdgcn_sched_barrier(static_cast<int>(kMask)); }
template <Sched kMask, int kSize, int kSyncId>
__device__ __forceinline__ void sched_group_barrier() {
  __builtin_amdgcn_sched_group_barrier(static_cast<int>(kMask), kSize, kSyncId);
}
template <int kPriority>
__device__ __forceinline__ void set_priority() {
  static_assert(kPriority >= 0 && kPriority <= 3, "s_setprio takes 0..3");
  __builtin_amdgcn_s_setprio(kPriority);
}

// s_waitcnt immediate for gfx9: vmcnt in bits [3:0] and [15:14]; expcnt [6:4] and
// lgkmcnt [11:8] left at their maxima so only vector-memory loads are waited on.
template <int kVmcnt>
constexpr int waitcnt_vmcnt_imm() {
  static_assert(kVmcnt >= 0 && kVmcnt < 64, "vmcnt is 6 bits on gfx9");
  return (kVmcnt & 0xF) | ((kVmcnt >> 4) << 14) | (0x7 << 4) | (0xF << 8);
}

// Per-thread destination: AMD has no async copy with an arbitrary LDS address per lane,
// so this form is a plain load and store (the results record kAsyncCopyMode).
// No bulk (TMA-style) copy on gfx942 / gfx950: kernels test kHasBulkCopy and use the per-lane
// copies; these exist so that the shared source compiles, and trap if ever reached.
inline constexpr bool kHasBulkCopy = false;
static_assert([] {
  for (GpuArch a : kBuildArchs)
    if (has_bulk_copy(a) != kHasBulkCopy) return false;
  return true;
}(), "the host's view of the architectures (common/gpu/arch.hpp) and this backend agree");
#define SCHEDLAB_GRID_CONSTANT
__device__ __forceinline__ void mbarrier_init(std::uint64_t*, int) { __builtin_trap(); }
__device__ __forceinline__ void mbarrier_init_fence() { __builtin_trap(); }
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t*, int) { __builtin_trap(); }
__device__ __forceinline__ void mbarrier_wait(std::uint64_t*, unsigned) { __builtin_trap(); }
__device__ __forceinline__ void mbarrier_wait_warp(std::uint64_t*, unsigned) { __builtin_trap(); }
__device__ __forceinline__ void bulk_tensor_copy_2d(void*, const void*, int, int, std::uint64_t*) { __builtin_trap(); }
__device__ __forceinline__ void fence_proxy_async_smem() { __builtin_trap(); }

__device__ __forceinline__ void async_copy_16(void* smem_dst, const void* gmem_src, bool valid = true) {
  uint4 v = valid ? *static_cast<const uint4*>(gmem_src) : uint4{0, 0, 0, 0};
  *static_cast<uint4*>(smem_dst) = v;
}
// Lane-contiguous destination (lane i writes smem_wave_base + 16 * i): gfx950's
// global_load_lds_dwordx4 does this without passing through VGPRs; gfx942 only has the
// dword form, so there it falls back to load and store.
__device__ __forceinline__ void async_copy_16_lanes(void* smem_wave_base, const void* gmem_src) {
#if defined(__gfx950__)
  // Address-space casts (generic -> global / LDS) are C-style: clang has no named cast for them.
  __builtin_amdgcn_global_load_lds((__attribute__((address_space(1))) void*)(gmem_src),
                                   (__attribute__((address_space(3))) void*)(smem_wave_base), 16, 0, 0);
#else
  async_copy_16(static_cast<char*>(smem_wave_base) + 16 * lane_id(), gmem_src);
#endif
}
// Whether async_copy_16_lanes is a real asynchronous copy (gfx950: global_load_lds): a
// kernel whose layout allows it then copies lane-contiguously. Device passes only.
#if defined(__gfx950__)
inline constexpr bool kLaneCopyIsAsync = true;
#else
inline constexpr bool kLaneCopyIsAsync = false;
#endif
__device__ __forceinline__ void async_commit() {}  // vmcnt counts each load; groups need no marker
// vmcnt counts each copy, so groups are converted to copies; the counter saturates at 63.
template <int kPendingGroups, int kCopiesPerGroup = 1>
__device__ __forceinline__ void async_wait() {
  constexpr int kCopies = kPendingGroups * kCopiesPerGroup;
  __builtin_amdgcn_s_waitcnt(waitcnt_vmcnt_imm<(kCopies < 63 ? kCopies : 63)>());
}
// The same wait where the kPendingGroups newest groups may hold fewer copies (a loop's last
// tiles issue none): vmcnt counts copies, not groups, so then everything is waited for.
template <int kPendingGroups, int kCopiesPerGroup>
__device__ __forceinline__ void async_wait_groups(bool newer_groups_full) {
  if (newer_groups_full) async_wait<kPendingGroups, kCopiesPerGroup>();
  else async_wait<0>();
}
inline constexpr const char* kAsyncCopyMode = "global_load_lds (gfx950 lane-contiguous) / load+store";

__device__ __forceinline__ std::uint64_t cycle_counter() { return __builtin_readcyclecounter(); }
// A clock every CU shares (s_memrealtime, 100 MHz on gfx9: 10 ns a tick), and the CU's
// hardware id register (shader engine, CU, SIMD fields as the hardware packs them).
__device__ __forceinline__ std::uint64_t global_ns() { return __builtin_amdgcn_s_memrealtime() * 10; }
__device__ __forceinline__ unsigned sm_id() { return __smid(); }

// No dependent launch on HIP (api::launch_dependent is an ordinary launch): nothing to wait for.
__device__ __forceinline__ void wait_prior_grid() {}
__device__ __forceinline__ void allow_dependent_launch() {}

}  // namespace schedlab::gpu
