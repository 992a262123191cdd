// Hopper prefill against the double reference on the H200, every experiment policy, on the
// shared prefill problems (kernels/tests/prefill_test_configs.hpp; the copies zero-fill past
// the end of a sequence) plus more tiles than SMs (persistent CTAs walk several), each
// launched twice on the same buffers (persistent pipeline state starts over). Label: gpu.
#include <gtest/gtest.h>

#include <random>

#include "experiments/prefill_intra_overlap/policy.hpp"
#include "experiments/prefill_persistent/policy.hpp"
#include "experiments/prefill_pingpong/policy.hpp"
#include "experiments/prefill_warp_specialization/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill.hpp"
#include "kernels/tests/prefill_test_configs.hpp"

namespace schedlab::kernels {
namespace {

// The shared prefill problems, and more tiles than SMs (persistent CTAs walk several).
std::vector<PrefillTestConfig> configs() {
  auto all = prefill_test_configs();
  all.push_back({"d128_more_tiles_than_sms", 4, 16, 16, 1100, 1100, 128, true, DType::bf16});
  return all;
}

template <class Policy>
class HopperPrefillGpu : public ::testing::Test {};
using Policies = ::testing::Types<
    experiments::prefill_pingpong::pingpong, experiments::prefill_pingpong::free_running,
    experiments::prefill_warp_specialization::ws_realloc, experiments::prefill_warp_specialization::ws_even_regs,
    experiments::prefill_warp_specialization::no_ws, experiments::prefill_intra_overlap::overlapped,
    experiments::prefill_intra_overlap::serial, experiments::prefill_intra_overlap::serial_free_running,
    experiments::prefill_persistent::one_per_tile,
    experiments::prefill_persistent::persistent, experiments::prefill_persistent::persistent_3stages,
    experiments::prefill_persistent::persistent_dynamic>;
TYPED_TEST_SUITE(HopperPrefillGpu, Policies);

TYPED_TEST(HopperPrefillGpu, MatchesReferenceOnEveryConfig) {
  std::uint64_t seed = std::random_device{}();
  for (const PrefillTestConfig& cfg : configs()) {
    PrefillCase c(cfg.problem(), launch_hopper_prefill<TypeParam>);
    c.prepare(++seed, 1);
    for (int launch = 0; launch < 2; ++launch) {
      c.poison_output();
      c.launch(0);
      c.synchronize();
      const AccuracyReport acc = harness::check_output(c, 0);
      EXPECT_TRUE(acc.passed) << cfg.name << " launch " << launch << ": " << acc.message;
      EXPECT_EQ(acc.nonfinite, 0u) << cfg.name;
    }
  }
}

// Two small shapes (ragged, causal GQA with q_len < kv_len) for compute-sanitizer's memcheck
// and racecheck, which slow each launch by orders of magnitude.
TYPED_TEST(HopperPrefillGpu, SmallShapesForSanitizer) {
  std::uint64_t seed = std::random_device{}();
  for (const PrefillTestConfig& cfg : {configs()[0], configs()[1]}) {
    PrefillCase c(cfg.problem(), launch_hopper_prefill<TypeParam>);
    c.prepare(++seed, 1);
    c.poison_output();
    c.launch(0);
    c.synchronize();
    EXPECT_TRUE(harness::check_output(c, 0).passed) << cfg.name;
  }
}

}  // namespace
}  // namespace schedlab::kernels
