// Device-side data: seeded random normals stored in any dtype, output poisoning, and scattered
// device bytes gathered for the host.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/dtype.hpp"
#include "common/gpu/runtime.hpp"

namespace schedlab::gpu {

// dst[i] = stddev * normal_at(seed, i), converted to `t` exactly as the host converts.
void fill_normal(DType t, void* dst, std::size_t n, std::uint64_t seed, float stddev, api::stream_t s);

// Fills with a NaN pattern of the dtype (0xFF bytes are NaN in bf16, f16 and f32, and
// 0xFF is the e4m3 NaN), so an element the kernel never writes fails the accuracy gate.
void poison(void* dst, std::size_t bytes, api::stream_t s);

// Scattered chunks of a device buffer (pages of a KV pool) as one host buffer: chunk i is
// chunk_bytes (a multiple of 16) at src + offsets[i]. One gather on the device and one copy,
// not a copy per chunk (a batch-64, 64k check reads 262k pages).
std::vector<unsigned char> gather_chunks(const void* src, const std::vector<std::int64_t>& offsets,
                                         std::size_t chunk_bytes);

}  // namespace schedlab::gpu
