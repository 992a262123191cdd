// Device-side data: seeded random normals stored in any dtype, and output poisoning.
#pragma once
#include <cstddef>
#include <cstdint>

#include "common/dtype.hpp"
#include "common/gpu/runtime.hpp"

namespace schedlab::gpu {

// dst[i] = stddev * normal_at(seed, i), converted to `t` exactly as the host converts.
void fill_normal(DType t, void* dst, std::size_t n, std::uint64_t seed, float stddev, api::stream_t s);

// Fills with a NaN pattern of the dtype (0xFF bytes are NaN in bf16, f16 and f32, and
// 0xFF is the e4m3 NaN), so an element the kernel never writes fails the accuracy gate.
void poison(void* dst, std::size_t bytes, api::stream_t s);

}  // namespace schedlab::gpu
