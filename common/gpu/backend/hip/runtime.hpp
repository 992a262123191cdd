// HIP runtime primitives behind schedlab::gpu (runtime.hpp); the same names as the CUDA
// backend so generic code never mentions a vendor.
#pragma once
#include <hip/hip_runtime.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>

namespace schedlab::gpu::api {

using status_t = hipError_t;
using stream_t = hipStream_t;
using event_t = hipEvent_t;
inline constexpr status_t kOk = hipSuccess;
inline constexpr const char* kBackendName = "hip";
inline constexpr int kHostWarpSize = 64;  // CDNA (gfx942, gfx950) runs wave64

inline const char* error_string(status_t s) { return hipGetErrorString(s); }
inline status_t get_last_error() { return hipGetLastError(); }
inline status_t malloc(void** p, std::size_t n) { return hipMalloc(p, n); }
inline status_t free(void* p) { return hipFree(p); }
inline status_t memcpy_h2d(void* d, const void* s, std::size_t n) { return hipMemcpy(d, s, n, hipMemcpyHostToDevice); }
inline status_t memcpy_d2h(void* d, const void* s, std::size_t n) { return hipMemcpy(d, s, n, hipMemcpyDeviceToHost); }
inline status_t memcpy_d2d_async(void* d, const void* s, std::size_t n, stream_t st) {
  return hipMemcpyAsync(d, s, n, hipMemcpyDeviceToDevice, st);
}
inline status_t memset_async(void* d, int v, std::size_t n, stream_t st) { return hipMemsetAsync(d, v, n, st); }
inline status_t device_synchronize() { return hipDeviceSynchronize(); }

// No programmatic dependent launch on HIP: an ordinary launch (gpu::wait_prior_grid() is a
// no-op there, and the stream orders the kernels as usual). Through hipLaunchKernel, not
// the triple chevron, so that host-only C++ (a plan test built by g++) can include this.
inline constexpr bool kDependentLaunch = false;
template <class... KernelArgs, class... Args>
status_t launch_dependent(void (*kernel)(KernelArgs...), dim3 grid, dim3 block, std::size_t smem, stream_t stream,
                          Args&&... args) {
  std::tuple<std::decay_t<KernelArgs>...> values(static_cast<KernelArgs>(args)...);
  return std::apply(
      [&](auto&... v) {
        std::array<void*, sizeof...(KernelArgs)> pointers{static_cast<void*>(&v)...};
        return hipLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, pointers.data(), smem, stream);
      },
      values);
}
// No tensor maps on AMD: the type keeps shared structs the same size and alignment;
// encoding reports "not supported".
struct alignas(64) TensorMap {
  unsigned char opaque[128];
};
inline constexpr bool kHasTensorMaps = false;
inline status_t encode_tensor_map_2d(TensorMap*, const void*, std::uint64_t, std::uint64_t, std::uint64_t,
                                     std::uint32_t, std::uint32_t, int) {
  return hipErrorNotSupported;
}

inline status_t stream_create(stream_t* s) { return hipStreamCreateWithFlags(s, hipStreamNonBlocking); }
inline status_t stream_destroy(stream_t s) { return hipStreamDestroy(s); }
inline status_t stream_synchronize(stream_t s) { return hipStreamSynchronize(s); }
inline status_t event_create(event_t* e) { return hipEventCreate(e); }
inline status_t event_destroy(event_t e) { return hipEventDestroy(e); }
inline status_t event_record(event_t e, stream_t s) { return hipEventRecord(e, s); }
inline status_t event_synchronize(event_t e) { return hipEventSynchronize(e); }
inline status_t event_elapsed_ms(float* ms, event_t a, event_t b) { return hipEventElapsedTime(ms, a, b); }
inline status_t get_device_count(int* n) { return hipGetDeviceCount(n); }
inline status_t mem_get_info(std::size_t* free, std::size_t* total) { return hipMemGetInfo(free, total); }
inline status_t driver_version(int* v) { return hipDriverGetVersion(v); }
inline status_t runtime_version(int* v) { return hipRuntimeGetVersion(v); }

struct RawDeviceProps {
  char name[256];
  int sm_count, l2_bytes, smem_per_block_optin, smem_per_sm, regs_per_sm, warp_size, max_threads_per_sm;
  int sm_clock_khz, mem_clock_khz, mem_bus_bits, major, minor;
  char arch_name[64];
};
inline status_t get_device_props(RawDeviceProps* out, int dev) {
  hipDeviceProp_t p{};
  status_t s = hipGetDeviceProperties(&p, dev);
  if (s != kOk) return s;
  for (int i = 0; i < 256; ++i) out->name[i] = p.name[i];
  out->sm_count = p.multiProcessorCount;
  out->l2_bytes = p.l2CacheSize;
  out->smem_per_block_optin = static_cast<int>(p.maxSharedMemoryPerMultiProcessor);
  out->smem_per_sm = static_cast<int>(p.maxSharedMemoryPerMultiProcessor);
  out->regs_per_sm = p.regsPerBlock;  // HIP 5.2 has no per-multiprocessor field; CDNA's block limit is the CU's file
  out->warp_size = p.warpSize;
  out->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  out->major = p.major;
  out->minor = p.minor;
  out->sm_clock_khz = p.clockRate;
  out->mem_clock_khz = p.memoryClockRate;
  out->mem_bus_bits = p.memoryBusWidth;
  for (int i = 0; i < 64; ++i) out->arch_name[i] = p.gcnArchName[i];
  return kOk;
}

template <class Kernel>
status_t occupancy_max_active_blocks(int* blocks, Kernel k, int block_threads, std::size_t smem) {
  return hipOccupancyMaxActiveBlocksPerMultiprocessor(blocks, k, block_threads, smem);
}
template <class Kernel>
status_t set_max_dynamic_smem(Kernel k, int bytes) {
  return hipFuncSetAttribute(reinterpret_cast<const void*>(k), hipFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

}  // namespace schedlab::gpu::api
