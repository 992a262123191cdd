// CUDA runtime primitives behind schedlab::gpu (runtime.hpp). Each function maps one
// vendor call; checking and RAII live in the generic layer so both backends share them.
#pragma once
#include <cuda.h>  // CUtensorMap and its enums (the encoder itself comes from the driver at run time)
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

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
// Tensor maps for bulk tensor copies (sm_90's TMA): a 2D view of 16-bit elements, `inner`
// per row and `outer` rows `row_bytes` apart, copied in boxes of box_inner x box_outer
// elements into shared memory with the 128-byte swizzle (16-byte chunk c of row r lands at
// chunk c ^ (r % 8) of its 128-byte row). l2_promotion: 0, 64, 128 or 256 bytes.
using TensorMap = CUtensorMap;
inline constexpr bool kHasTensorMaps = true;
// The driver's tiled-tensor-map encoder, looked up once through the runtime (no link
// against libcuda); null where the driver lacks it.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const auto encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}
inline CUtensorMapL2promotion l2_promotion_of(int bytes) {
  return bytes == 64    ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
         : bytes == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
         : bytes == 256 ? CU_TENSOR_MAP_L2_PROMOTION_L2_256B
                        : CU_TENSOR_MAP_L2_PROMOTION_NONE;
}
// A tensor map of `rank` dimensions of 16-bit elements, dims[0] innermost and contiguous;
// strides_bytes[i] is the byte stride of dimension i + 1. Boxes land 128-byte swizzled;
// elements outside the dims are zero-filled (so a box may cross the end of a sequence).
inline status_t encode_tensor_map(TensorMap* map, const void* base, int rank, const std::uint64_t* dims,
                                  const std::uint64_t* strides_bytes, const std::uint32_t* box, int l2_promotion) {
  const auto encode = tensor_map_encoder();
  if (!encode) return cudaErrorNotSupported;
  cuuint64_t d[5], st[4];
  cuuint32_t b[5], element_strides[5];
  for (int i = 0; i < rank; ++i) {
    d[i] = dims[i];
    b[i] = box[i];
    element_strides[i] = 1;
    if (i + 1 < rank) st[i] = strides_bytes[i];
  }
  const CUresult r = encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT16, rank, const_cast<void*>(base), d, st, b,
                            element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            l2_promotion_of(l2_promotion), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}
inline status_t encode_tensor_map_2d(TensorMap* map, const void* base, std::uint64_t inner, std::uint64_t outer,
                                     std::uint64_t row_bytes, std::uint32_t box_inner, std::uint32_t box_outer,
                                     int l2_promotion) {
  const std::uint64_t dims[2] = {inner, outer};
  const std::uint32_t box[2] = {box_inner, box_outer};
  return encode_tensor_map(map, base, 2, dims, &row_bytes, box, l2_promotion);
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
inline status_t mem_get_info(std::size_t* free, std::size_t* total) { return cudaMemGetInfo(free, total); }
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
