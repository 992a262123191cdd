// Per-architecture shared-memory limits and the prefill family's default policy on each
// architecture (kernels/prefill/prefill_policy.hpp), checked on the host: the default fits
// its architecture at every supported head dim, and a policy that does not fit the device
// is a skipped case (UnsupportedProblem) at plan time.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "common/gpu/arch.hpp"
#include "common/problem.hpp"
#include "kernels/prefill/prefill_plan.hpp"
#include "kernels/prefill/prefill_policy.hpp"

namespace {

using schedlab::PrefillProblem;
using schedlab::UnsupportedProblem;
using schedlab::gpu::GpuArch;
using schedlab::gpu::smem_per_block;
namespace k = schedlab::kernels;

constexpr int kHeadDims[] = {64, 128};  // flash_prefill_support()'s

template <GpuArch kArch>
void expect_default_fits() {
  using Policy = typename k::DefaultPrefillPolicy<kArch>::type;
  for (int d : kHeadDims)
    EXPECT_LE(k::prefill_smem_bytes<Policy>(d), smem_per_block(kArch)) << "arch " << int(kArch) << ", head_dim " << d;
}

TEST(SmemLimits, BackendsStateTheirLimits) {
  EXPECT_EQ(smem_per_block(GpuArch::sm_90a), 227 * 1024);
  EXPECT_EQ(smem_per_block(GpuArch::gfx942), 64 * 1024);
  EXPECT_EQ(smem_per_block(GpuArch::gfx950), 160 * 1024);
  for (GpuArch a : schedlab::gpu::kGpuArchs) EXPECT_GT(smem_per_block(a), 0);
}

TEST(PrefillDefaults, FitEachArchitecture) {
  expect_default_fits<GpuArch::sm_90a>();
  expect_default_fits<GpuArch::gfx942>();
  expect_default_fits<GpuArch::gfx950>();
}

TEST(PrefillDefaults, PerArchitectureWhereTheSharedDefaultDoesNotFit) {
  // The tuned default: Q (128 rows) and two K/V buffers of 48 rows at 256 bytes a row.
  EXPECT_EQ(k::prefill_smem_bytes<k::PrefillPolicy>(128), 80 * 1024);
  EXPECT_GT(k::prefill_smem_bytes<k::PrefillPolicy>(128), smem_per_block(GpuArch::gfx942));
  EXPECT_EQ(k::prefill_smem_bytes<k::PrefillPolicyLds64>(128), 56 * 1024);
  // NVIDIA and gfx950 keep the tuned default.
  EXPECT_TRUE((std::is_same_v<k::DefaultPrefillPolicy<GpuArch::sm_90a>::type, k::PrefillPolicy>));
  EXPECT_TRUE((std::is_same_v<k::DefaultPrefillPolicy<GpuArch::gfx950>::type, k::PrefillPolicy>));
}

TEST(PrefillPlan, PolicyOverTheDeviceLimitIsSkipped) {
  PrefillProblem p;
  p.head_dim = 128;
  EXPECT_THROW(k::require_prefill_smem_fits<k::PrefillPolicy>(p, smem_per_block(GpuArch::gfx942)), UnsupportedProblem);
  EXPECT_NO_THROW(k::require_prefill_smem_fits<k::PrefillPolicyLds64>(p, smem_per_block(GpuArch::gfx942)));
  EXPECT_NO_THROW(k::require_prefill_smem_fits<k::PrefillPolicy>(p, smem_per_block(GpuArch::gfx950)));
  p.head_dim = 64;  // 40 KiB
  EXPECT_NO_THROW(k::require_prefill_smem_fits<k::PrefillPolicy>(p, smem_per_block(GpuArch::gfx942)));
  try {
    p.head_dim = 128;
    k::require_prefill_smem_fits<k::PrefillPolicy>(p, smem_per_block(GpuArch::gfx942));
    ADD_FAILURE() << "no UnsupportedProblem for 80 KiB on 64 KiB";
  } catch (const UnsupportedProblem& e) {
    EXPECT_NE(std::string(e.what()).find("80 KiB"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("64 KiB"), std::string::npos) << e.what();
  }
}

}  // namespace
