// The register-tile prefill family's GPU checks, shared by the family's tests
// (kernels/tests/test_prefill_gpu.cu) and each experiment's (experiments/<name>/test_gpu.cpp,
// built into the same binary): a policy against the double reference on the shared prefill
// problems and their fp8 twins (kernels/tests/prefill_test_configs.hpp), output poisoned before
// each launch, and the type-parameterized suite an experiment instantiates for its variants
// (PrefillGpu: every problem, and small shapes of them for compute-sanitizer). Label: gpu.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "kernels/prefill/flash_prefill.hpp"
#include "kernels/tests/prefill_test_configs.hpp"
#include "kernels/tests/test_seed.hpp"

namespace schedlab::kernels::prefill_test {

inline std::vector<PrefillTestConfig> configs() {
  std::vector<PrefillTestConfig> all = prefill_test_configs();
  for (const PrefillTestConfig& c : prefill_fp8_test_configs()) all.push_back(c);
  return all;
}

inline AccuracyReport run_prefill(const PrefillProblem& p, PrefillLaunch launch, std::uint64_t seed) {
  PrefillCase c(p, std::move(launch));
  c.prepare(seed, 1);
  c.poison_output();
  c.launch(0);
  c.synchronize();
  return harness::check_output(c, 0);
}

// Each configuration on inputs from the test's seed on (++seed a configuration), launched once.
template <class Policy>
void expect_configs_match_reference(const std::vector<PrefillTestConfig>& chosen) {
  std::uint64_t seed = test_seed();
  for (const PrefillTestConfig& cfg : chosen) {
    const AccuracyReport acc = run_prefill(cfg.problem(), launch_flash_prefill<Policy>, ++seed);
    EXPECT_TRUE(acc.passed) << cfg.name << ": " << acc.message;
    std::printf("%s: %s\n", cfg.name, acc.message.c_str());
    EXPECT_EQ(acc.nonfinite, 0u) << cfg.name;
  }
}

// Every policy an experiment times: INSTANTIATE_TYPED_TEST_SUITE_P(<experiment>, PrefillGpu,
// ::testing::Types<...>).
template <class Policy>
class PrefillGpu : public ::testing::Test {};
TYPED_TEST_SUITE_P(PrefillGpu);

TYPED_TEST_P(PrefillGpu, MatchesReferenceOnEveryConfig) { expect_configs_match_reference<TypeParam>(configs()); }

// Small shapes for compute-sanitizer (memcheck, racecheck, synccheck), which slows each launch
// by orders of magnitude: ragged head dim 64, causal GQA with q_len < kv_len and with q_len >
// kv_len (rows that see no key, f16), and fp8 causal GQA.
TYPED_TEST_P(PrefillGpu, SmallShapesForSanitizer) {
  const std::vector<PrefillTestConfig> all = prefill_test_configs(), fp8 = prefill_fp8_test_configs();
  expect_configs_match_reference<TypeParam>({all[0], all[1], all[2], fp8[1]});
}

REGISTER_TYPED_TEST_SUITE_P(PrefillGpu, MatchesReferenceOnEveryConfig, SmallShapesForSanitizer);

}  // namespace schedlab::kernels::prefill_test
