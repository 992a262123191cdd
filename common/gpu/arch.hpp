// The GPU architectures the project builds for and each one's shared-memory (LDS) limit per
// block, as its backend states it (common/gpu/backend/{cuda,hip}/smem_limits.hpp). Plain
// constants: host code picks per-architecture defaults with them (kernels/*/..._policy.hpp).
#pragma once
#include "common/gpu/backend/cuda/smem_limits.hpp"
#include "common/gpu/backend/hip/smem_limits.hpp"

namespace schedlab::gpu {

enum class GpuArch { sm_90a, gfx942, gfx950 };
inline constexpr GpuArch kGpuArchs[] = {GpuArch::sm_90a, GpuArch::gfx942, GpuArch::gfx950};

constexpr int smem_per_block(GpuArch arch) {
  switch (arch) {
    case GpuArch::sm_90a: return nvidia::kSmemPerBlockSm90;
    case GpuArch::gfx942: return amd::kLdsPerWorkgroupGfx942;
    case GpuArch::gfx950: return amd::kLdsPerWorkgroupGfx950;
  }
  return 0;
}

}  // namespace schedlab::gpu
