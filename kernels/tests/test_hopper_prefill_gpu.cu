// Hopper prefill against the double reference on the H200, every experiment policy: lengths
// that are not multiples of the tiles (the copies zero-fill past the end), causal with q_len
// < kv_len and q_len > kv_len (rows that see no key), GQA, head dim 64 and 128, bf16 and
// f16, more tiles than SMs (persistent CTAs walk several), and a second launch on the same
// buffers (persistent pipeline state starts over). Label: gpu.
#include <gtest/gtest.h>

#include <random>

#include "experiments/prefill_intra_overlap/policy.hpp"
#include "experiments/prefill_persistent/policy.hpp"
#include "experiments/prefill_pingpong/policy.hpp"
#include "experiments/prefill_warp_specialization/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill.hpp"

namespace schedlab::kernels {
namespace {

struct Config {
  const char* name;
  int batch, q_heads, kv_heads, q_len, kv_len, head_dim;
  bool causal;
  DType dtype;
};

std::vector<Config> configs() {
  return {
      {"mha_d64_ragged", 2, 4, 4, 100, 100, 64, false, DType::bf16},
      {"gqa4_causal_q_lt_kv", 1, 8, 2, 77, 300, 128, true, DType::bf16},
      {"gqa4_causal_q_gt_kv_f16", 1, 4, 1, 300, 77, 128, true, DType::f16},
      {"gqa2_causal_513_f16", 2, 6, 3, 513, 513, 128, true, DType::f16},
      {"mha_d64_1000_f16", 1, 2, 2, 1000, 1000, 64, false, DType::f16},
      {"gqa2_d64_causal_long_kv", 1, 2, 1, 129, 1100, 64, true, DType::bf16},
      {"d128_tile_multiple", 1, 2, 2, 256, 256, 128, false, DType::bf16},
      {"d128_causal_1_row", 3, 2, 1, 1, 191, 128, true, DType::bf16},
      {"d128_more_tiles_than_sms", 4, 16, 16, 1100, 1100, 128, true, DType::bf16},
  };
}

template <class Policy>
class HopperPrefillGpu : public ::testing::Test {};
using Policies = ::testing::Types<
    experiments::prefill_pingpong::pingpong, experiments::prefill_pingpong::free_running,
    experiments::prefill_warp_specialization::ws_realloc, experiments::prefill_warp_specialization::ws_even_regs,
    experiments::prefill_warp_specialization::no_ws, experiments::prefill_intra_overlap::overlapped,
    experiments::prefill_intra_overlap::serial, experiments::prefill_persistent::one_per_tile,
    experiments::prefill_persistent::persistent, experiments::prefill_persistent::persistent_3stages>;
TYPED_TEST_SUITE(HopperPrefillGpu, Policies);

TYPED_TEST(HopperPrefillGpu, MatchesReferenceOnEveryConfig) {
  std::uint64_t seed = std::random_device{}();
  for (const Config& cfg : configs()) {
    PrefillProblem p;
    p.batch = cfg.batch;
    p.q_heads = cfg.q_heads;
    p.kv_heads = cfg.kv_heads;
    p.q_len = cfg.q_len;
    p.kv_len = cfg.kv_len;
    p.head_dim = cfg.head_dim;
    p.causal = cfg.causal;
    p.dtype = cfg.dtype;
    PrefillCase c(p, launch_hopper_prefill<TypeParam>);
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
  for (const Config& cfg : {configs()[0], configs()[1]}) {
    PrefillProblem p;
    p.batch = cfg.batch;
    p.q_heads = cfg.q_heads;
    p.kv_heads = cfg.kv_heads;
    p.q_len = cfg.q_len;
    p.kv_len = cfg.kv_len;
    p.head_dim = cfg.head_dim;
    p.causal = cfg.causal;
    p.dtype = cfg.dtype;
    PrefillCase c(p, launch_hopper_prefill<TypeParam>);
    c.prepare(++seed, 1);
    c.poison_output();
    c.launch(0);
    c.synchronize();
    EXPECT_TRUE(harness::check_output(c, 0).passed) << cfg.name;
  }
}

}  // namespace
}  // namespace schedlab::kernels
