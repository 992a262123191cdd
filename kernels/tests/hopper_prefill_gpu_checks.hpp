// The Hopper prefill family's GPU checks, shared by the family's tests
// (kernels/tests/test_hopper_prefill_gpu.cpp) and each Hopper experiment's
// (experiments/<name>/test_gpu.cpp, built into the same binary): a policy against the double
// reference on the shared prefill problems (kernels/tests/prefill_test_configs.hpp; the copies
// zero-fill past the end of a sequence) plus more tiles than SMs (persistent CTAs walk several),
// each launched twice on the same buffers (persistent pipeline state starts over); fp8 e4m3
// where the policy runs it (the others must refuse it); and the type-parameterized suite an
// experiment instantiates for its variants (HopperPrefillGpu). Label: gpu.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "common/harness/axes.hpp"
#include "kernels/hopper_prefill/hopper_policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill.hpp"
#include "kernels/tests/prefill_test_configs.hpp"
#include "kernels/tests/test_seed.hpp"

namespace schedlab::kernels::hopper_prefill_test {

// The shared prefill problems, more tiles than SMs (persistent CTAs walk several; 1088 tiles
// at 2100 keys leave a last wave the short kernel splits), tiles split into pieces, and the
// family default's three kernels by length: the short one (short_keys: most of the shared
// problems), one CTA per tile past it (causal: 2048 < keys < 6144 at head dim 128, > 2048 at 64;
// non-causal: > 16384), and the long causal one (kLongCausalFromKeys: the non-causal key
// tile); q_len below and at kv_len and lengths that are not tile multiples.
inline std::vector<PrefillTestConfig> configs() {
  auto all = prefill_test_configs();
  all.push_back({"d128_more_tiles_than_sms", 4, 16, 16, 1100, 1100, 128, true, DType::bf16});
  all.push_back({"d128_causal_q_lt_kv_3000", 1, 4, 2, 700, 3000, 128, true, DType::bf16});
  all.push_back({"d64_causal_2500_f16", 1, 3, 1, 2500, 2500, 64, true, DType::f16});
  all.push_back({"d128_gqa2_700", 2, 4, 2, 700, 700, 128, false, DType::bf16});
  all.push_back({"d128_more_tiles_than_sms_2100", 2, 32, 8, 2100, 2100, 128, false, DType::bf16});
  all.push_back({"d128_q_lt_kv_4500", 1, 4, 2, 700, 4500, 128, false, DType::bf16});
  all.push_back({"d64_gqa2_1500", 1, 4, 2, 1500, 1500, 64, false, DType::bf16});
  all.push_back({"d128_q_lt_kv_16500", 1, 2, 1, 200, 16500, 128, false, DType::bf16});
  all.push_back({"d64_q_lt_kv_16500_f16", 1, 2, 1, 200, 16500, 64, false, DType::f16});
  all.push_back({"d128_long_causal_q_lt_kv", 1, 4, 2, 300, 6500, 128, true, DType::bf16});
  all.push_back({"d128_long_causal_f16", 1, 2, 1, 1000, 6200, 128, true, DType::f16});
  // Fewer tiles than SMs without the mask, long enough that each CTA's share of their key tiles
  // reaches kSplitTailMinShareKeys: every tile split by keys (kSplitTailFill), into up to 12
  // pieces, the last key tile partial.
  all.push_back({"d128_split_tail", 1, 4, 2, 300, 12000, 128, false, DType::bf16});
  all.push_back({"d64_split_tail", 1, 8, 1, 200, 12000, 64, false, DType::bf16});
  return all;
}
static_assert(kHasLongCausal<HopperPrefillPolicy> && 6200 >= HopperPrefillPolicy::kLongCausalFromKeys,
              "the long causal problems above must reach the family default's long causal kernel");
static_assert(kHasShortSeq<HopperPrefillPolicy, true> && kHasShortSeq<HopperPrefillPolicy, false> &&
                  HopperPrefillPolicy::short_keys(true) < 2500 && HopperPrefillPolicy::short_keys(false) < 16500,
              "the causal problems of 2500 and 3000 keys and the non-causal ones of 16500 must reach the "
              "family default's kernel of one CTA per tile");

// The shared fp8 problems at head dim 128 (the only fp8 head dim here), plus lengths around
// the 128- and 192-key tiles, q_len != kv_len without a mask, and more tiles than SMs.
inline std::vector<PrefillTestConfig> fp8_configs() {
  std::vector<PrefillTestConfig> all;
  for (const PrefillTestConfig& c : prefill_fp8_test_configs())
    if (c.head_dim == 128) all.push_back(c);
  constexpr DType kFp8 = DType::fp8_e4m3;
  all.push_back({"fp8_q_gt_kv_one_past_192", 2, 4, 2, 300, 193, 128, false, kFp8});
  all.push_back({"fp8_q_lt_kv_tile_multiple", 1, 2, 2, 128, 384, 128, false, kFp8});
  all.push_back({"fp8_causal_q_lt_kv_385", 1, 4, 1, 200, 385, 128, true, kFp8});
  all.push_back({"fp8_more_tiles_than_sms", 4, 16, 16, 1100, 1100, 128, true, kFp8});
  all.push_back({"fp8_long_causal_q_lt_kv", 1, 2, 2, 300, 6500, 128, true, kFp8});  // the long causal kernel
  all.push_back({"fp8_q_lt_kv_one_past_256", 1, 2, 2, 200, 257, 128, false, kFp8});  // Fp8Meet's last tile partial
  all.push_back({"fp8_open_more_tiles_than_sms", 4, 16, 16, 1100, 1100, 128, false, kFp8});  // meetings across tiles
  all.push_back({"fp8_q_lt_kv_5000", 1, 2, 1, 200, 5000, 128, false, kFp8});  // Fp8Meet, a partial last key tile
  all.push_back({"fp8_q_lt_kv_16500", 1, 2, 1, 200, 16500, 128, false, kFp8});  // past Fp8Meet's and the short kernel's keys
  all.push_back({"fp8_split_tail", 1, 4, 2, 300, 11500, 128, false, kFp8});  // 12 tiles, split among the CTAs (kSplitTailFill)
  return all;
}
// The default runs Fp8Meet as far as its short kernels go, so it builds no short kernel of its
// own fp8 tile (a policy with fewer kFp8MeetKeys has one); under the mask it runs Fp8MeetCausal
// at every length.
static_assert(kHasFp8Meet<HopperPrefillPolicy> && kFp8MeetKeysOf<HopperPrefillPolicy> >= 5000 &&
                  kFp8MeetKeysOf<HopperPrefillPolicy> == kFp8ShortKeysOf<HopperPrefillPolicy> &&
                  kFp8ShortKeysOf<HopperPrefillPolicy> < 16500 && kHasFp8MeetCausal<HopperPrefillPolicy>,
              "the fp8 problems without the mask up to 5000 keys reach the family default's short kernel on "
              "cuDNN's loop (Fp8Meet), the one of 16500 its kernel of one CTA per tile, the causal ones "
              "Fp8MeetCausal");

// Ragged batches (the sequences packed one after another, PrefillProblem::lengths): a
// one-token sequence, lengths at and around the 128-row and the key tiles, GQA, both masks,
// both head dims, f16; a batch whose longest sequence reaches the long causal kernel; more query
// blocks than SMs; fp8 where the policy runs it (ragged_fp8_configs).
struct RaggedTestConfig {
  const char* name;
  std::vector<int> lengths;
  int q_heads, kv_heads, head_dim;
  bool causal;
  DType dtype;
  PrefillProblem problem() const { return make_ragged_prefill(lengths, q_heads, kv_heads, head_dim, causal, dtype); }
};
inline std::vector<RaggedTestConfig> ragged_configs() {
  return {{"ragged_causal_gqa_edges", {1, 127, 128, 129, 300, 1000}, 4, 2, 128, true, DType::bf16},
          {"ragged_d128_one_token_last", {176, 177, 1}, 2, 2, 128, false, DType::bf16},
          {"ragged_d64_gqa", {200, 17, 513, 64}, 8, 2, 64, false, DType::bf16},
          {"ragged_d64_causal_f16", {65, 1000, 3}, 4, 4, 64, true, DType::f16},
          {"ragged_causal_one_cta_per_tile", {2500, 100, 3000}, 4, 2, 128, true, DType::bf16},
          {"ragged_long_causal", {300, 6500, 40}, 4, 2, 128, true, DType::bf16},
          {"ragged_more_blocks_than_sms", harness::parse_lengths("uniform:40:100-900"), 16, 2, 128, true, DType::bf16}};
}
inline std::vector<RaggedTestConfig> ragged_fp8_configs() {
  constexpr DType kFp8 = DType::fp8_e4m3;
  return {{"ragged_fp8_causal_gqa", {300, 1, 193, 1000, 128}, 4, 2, 128, true, kFp8},
          {"ragged_fp8_non_causal", {191, 192, 385, 7}, 2, 1, 128, false, kFp8},
          {"ragged_fp8_long_causal", {6500, 200}, 2, 2, 128, true, kFp8}};
}

inline AccuracyReport run_once(PrefillCase& c) {
  c.poison_output();
  c.launch(0);
  c.synchronize();
  return harness::check_output(c, 0);
}

// Two launches on the same buffers must each pass the gate with finite outputs.
template <class TestConfig>
void expect_matches(const TestConfig& cfg, PrefillLaunch launch, std::uint64_t seed) {
  PrefillCase c(cfg.problem(), std::move(launch));
  c.prepare(seed, 1);
  for (int launch_no = 0; launch_no < 2; ++launch_no) {
    const AccuracyReport acc = run_once(c);
    EXPECT_TRUE(acc.passed) << cfg.name << " launch " << launch_no << ": " << acc.message;
    EXPECT_EQ(acc.nonfinite, 0u) << cfg.name;
  }
}

// Each problem whose shared storage fits the device (persistent_3stages' 192-key fp8 tiles do
// not: skipped with the reason, as the benchmarks skip it), against the reference.
template <class Policy, class TestConfig>
void expect_matches_where_it_fits(const std::vector<TestConfig>& configs, std::uint64_t& seed) {
  for (const TestConfig& cfg : configs) {
    try {
      require_hopper_prefill_fits<Policy>(cfg.problem());
    } catch (const UnsupportedProblem& e) {
      std::printf("%s: skipped, %s\n", cfg.name, e.what());
      continue;
    }
    expect_matches(cfg, launch_hopper_prefill<Policy>, ++seed);
  }
}

// Every policy an experiment times: INSTANTIATE_TYPED_TEST_SUITE_P(<experiment>,
// HopperPrefillGpu, ::testing::Types<...>).
template <class Policy>
class HopperPrefillGpu : public ::testing::Test {};
TYPED_TEST_SUITE_P(HopperPrefillGpu);

TYPED_TEST_P(HopperPrefillGpu, MatchesReferenceOnEveryConfig) {
  std::uint64_t seed = test_seed();
  for (const PrefillTestConfig& cfg : configs()) expect_matches(cfg, launch_hopper_prefill<TypeParam>, ++seed);
}

// fp8 e4m3 where the policy runs it: head dim 64 is refused by every policy, and every fp8
// problem by the policies with no producer warpgroup free to transpose V. A problem whose
// shared storage exceeds the device (persistent_3stages' 192-key tiles) is skipped, as the
// benchmarks skip it.
TYPED_TEST_P(HopperPrefillGpu, Fp8MatchesReferenceWhereSupported) {
  PrefillProblem d64 = fp8_configs()[0].problem();
  d64.head_dim = 64;
  EXPECT_THROW(require_hopper_prefill_fits<TypeParam>(d64), UnsupportedProblem);
  if constexpr (!kHopperFp8Capable<TypeParam>) {
    EXPECT_THROW(require_hopper_prefill_fits<TypeParam>(fp8_configs()[0].problem()), UnsupportedProblem);
    GTEST_SKIP() << "the policy refuses fp8 (no producer warpgroup free to transpose V)";
  } else {
    std::uint64_t seed = test_seed();
    expect_matches_where_it_fits<TypeParam>(fp8_configs(), seed);
  }
}

// A ragged batch: every sequence's rows against the reference (the sampled rows hold each
// sequence's first and last), in 16-bit and, where the policy runs it, in fp8.
TYPED_TEST_P(HopperPrefillGpu, RaggedBatchMatchesReference) {
  std::uint64_t seed = test_seed();
  for (const RaggedTestConfig& cfg : ragged_configs()) expect_matches(cfg, launch_hopper_prefill<TypeParam>, ++seed);
  if constexpr (kHopperFp8Capable<TypeParam>) expect_matches_where_it_fits<TypeParam>(ragged_fp8_configs(), seed);
}

// Small shapes for compute-sanitizer's memcheck and racecheck, which slow each launch by orders
// of magnitude: lengths off the tiles, causal GQA with q_len < kv_len, tiles split by keys
// (d128_split_tail, fp8_split_tail), a packed ragged batch;
// fp8 causal GQA too where the policy runs fp8 (the transposing warps' ordinary stores are
// what racecheck should see), and fp8 without the mask (a short launch: the consumers'
// meetings between their exponentials, Fp8Meet, a named barrier for synccheck).
TYPED_TEST_P(HopperPrefillGpu, SmallShapesForSanitizer) {
  std::uint64_t seed = test_seed();
  std::vector<PrefillTestConfig> small = {configs()[0], configs()[1], configs()[configs().size() - 2]};
  if constexpr (kHopperFp8Capable<TypeParam>) {
    small.push_back(fp8_configs()[0]);
    small.push_back({"fp8_open_one_past_256", 1, 2, 2, 200, 257, 128, false, DType::fp8_e4m3});
    small.push_back(fp8_configs().back());  // tiles split by keys
  }
  std::vector<PrefillProblem> problems;
  for (const PrefillTestConfig& cfg : small) problems.push_back(cfg.problem());
  // A packed batch whose last key tile reads past the tensor's end (the copies zero-fill it).
  problems.push_back(make_ragged_prefill({130, 1, 77}, 4, 2, 128, true, DType::bf16));
  for (const PrefillProblem& p : problems) {
    PrefillCase c(p, launch_hopper_prefill<TypeParam>);
    c.prepare(++seed, 1);
    EXPECT_TRUE(run_once(c).passed) << "batch " << p.batch << ", q_len " << p.q_len << ", kv_len " << p.kv_len;
  }
}

REGISTER_TYPED_TEST_SUITE_P(HopperPrefillGpu, MatchesReferenceOnEveryConfig, Fp8MatchesReferenceWhereSupported,
                            RaggedBatchMatchesReference, SmallShapesForSanitizer);

}  // namespace schedlab::kernels::hopper_prefill_test
