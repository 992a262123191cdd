// Flash prefill against the double reference on the H200, every experiment policy: lengths
// that are not multiples of the tiles, causal with q_len < kv_len and q_len > kv_len (rows
// that see no key), GQA, head dim 64 and 128, bf16, f16 and fp8 e4m3 (its own gate). And the
// gates' power: every injected fault (PrefillFault) fails them, at short and long context, in
// bf16, f16 and fp8.
// Label: gpu.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

#include "experiments/prefill_kv_tiles/policy.hpp"
#include "experiments/prefill_lds_buffers/policy.hpp"
#include "experiments/prefill_pingpong/amd_policy.hpp"  // instantiated in prefill_wave_schedule_kernels.cu
#include "experiments/prefill_sched_barrier/policy.hpp"
#include "kernels/prefill/flash_prefill.hpp"
#if SCHEDLAB_PREFILL_TUNING
#include "kernels/prefill/tuning_policy.hpp"
#endif
#include "kernels/tests/fault_kernels.hpp"
#include "kernels/tests/prefill_test_configs.hpp"

namespace schedlab::kernels {
namespace {

using Config = PrefillTestConfig;
std::vector<Config> configs() {
  std::vector<Config> all = prefill_test_configs();
  for (const Config& c : prefill_fp8_test_configs()) all.push_back(c);
  return all;
}

template <class Policy>
class PrefillGpu : public ::testing::Test {};
using Policies = ::testing::Types<
    experiments::prefill_kv_tiles::kv_union, experiments::prefill_kv_tiles::kv_separate,
    experiments::prefill_sched_barrier::compiler, experiments::prefill_sched_barrier::pinned,
    experiments::prefill_sched_barrier::interleaved, experiments::prefill_lds_buffers::single,
    experiments::prefill_lds_buffers::double_buffer, experiments::prefill_lds_buffers::double_padded,
    experiments::prefill_pingpong::ping_pong_8wave, experiments::prefill_pingpong::plain_8wave
#if SCHEDLAB_PREFILL_TUNING
    ,
    experiments::prefill_tuning::w8_n64, experiments::prefill_tuning::w4_n128_single_ftz,
    experiments::prefill_tuning::w4_r32_union_ftz, experiments::prefill_tuning::w4_r32_union_u2_ftz,
    experiments::prefill_tuning::w4_r32_union_u2_thr_ftz, experiments::prefill_tuning::w4_r32_union_u8_thr_ftz,
    experiments::prefill_tuning::w4_r32_n48_u2_thr_ftz, experiments::prefill_tuning::w4_r32_n48_u8_thr_ftz,
    experiments::prefill_tuning::w4_r32_union_u2_thr, experiments::prefill_tuning::w4_r32_n48_u8_thr
#endif
    >;
TYPED_TEST_SUITE(PrefillGpu, Policies);

TYPED_TEST(PrefillGpu, MatchesReferenceOnEveryConfig) {
  std::uint64_t seed = std::random_device{}();
  for (const Config& cfg : configs()) {
    PrefillCase c(cfg.problem(), launch_flash_prefill<TypeParam>);
    c.prepare(++seed, 1);
    c.poison_output();
    c.launch(0);
    c.synchronize();
    const AccuracyReport acc = harness::check_output(c, 0);
    EXPECT_TRUE(acc.passed) << cfg.name << ": " << acc.message;
    std::printf("%s: %s\n", cfg.name, acc.message.c_str());
    EXPECT_EQ(acc.nonfinite, 0u) << cfg.name;
  }
}

// ---- injected faults ----------------------------------------------------------------------

AccuracyReport run_prefill(const PrefillProblem& p, PrefillLaunch launch, std::uint64_t seed) {
  PrefillCase c(p, std::move(launch));
  c.prepare(seed, 1);
  c.poison_output();
  c.launch(0);
  c.synchronize();
  return harness::check_output(c, 0);
}

// Causal, GQA 2, head dim 128, short and long: the shipped default passes on the same inputs,
// every fault fails.
TEST(PrefillFaults, EveryFaultFailsTheGate) {
  const struct {
    const char* name;
    PrefillLaunch launch;
  } faults[] = {{"drop_tile", prefill_fault_launch(PrefillFault::drop_tile)},
                {"stale_tile", prefill_fault_launch(PrefillFault::stale_tile)},
                {"skip_mask", prefill_fault_launch(PrefillFault::skip_mask)}};
  std::uint64_t seed = std::random_device{}();
  for (int len : {300, 8192})
    for (DType t : {DType::bf16, DType::f16, DType::fp8_e4m3}) {
      PrefillProblem p;
      p.batch = 1;
      p.q_heads = 4;
      p.kv_heads = 2;
      p.q_len = p.kv_len = len;
      p.head_dim = 128;
      p.causal = true;
      p.dtype = t;
      const std::string where = std::string(dtype_name(t)) + ", length " + std::to_string(len);
      const AccuracyReport control =
          run_prefill(p, launch_flash_prefill<experiments::prefill_lds_buffers::double_buffer>, ++seed);
      EXPECT_TRUE(control.passed) << where << ", no fault: " << control.message;
      std::printf("%s, no fault: %s\n", where.c_str(), control.message.c_str());
      for (const auto& f : faults) {
        const AccuracyReport acc = run_prefill(p, f.launch, seed);
        EXPECT_FALSE(acc.passed) << where << ", " << f.name << ": " << acc.message;
        std::printf("%s, %s: %s\n", where.c_str(), f.name, acc.message.c_str());
      }
    }
}

}  // namespace
}  // namespace schedlab::kernels
