// The flash prefill plan on the host (no GPU): per architecture, which instantiation of a
// policy is launched (its own tiles, or PrefillPolicyFor<Policy, arch> with the key tile cut
// to fit), and that a policy that does not fit even so is refused at plan time, naming the
// bytes and the limit.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "common/gpu/arch.hpp"
#include "common/problem.hpp"
#include "experiments/prefill_kv_tiles/policy.hpp"
#include "experiments/prefill_lds_buffers/policy.hpp"
#include "experiments/prefill_pingpong/amd_policy.hpp"
#include "experiments/prefill_sched_barrier/policy.hpp"
#include "kernels/prefill/prefill_plan.hpp"
#include "kernels/prefill/prefill_policy.hpp"

namespace schedlab::kernels {
namespace {

using gpu::GpuArch;
using gpu::smem_per_block;
namespace lds = experiments::prefill_lds_buffers;

constexpr int kHeadDims[] = {64, 128};  // flash_prefill_support()'s
constexpr DType kDTypes[] = {DType::bf16, DType::f16, DType::fp8_e4m3};

PrefillProblem problem(int head_dim, DType dtype = DType::bf16) {
  PrefillProblem p;
  p.head_dim = head_dim;
  p.dtype = dtype;
  return p;
}

// The plan launches, on every architecture and at every head dim and dtype, an instantiation
// whose storage fits: the policy's own tiles where they fit, the cut ones only where not.
template <class Policy>
void expect_fits_everywhere() {
  for (GpuArch arch : gpu::kGpuArchs)
    for (int d : kHeadDims)
      for (DType t : kDTypes) {
        const PrefillPlan plan = plan_prefill<Policy>(problem(d, t), arch);
        const std::string where = std::string(gpu::arch_name(arch)) + ", head_dim " + std::to_string(d) + ", " + std::string(dtype_name(t));
        EXPECT_LE(plan.smem_bytes, smem_per_block(arch)) << where;
        EXPECT_EQ(plan.smem_bytes, prefill_smem_bytes_at<Policy>(d, t, plan.block_n)) << where;
        EXPECT_EQ(plan.key_tile_cut, prefill_smem_bytes<Policy>(d, t) > smem_per_block(arch)) << where;
        EXPECT_EQ(plan.kv_buffers, Policy::kKvBuffers) << where;
        EXPECT_EQ(plan.block_n % (t == DType::fp8_e4m3 ? 32 : 16), 0) << where;
      }
}

TEST(PrefillPlan, EveryExperimentPolicyFitsEveryArchitecture) {
  expect_fits_everywhere<PrefillPolicy>();
  expect_fits_everywhere<experiments::prefill_kv_tiles::kv_union>();
  expect_fits_everywhere<experiments::prefill_kv_tiles::kv_separate>();
  expect_fits_everywhere<experiments::prefill_sched_barrier::compiler>();
  expect_fits_everywhere<experiments::prefill_sched_barrier::pinned>();
  expect_fits_everywhere<experiments::prefill_sched_barrier::interleaved>();
  expect_fits_everywhere<lds::single>();
  expect_fits_everywhere<lds::double_buffer>();
  expect_fits_everywhere<lds::double_padded>();
  expect_fits_everywhere<experiments::prefill_pingpong::ping_pong_8wave>();
  expect_fits_everywhere<experiments::prefill_pingpong::plain_8wave>();
}

TEST(PrefillPlan, Gfx942CutsTheKeyTileAtHeadDim128) {
  // The tuned default: Q (128 rows) and two K/V stages of 48 keys at 256 bytes a row, 80 KiB.
  EXPECT_EQ(prefill_smem_bytes<PrefillPolicy>(128), 80 * 1024);
  const PrefillPlan plan = plan_prefill<PrefillPolicy>(problem(128), GpuArch::gfx942);
  EXPECT_TRUE(plan.key_tile_cut);
  EXPECT_EQ(plan.block_n, 32);  // 32 KiB of Q + 2 x (K + V) x 32 keys x 256 B = 64 KiB
  EXPECT_EQ(plan.kv_buffers, 2);
  EXPECT_EQ(plan.smem_bytes, 64 * 1024);
  // Padded rows (272 bytes) leave room for 16 keys only.
  const PrefillPlan padded = plan_prefill<lds::double_padded>(problem(128), GpuArch::gfx942);
  EXPECT_EQ(padded.block_n, 16);
  EXPECT_EQ(padded.smem_bytes, (128 + 2 * 2 * 16) * 272);
  // One buffer fits as it is (56 KiB), as do head dim 64 and fp8.
  EXPECT_FALSE(plan_prefill<lds::single>(problem(128), GpuArch::gfx942).key_tile_cut);
  EXPECT_FALSE(plan_prefill<PrefillPolicy>(problem(64), GpuArch::gfx942).key_tile_cut);
  EXPECT_FALSE(plan_prefill<PrefillPolicy>(problem(128, DType::fp8_e4m3), GpuArch::gfx942).key_tile_cut);
}

TEST(PrefillPlan, Gfx950AndSm90aKeepTheTunedTiles) {
  for (GpuArch arch : {GpuArch::sm_90a, GpuArch::gfx950})
    for (int d : kHeadDims) {
      const PrefillPlan plan = plan_prefill<PrefillPolicy>(problem(d), arch);
      EXPECT_FALSE(plan.key_tile_cut);
      EXPECT_EQ(plan.block_n, PrefillPolicy::kBlockN);
    }
}

TEST(PrefillPlan, InstantiationPerArchitectureMatchesThePlan) {
  using Cut = PrefillPolicyFor<PrefillPolicy, GpuArch::gfx942>;
  EXPECT_EQ(Cut::kBlockN, 32);
  EXPECT_EQ(Cut::kBlockNFp8, PrefillPolicy::kBlockNFp8);
  EXPECT_TRUE((std::is_same_v<prefill_policy_on<PrefillPolicy, GpuArch::gfx942, 128, DType::bf16>, Cut>));
  EXPECT_TRUE((std::is_same_v<prefill_policy_on<PrefillPolicy, GpuArch::gfx942, 64, DType::bf16>, PrefillPolicy>));
  EXPECT_TRUE((std::is_same_v<prefill_policy_on<PrefillPolicy, GpuArch::gfx942, 128, DType::fp8_e4m3>, PrefillPolicy>));
  EXPECT_TRUE((std::is_same_v<prefill_policy_on<PrefillPolicy, GpuArch::gfx950, 128, DType::bf16>, PrefillPolicy>));
  EXPECT_TRUE((std::is_same_v<prefill_policy_on<PrefillPolicy, GpuArch::sm_90a, 128, DType::bf16>, PrefillPolicy>));
  // The family default per architecture is what the plan launches for PrefillPolicy.
  EXPECT_TRUE((std::is_same_v<DefaultPrefillPolicy<GpuArch::gfx942>::type, Cut>));
  EXPECT_TRUE((std::is_same_v<DefaultPrefillPolicy<GpuArch::gfx950>::type, PrefillPolicy>));
  EXPECT_TRUE((std::is_same_v<DefaultPrefillPolicy<GpuArch::sm_90a>::type, PrefillPolicy>));
}

// Eight 32-row warps: Q alone is 64 KiB at head dim 128, so no key tile fits gfx942.
struct EightWideWarps : PrefillPolicy {
  /* Warps = */ static constexpr int kWarps = 8;
};

TEST(PrefillPlan, PolicyThatCannotFitIsRefusedNamingBytesAndLimit) {
  EXPECT_EQ(prefill_block_n_within<EightWideWarps>(smem_per_block(GpuArch::gfx942), 128, DType::bf16), 0);
  EXPECT_TRUE((std::is_void_v<prefill_policy_on<EightWideWarps, GpuArch::gfx942, 128, DType::bf16>>));
  try {
    (void)plan_prefill<EightWideWarps>(problem(128), GpuArch::gfx942);
    ADD_FAILURE() << "no UnsupportedProblem for 112 KiB on gfx942";
  } catch (const UnsupportedProblem& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(std::to_string(prefill_smem_bytes<EightWideWarps>(128))), std::string::npos) << what;
    EXPECT_NE(what.find("gfx942 allows 65536"), std::string::npos) << what;
  }
  EXPECT_NO_THROW((void)plan_prefill<EightWideWarps>(problem(128), GpuArch::gfx950));
  EXPECT_NO_THROW((void)plan_prefill<EightWideWarps>(problem(64), GpuArch::gfx942));
}

TEST(PrefillPlan, DeviceBelowItsArchitectureIsRefusedNotCutFurther) {
  // 56 KiB on a device that allows 48 KiB: the build holds no tile for it.
  EXPECT_THROW((void)plan_prefill<lds::single>(problem(128), GpuArch::gfx942, 48 * 1024), UnsupportedProblem);
  EXPECT_NO_THROW((void)plan_prefill<lds::single>(problem(128), GpuArch::gfx942, 64 * 1024));
}

}  // namespace
}  // namespace schedlab::kernels
