// Shared memory per block on the NVIDIA targets: plain constants, no CUDA headers, so host
// code and tests can hold them. Source: CUDA C++ Programming Guide, "Technical
// Specifications per Compute Capability" (9.0: 227 KiB per block with the opt-in attribute).
#pragma once

namespace schedlab::gpu::nvidia {

inline constexpr int kSmemPerBlockSm90 = 227 * 1024;
// The largest over the targets this backend builds (sm_90a): a compile-time bound for a
// kernel's shared storage; a device's own limit is checked at plan time.
inline constexpr int kMaxSmemPerBlock = kSmemPerBlockSm90;

}  // namespace schedlab::gpu::nvidia
