// The GPU architectures the project builds for and each one's shared-memory (LDS) limit per
// block, as its backend states it (common/gpu/backend/{cuda,hip}/smem_limits.hpp). Plain
// constants: host code picks per-architecture defaults and plans with them
// (kernels/*/..._policy.hpp, ..._plan.hpp); which of them a build holds is the backend's
// kBuildArchs (common/gpu/backend/{cuda,hip}/device.hpp).
#pragma once
#include <optional>
#include <string_view>

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

// sm_90's bulk tensor copies and warpgroup matrix ops (wgmma): what shapes some kernels'
// shared storage (kernels/decode/decode_policy.hpp). The backends hold the same facts for
// device code (gpu::kHasBulkCopy, SCHEDLAB_GPU_HAS_WGMMA) and assert that they agree.
constexpr bool has_bulk_copy(GpuArch arch) { return arch == GpuArch::sm_90a; }
constexpr bool has_warpgroup_mma(GpuArch arch) { return arch == GpuArch::sm_90a; }

// The matrix instruction family each architecture's kernels use, as the records name it:
// wgmma (HGMMA in SASS) and mma.sync (HMMA) on sm_90a, v_mfma on gfx942 / gfx950.
constexpr std::string_view matrix_instruction(GpuArch arch) {
  return arch == GpuArch::sm_90a ? "HGMMA/HMMA" : "v_mfma";
}

constexpr std::string_view arch_name(GpuArch arch) {
  switch (arch) {
    case GpuArch::sm_90a: return "sm_90a";
    case GpuArch::gfx942: return "gfx942";
    case GpuArch::gfx950: return "gfx950";
  }
  return "?";
}

// The architecture of a device from the name its runtime reports (DeviceInfo::arch: "sm_90"
// on an H100 / H200, "gfx942:sramecc+:xnack-" on an MI300X); none for a device the project
// does not build for. sm_90 devices run the sm_90a code.
constexpr std::optional<GpuArch> arch_of_device(std::string_view name) {
  const std::string_view base = name.substr(0, name.find(':'));
  if (base == "sm_90" || base == "sm_90a") return GpuArch::sm_90a;
  if (base == "gfx942") return GpuArch::gfx942;
  if (base == "gfx950") return GpuArch::gfx950;
  return std::nullopt;
}

}  // namespace schedlab::gpu
