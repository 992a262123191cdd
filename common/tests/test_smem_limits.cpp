// Per-architecture shared-memory limits as the backends state them (common/gpu/arch.hpp), and
// a device's architecture from the name its runtime reports. The plans that use them are
// tested beside their kernels (kernels/tests/test_prefill_plan.cpp, test_decode_plan.cpp).
#include <gtest/gtest.h>

#include "common/gpu/arch.hpp"

namespace {

using schedlab::gpu::arch_of_device;
using schedlab::gpu::GpuArch;
using schedlab::gpu::smem_per_block;

TEST(SmemLimits, BackendsStateTheirLimits) {
  EXPECT_EQ(smem_per_block(GpuArch::sm_90a), 227 * 1024);
  EXPECT_EQ(smem_per_block(GpuArch::gfx942), 64 * 1024);
  EXPECT_EQ(smem_per_block(GpuArch::gfx950), 160 * 1024);
  for (GpuArch a : schedlab::gpu::kGpuArchs) EXPECT_GT(smem_per_block(a), 0);
}

TEST(SmemLimits, ArchitectureOfADeviceName) {
  EXPECT_EQ(arch_of_device("sm_90"), GpuArch::sm_90a);  // an H100 / H200 runs the sm_90a code
  EXPECT_EQ(arch_of_device("gfx942:sramecc+:xnack-"), GpuArch::gfx942);
  EXPECT_EQ(arch_of_device("gfx950"), GpuArch::gfx950);
  EXPECT_FALSE(arch_of_device("sm_80").has_value());
  EXPECT_FALSE(arch_of_device("gfx90a:sramecc+:xnack-").has_value());
  for (GpuArch a : schedlab::gpu::kGpuArchs) EXPECT_EQ(arch_of_device(schedlab::gpu::arch_name(a)), a);
}

}  // namespace
