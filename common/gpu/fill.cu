#include <stdexcept>

#include "common/data.hpp"
#include "common/gpu/fill.hpp"
#include "common/gpu/launch.hpp"
#include "common/numeric.hpp"

namespace schedlab::gpu {

namespace {

template <class Store>
__global__ void fill_normal_kernel(Store store, std::size_t n, std::uint64_t seed, float stddev) {
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    store(i, stddev * normal_at(seed, i));
  }
}

struct StoreF32 {
  float* p;
  __device__ void operator()(std::size_t i, float x) const { p[i] = x; }
};
struct StoreBf16 {
  std::uint16_t* p;
  __device__ void operator()(std::size_t i, float x) const { p[i] = numeric::float_to_bf16_bits(x); }
};
struct StoreF16 {
  std::uint16_t* p;
  __device__ void operator()(std::size_t i, float x) const { p[i] = numeric::float_to_f16_bits(x); }
};
struct StoreFp8 {
  std::uint8_t* p;
  __device__ void operator()(std::size_t i, float x) const { p[i] = numeric::float_to_fp8_e4m3_bits(x); }
};

template <class Store>
void run_fill(Store store, std::size_t n, std::uint64_t seed, float stddev, api::stream_t s) {
  constexpr int kThreads = 256;
  constexpr unsigned kMaxBlocks = 65535;  // grid-stride loop covers the rest
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
  if (n == 0) return;
  launch("fill_normal", fill_normal_kernel<Store>, LaunchConfig{dim3(blocks), dim3(kThreads), 0, s}, store, n, seed,
         stddev);
}

constexpr int kGatherThreads = 256;

// Copies chunk i (chunk_bytes, a multiple of 16, at src + offsets[i]) to dst + i * chunk_bytes.
__global__ void __launch_bounds__(kGatherThreads) gather_chunks_kernel(const unsigned char* src, const std::int64_t* offsets,
                                                                     std::int64_t chunk_bytes, unsigned char* dst) {
  const auto* from = reinterpret_cast<const uint4*>(src + offsets[blockIdx.x]);
  auto* to = reinterpret_cast<uint4*>(dst + blockIdx.x * chunk_bytes);
  for (std::int64_t i = threadIdx.x; i < chunk_bytes / 16; i += kGatherThreads) to[i] = from[i];
}

}  // namespace

void fill_normal(DType t, void* dst, std::size_t n, std::uint64_t seed, float stddev, api::stream_t s) {
  switch (t) {
    case DType::f32: return run_fill(StoreF32{static_cast<float*>(dst)}, n, seed, stddev, s);
    case DType::bf16: return run_fill(StoreBf16{static_cast<std::uint16_t*>(dst)}, n, seed, stddev, s);
    case DType::f16: return run_fill(StoreF16{static_cast<std::uint16_t*>(dst)}, n, seed, stddev, s);
    case DType::fp8_e4m3: return run_fill(StoreFp8{static_cast<std::uint8_t*>(dst)}, n, seed, stddev, s);
  }
}

void poison(void* dst, std::size_t bytes, api::stream_t s) {
  SCHEDLAB_GPU_CHECK(api::memset_async(dst, 0xff, bytes, s));
}

std::vector<unsigned char> gather_chunks(const void* src, const std::vector<std::int64_t>& offsets,
                                         std::size_t chunk_bytes) {
  if (offsets.empty()) return {};
  if (chunk_bytes % 16 != 0) throw std::invalid_argument("gather_chunks: chunks of whole 16-byte words");
  DeviceBuffer<std::int64_t> at(offsets.size());
  at.upload(offsets);
  DeviceBuffer<unsigned char> packed(offsets.size() * chunk_bytes);
  launch("gather_chunks", gather_chunks_kernel, LaunchConfig{dim3(unsigned(offsets.size())), dim3(kGatherThreads)},
         static_cast<const unsigned char*>(src), static_cast<const std::int64_t*>(at.data()), std::int64_t(chunk_bytes),
         packed.data());
  return packed.download();
}

}  // namespace schedlab::gpu
