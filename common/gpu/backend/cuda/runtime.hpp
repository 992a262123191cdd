// CUDA runtime primitives behind schedlab::gpu (runtime.hpp). Each function maps one
// vendor call; checking and RAII live in the generic layer so both backends share them.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace schedlab::gpu::api {

using status_t = cudaError_t;
using stream_t = cudaStream_t;
using event_t = cudaEvent_t;
inline constexpr status_t kOk = cudaSuccess;
inline constexpr const char* kBackendName = "cuda";
inline constexpr int kHostWarpSize = 32;

inline const char* error_string(status_t s) { return cudaGetErrorString(s); }
inline status_t get_last_error() { return cudaGetLastError(); }
inline status_t malloc(void** p, std::size_t n) { return cudaMalloc(p, n); }
inline status_t free(void* p) { return cudaFree(p); }
inline status_t memcpy_h2d(void* d, const void* s, std::size_t n) { return cudaMemcpy(d, s, n, cudaMemcpyHostToDevice); }
inline status_t memcpy_d2h(void* d, const void* s, std::size_t n) { return cudaMemcpy(d, s, n, cudaMemcpyDeviceToHost); }
inline status_t memcpy_d2d_async(void* d, const void* s, std::size_t n, stream_t st) {
  return cudaMemcpyAsync(d, s, n, cudaMemcpyDeviceToDevice, st);
}
inline status_t memset_async(void* d, int v, std::size_t n, stream_t st) { return cudaMemsetAsync(d, v, n, st); }
inline status_t device_synchronize() { return cudaDeviceSynchronize(); }

// Programmatic dependent launch (sm_90): the kernel may be scheduled while the previous one
// in the stream is finishing; it must call gpu::wait_prior_grid() before reading that
// kernel's output.
inline constexpr bool kDependentLaunch = true;
template <class... KernelArgs, class... Args>
status_t launch_dependent(void (*kernel)(KernelArgs...), dim3 grid, dim3 block, std::size_t smem, stream_t stream,
                          Args&&... args) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, kernel, static_cast<KernelArgs>(args)...);
}
inline status_t stream_create(stream_t* s) { return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking); }
inline status_t stream_destroy(stream_t s) { return cudaStreamDestroy(s); }
inline status_t stream_synchronize(stream_t s) { return cudaStreamSynchronize(s); }
inline status_t event_create(event_t* e) { return cudaEventCreate(e); }
inline status_t event_destroy(event_t e) { return cudaEventDestroy(e); }
inline status_t event_record(event_t e, stream_t s) { return cudaEventRecord(e, s); }
inline status_t event_synchronize(event_t e) { return cudaEventSynchronize(e); }
inline status_t event_elapsed_ms(float* ms, event_t a, event_t b) { return cudaEventElapsedTime(ms, a, b); }
inline status_t get_device_count(int* n) { return cudaGetDeviceCount(n); }
inline status_t driver_version(int* v) { return cudaDriverGetVersion(v); }
inline status_t runtime_version(int* v) { return cudaRuntimeGetVersion(v); }

// Device properties, in the fields the harness records.
struct RawDeviceProps {
  char name[256];
  int sm_count, l2_bytes, smem_per_block_optin, smem_per_sm, regs_per_sm, warp_size, max_threads_per_sm;
  int sm_clock_khz, mem_clock_khz, mem_bus_bits, major, minor;
  char arch_name[64];
};
inline status_t get_device_props(RawDeviceProps* out, int dev) {
  cudaDeviceProp p{};
  status_t s = cudaGetDeviceProperties(&p, dev);
  if (s != kOk) return s;
  for (int i = 0; i < 256; ++i) out->name[i] = p.name[i];
  out->sm_count = p.multiProcessorCount;
  out->l2_bytes = p.l2CacheSize;
  out->smem_per_block_optin = static_cast<int>(p.sharedMemPerBlockOptin);
  out->smem_per_sm = static_cast<int>(p.sharedMemPerMultiprocessor);
  out->regs_per_sm = p.regsPerMultiprocessor;
  out->warp_size = p.warpSize;
  out->max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  out->major = p.major;
  out->minor = p.minor;
  // CUDA 13 moved clock rates out of cudaDeviceProp into attributes.
  if ((s = cudaDeviceGetAttribute(&out->sm_clock_khz, cudaDevAttrClockRate, dev)) != kOk) return s;
  if ((s = cudaDeviceGetAttribute(&out->mem_clock_khz, cudaDevAttrMemoryClockRate, dev)) != kOk) return s;
  if ((s = cudaDeviceGetAttribute(&out->mem_bus_bits, cudaDevAttrGlobalMemoryBusWidth, dev)) != kOk) return s;
  const char arch[] = "sm_";
  int n = 0;
  for (; arch[n]; ++n) out->arch_name[n] = arch[n];
  out->arch_name[n++] = static_cast<char>('0' + p.major);
  out->arch_name[n++] = static_cast<char>('0' + p.minor);
  out->arch_name[n] = '\0';
  return kOk;
}

template <class Kernel>
status_t occupancy_max_active_blocks(int* blocks, Kernel k, int block_threads, std::size_t smem) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, k, block_threads, smem);
}
template <class Kernel>
status_t set_max_dynamic_smem(Kernel k, int bytes) {
  return cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
}

}  // namespace schedlab::gpu::api
