// Hopper prefill against the double reference on the H200, every experiment policy, on the
// shared prefill problems (kernels/tests/prefill_test_configs.hpp; the copies zero-fill past
// the end of a sequence) plus more tiles than SMs (persistent CTAs walk several), each
// launched twice on the same buffers (persistent pipeline state starts over). fp8 e4m3 on
// every policy that runs it (the others must refuse it), and an fp8 fault (V^T keys out of
// P's order) that must fail the gate. Label: gpu.
#include <gtest/gtest.h>

#include <cstdio>

#include "experiments/prefill_intra_overlap/policy.hpp"
#include "experiments/prefill_persistent/policy.hpp"
#include "experiments/prefill_pingpong/policy.hpp"
#include "experiments/prefill_warp_specialization/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill.hpp"
#if SCHEDLAB_HOPPER_PREFILL_TUNING
#include "kernels/hopper_prefill/tuning_policy.hpp"
#endif
#include "kernels/tests/prefill_test_configs.hpp"
#include "kernels/tests/test_seed.hpp"

namespace schedlab::kernels {

// The family's default policy with the fault, fp8 e4m3 at head dim 128 only
// (kernels/tests/hopper_prefill_fault_kernels.cu: sm_90a, so not in the shared fault_kernels.hpp).
PrefillLaunch hopper_prefill_fault_launch(HopperFault fault);

namespace {

// The shared prefill problems, more tiles than SMs (persistent CTAs walk several), and causal
// launches long enough for the long causal kernel (kLongCausalFromKeys: the non-causal key
// tile), with q_len below and at kv_len and lengths that are not tile multiples.
std::vector<PrefillTestConfig> configs() {
  auto all = prefill_test_configs();
  all.push_back({"d128_more_tiles_than_sms", 4, 16, 16, 1100, 1100, 128, true, DType::bf16});
  all.push_back({"d128_long_causal_q_lt_kv", 1, 4, 2, 300, 6500, 128, true, DType::bf16});
  all.push_back({"d128_long_causal_f16", 1, 2, 1, 1000, 6200, 128, true, DType::f16});
  return all;
}
static_assert(kHasLongCausal<experiments::prefill_pingpong::pingpong> &&
                  6200 >= experiments::prefill_pingpong::pingpong::kLongCausalFromKeys,
              "the long causal problems above must reach the family default's long causal kernel");

// The shared fp8 problems at head dim 128 (the only fp8 head dim here), plus lengths around
// the 128- and 192-key tiles, q_len != kv_len without a mask, and more tiles than SMs.
std::vector<PrefillTestConfig> fp8_configs() {
  std::vector<PrefillTestConfig> all;
  for (const PrefillTestConfig& c : prefill_fp8_test_configs())
    if (c.head_dim == 128) all.push_back(c);
  constexpr DType kFp8 = DType::fp8_e4m3;
  all.push_back({"fp8_q_gt_kv_one_past_192", 2, 4, 2, 300, 193, 128, false, kFp8});
  all.push_back({"fp8_q_lt_kv_tile_multiple", 1, 2, 2, 128, 384, 128, false, kFp8});
  all.push_back({"fp8_causal_q_lt_kv_385", 1, 4, 1, 200, 385, 128, true, kFp8});
  all.push_back({"fp8_more_tiles_than_sms", 4, 16, 16, 1100, 1100, 128, true, kFp8});
  all.push_back({"fp8_long_causal_q_lt_kv", 1, 2, 2, 300, 6500, 128, true, kFp8});  // the long causal kernel
  return all;
}

AccuracyReport run_once(PrefillCase& c) {
  c.poison_output();
  c.launch(0);
  c.synchronize();
  return harness::check_output(c, 0);
}

// Two launches on the same buffers must each pass the gate with finite outputs.
void expect_matches(const PrefillTestConfig& cfg, PrefillLaunch launch, std::uint64_t seed) {
  PrefillCase c(cfg.problem(), std::move(launch));
  c.prepare(seed, 1);
  for (int launch_no = 0; launch_no < 2; ++launch_no) {
    const AccuracyReport acc = run_once(c);
    EXPECT_TRUE(acc.passed) << cfg.name << " launch " << launch_no << ": " << acc.message;
    EXPECT_EQ(acc.nonfinite, 0u) << cfg.name;
  }
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
    experiments::prefill_persistent::persistent_dynamic
#if SCHEDLAB_HOPPER_PREFILL_TUNING
    ,  // the fp8 candidate whose main loop differs: S in two halves
    experiments::hopper_prefill_tuning::fp8_split_qk
#endif
    >;
TYPED_TEST_SUITE(HopperPrefillGpu, Policies);

TYPED_TEST(HopperPrefillGpu, MatchesReferenceOnEveryConfig) {
  std::uint64_t seed = test_seed();
  for (const PrefillTestConfig& cfg : configs()) expect_matches(cfg, launch_hopper_prefill<TypeParam>, ++seed);
}

// fp8 e4m3 where the policy runs it: head dim 64 is refused by every policy, and every fp8
// problem by the policies with no producer warpgroup free to transpose V. A problem whose
// shared storage exceeds the device (persistent_3stages' 192-key tiles) is skipped, as the
// benchmarks skip it.
TYPED_TEST(HopperPrefillGpu, Fp8MatchesReferenceWhereSupported) {
  PrefillProblem d64 = fp8_configs()[0].problem();
  d64.head_dim = 64;
  EXPECT_THROW(require_hopper_prefill_fits<TypeParam>(d64), UnsupportedProblem);
  if constexpr (!kHopperFp8Capable<TypeParam>) {
    EXPECT_THROW(require_hopper_prefill_fits<TypeParam>(fp8_configs()[0].problem()), UnsupportedProblem);
    GTEST_SKIP() << "the policy refuses fp8 (no producer warpgroup free to transpose V)";
  } else {
    std::uint64_t seed = test_seed();
    for (const PrefillTestConfig& cfg : fp8_configs()) {
      try {
        require_hopper_prefill_fits<TypeParam>(cfg.problem());
      } catch (const UnsupportedProblem& e) {
        std::printf("%s: skipped, %s\n", cfg.name, e.what());
        continue;
      }
      expect_matches(cfg, launch_hopper_prefill<TypeParam>, ++seed);
    }
  }
}

// Two small shapes (ragged, causal GQA with q_len < kv_len) for compute-sanitizer's memcheck
// and racecheck, which slow each launch by orders of magnitude; fp8 causal GQA too where the
// policy runs fp8 (the transposing warps' ordinary stores are what racecheck should see).
TYPED_TEST(HopperPrefillGpu, SmallShapesForSanitizer) {
  std::uint64_t seed = test_seed();
  std::vector<PrefillTestConfig> small = {configs()[0], configs()[1]};
  if constexpr (kHopperFp8Capable<TypeParam>) small.push_back(fp8_configs()[0]);
  for (const PrefillTestConfig& cfg : small) {
    PrefillCase c(cfg.problem(), launch_hopper_prefill<TypeParam>);
    c.prepare(++seed, 1);
    EXPECT_TRUE(run_once(c).passed) << cfg.name;
  }
}

// ---- injected fault -------------------------------------------------------------------------

// The family default with V^T's keys in plain order while P keeps its own (each 16-key half
// pairs P with the wrong V rows; kernels/tests/hopper_prefill_fault_kernels.cu), causal GQA
// and non-causal, short and long: the family default passes on the same inputs, the fault fails.
TEST(HopperPrefillFaults, Fp8KeyOrderFailsTheGate) {
  std::uint64_t seed = test_seed();
  for (const PrefillTestConfig& cfg :
       {PrefillTestConfig{"fp8_causal_gqa2_300", 1, 4, 2, 300, 300, 128, true, DType::fp8_e4m3},
        PrefillTestConfig{"fp8_8192", 1, 4, 4, 8192, 8192, 128, false, DType::fp8_e4m3}}) {
    ++seed;
    PrefillCase control(cfg.problem(), launch_hopper_prefill<experiments::prefill_pingpong::pingpong>);
    control.prepare(seed, 1);
    const AccuracyReport ok = run_once(control);
    EXPECT_TRUE(ok.passed) << cfg.name << ", no fault: " << ok.message;
    PrefillCase faulty(cfg.problem(), hopper_prefill_fault_launch(HopperFault::vt_key_order));
    faulty.prepare(seed, 1);
    const AccuracyReport bad = run_once(faulty);
    EXPECT_FALSE(bad.passed) << cfg.name << ", vt_key_order: " << bad.message;
    std::printf("%s: no fault %s; vt_key_order %s\n", cfg.name, ok.message.c_str(), bad.message.c_str());
  }
}

}  // namespace
}  // namespace schedlab::kernels
