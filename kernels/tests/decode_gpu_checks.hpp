// The decode GPU tests' checks, shared by the family's tests (kernels/tests/test_decode_gpu.cpp)
// and each experiment's (experiments/<name>/test_gpu.cpp, built into the same binary):
// a policy against the double reference on the configurations every variant must pass, the
// row-tile shapes, relaunches with the output poisoned in between, and the type- and
// value-parameterized suites an experiment instantiates for its variants (DecodeGpu, every
// configuration and its small-shape twin for compute-sanitizer; DecodeGpuRowTileVariant, the
// row-tile bodies' small shapes). Label: gpu.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/decode/decode_case.hpp"
#include "kernels/tests/decode_row_tile_variants.hpp"
#include "kernels/tests/test_seed.hpp"

namespace schedlab::kernels::decode_test {

struct Config {
  const char* name;
  std::vector<int> lens;
  int q_heads, kv_heads, head_dim, page_size;
  DType kv;
  int window;
  int forced_splits;  // 0: the heuristic
};

inline std::vector<int> many_lengths(int n) {
  std::vector<int> lens(n);
  for (int i = 0; i < n; ++i) lens[i] = 1 + (i * 37) % 300;
  lens[n / 2] = 20000;
  return lens;
}

// Ragged lengths, shuffled block tables, sliding windows, GQA 1 to 32 (a group above 16 in two
// CTAs per KV head under a policy without row tiles), fp8 with scales, f16, split-K on, off and
// forced, head dims 64 and 128, pages of 16 to 64.
inline std::vector<Config> configs() {
  return {
      {"ragged_gqa4_bf16", {1, 15, 17, 3000}, 32, 8, 128, 16, DType::bf16, 0, 0},
      {"all_length_1", {1, 1, 1}, 32, 8, 128, 16, DType::bf16, 0, 0},
      {"ragged_gqa4_bf16_nosplit", {1, 15, 17, 3000}, 32, 8, 128, 16, DType::bf16, 0, 1},
      {"ragged_gqa4_bf16_split7", {1, 15, 17, 3000}, 32, 8, 128, 16, DType::bf16, 0, 7},
      {"ragged_gqa4_bf16_split2", {1, 15, 17, 3000}, 32, 8, 128, 16, DType::bf16, 0, 2},
      {"gqa1_d64_page64", {700, 64, 129}, 8, 8, 64, 64, DType::bf16, 0, 0},
      {"gqa8_f16", {2048, 33}, 32, 4, 128, 16, DType::f16, 0, 0},
      {"gqa16_d64", {999}, 16, 1, 64, 16, DType::bf16, 0, 3},
      {"gqa32_two_ctas_per_kv_head", {700, 33}, 64, 2, 128, 16, DType::bf16, 0, 0},
      {"gqa24_fp8_uneven_chunks", {500}, 48, 2, 128, 16, DType::fp8_e4m3, 0, 2},
      {"gqa2_odd_group", {257, 1000}, 6, 3, 128, 32, DType::bf16, 0, 0},
      {"window", {1, 15, 17, 5000}, 32, 8, 128, 16, DType::bf16, 100, 0},
      {"window_nosplit", {4000, 300}, 32, 8, 128, 16, DType::bf16, 1000, 1},
      {"fp8_scales", {1, 15, 17, 3000}, 32, 8, 128, 16, DType::fp8_e4m3, 0, 0},
      {"fp8_window_d64", {3000, 70}, 16, 4, 64, 64, DType::fp8_e4m3, 333, 0},
      // More (sequence, KV head) units than a dynamic grid has warps: units no warp starts on
      // are found by the warps that run out.
      {"many_units_ragged", many_lengths(700), 32, 8, 128, 16, DType::bf16, 0, 0},
  };
}

inline DecodeProblem problem_of(const Config& cfg, std::uint64_t seed, int spare_pages) {
  DecodeProblem p = make_decode_problem(static_cast<int>(cfg.lens.size()), cfg.q_heads, cfg.kv_heads, cfg.head_dim,
                                        cfg.page_size, cfg.lens, cfg.kv, seed, spare_pages, cfg.window);
  if (cfg.kv == DType::f16) p.q_dtype = DType::f16;  // the kernel reads f16 queries with f16 KV
  return p;
}

// One launch on poisoned output, checked against the double reference.
inline AccuracyReport run_decode(const DecodeKernel& kernel, const DecodeProblem& p, int forced_splits, std::uint64_t seed) {
  DecodeCase c(p, kernel, forced_splits);
  c.prepare(seed, 1);
  c.poison_output();
  c.launch(0);
  c.synchronize();
  return harness::check_output(c, 0);
}

// Launched twice with the output poisoned in between: a plan made once per case is reused.
inline void launch_twice_and_check(DecodeCase& c, std::uint64_t seed, const std::string& where) {
  c.prepare(seed, 1);
  for (int launch = 0; launch < 2; ++launch) {
    c.poison_output();
    c.launch(0);
    c.synchronize();
    const AccuracyReport acc = harness::check_output(c, 0);
    EXPECT_TRUE(acc.passed) << where << ", launch " << launch << ": " << acc.message;
    EXPECT_EQ(acc.nonfinite, 0u) << where;
  }
}

// GQA groups above 16 in one CTA of several row tiles (MaxRowTiles = 4): MQA 64/1, groups 20,
// 32 and 48 (rows past the group padded with zeros in the warpgroup body; in the warp body,
// warps with no rows of their own only copy), and 80 (two CTAs, of 64 and 16 rows), against
// the double reference; head dims 128 and 64; bf16 and fp8 KV; ragged lengths with 1 and one
// long sequence among short ones; the plan's splits and forced ones; relaunched with the output
// poisoned in between.
template <class Policy>
void expect_row_tiles_match_reference(bool balanced) {
  std::vector<int> one_long(6, 200);
  one_long.push_back(20000);
  const std::vector<std::vector<int>> batches = {{1, 17, 300, 3000}, one_long, {1}};
  const struct {
    int q_heads, kv_heads, row_tiles, head_dim;
  } groups[] = {{64, 1, 4, 128}, {40, 2, 2, 64}, {32, 1, 2, 128}, {96, 2, 3, 64}, {80, 1, 4, 128}, {64, 1, 4, 64}};
  std::uint64_t seed = test_seed();
  for (const auto& lens : batches)
    for (const auto& grp : groups)
      for (DType kv : {DType::bf16, DType::fp8_e4m3})
        for (int forced : {0, 3}) {
          const int page = lens.size() == 1 ? 32 : 16;
          const DecodeProblem p = make_decode_problem(static_cast<int>(lens.size()), grp.q_heads, grp.kv_heads,
                                                      grp.head_dim, page, lens, kv, ++seed, /*spare_pages=*/3);
          const std::string where = std::to_string(lens.size()) + " sequences up to " +
                                    std::to_string(*std::max_element(lens.begin(), lens.end())) + ", " +
                                    std::to_string(grp.q_heads) + "/" + std::to_string(grp.kv_heads) + ", D " +
                                    std::to_string(grp.head_dim) + ", " +
                                    std::string(dtype_name(kv)) + ", forced splits " + std::to_string(forced);
          DecodeCase c(p, DecodeKernel::of<Policy>(), forced);
          ASSERT_EQ(c.plan().row_tiles, grp.row_tiles) << where;
          ASSERT_EQ(c.plan().balanced(), balanced && forced == 0) << where;
          if (forced > 0) {
            ASSERT_EQ(c.plan().num_splits, 3) << where;
          }
          launch_twice_and_check(c, seed, where);
        }
}

// Every policy an experiment times, on every configuration above (DecodeGpu/N.*), and on small
// shapes of them for compute-sanitizer (ragged GQA 4 in bf16 on the plan's splits and on two
// forced ones, fp8 with scales, a sliding window, f16). An experiment instantiates it for its
// variants: INSTANTIATE_TYPED_TEST_SUITE_P(<experiment>, DecodeGpu, ::testing::Types<...>).
template <class Policy>
class DecodeGpu : public ::testing::Test {};
TYPED_TEST_SUITE_P(DecodeGpu);

TYPED_TEST_P(DecodeGpu, MatchesReferenceOnEveryConfig) {
  std::uint64_t seed = test_seed();
  for (const Config& cfg : configs()) {
    const DecodeProblem p = problem_of(cfg, seed, /*spare_pages=*/7);
    const AccuracyReport acc = run_decode(DecodeKernel::of<TypeParam>(), p, cfg.forced_splits, ++seed);
    EXPECT_TRUE(acc.passed) << cfg.name << ": " << acc.message;
    std::printf("%s: %s\n", cfg.name, acc.message.c_str());
    EXPECT_EQ(acc.nonfinite, 0u) << cfg.name;
  }
}

TYPED_TEST_P(DecodeGpu, SmallShapesForSanitizer) {
  const std::vector<Config> small = {
      {"ragged_gqa4_bf16", {1, 15, 17, 300}, 32, 8, 128, 16, DType::bf16, 0, 0},
      {"ragged_gqa4_bf16_split2", {1, 15, 17, 300}, 32, 8, 128, 16, DType::bf16, 0, 2},
      {"fp8_scales", {1, 15, 17, 300}, 32, 8, 128, 16, DType::fp8_e4m3, 0, 0},
      {"window_d64", {300, 70}, 16, 4, 64, 64, DType::bf16, 33, 0},
      {"gqa8_f16", {200, 33}, 32, 4, 128, 16, DType::f16, 0, 0},
  };
  std::uint64_t seed = test_seed();
  for (const Config& cfg : small) {
    const DecodeProblem p = problem_of(cfg, ++seed, /*spare_pages=*/1);
    const AccuracyReport acc = run_decode(DecodeKernel::of<TypeParam>(), p, cfg.forced_splits, seed);
    EXPECT_TRUE(acc.passed) << cfg.name << ": " << acc.message;
  }
}

REGISTER_TYPED_TEST_SUITE_P(DecodeGpu, MatchesReferenceOnEveryConfig, SmallShapesForSanitizer);

// The row-tile bodies and the token-balanced merge on small shapes, for compute-sanitizer
// (memcheck, racecheck, synccheck), which slows each launch by orders of magnitude: MQA 64/1
// and a group of 32, a length of 1, a range that is no multiple of a warpgroup step, and one
// unit cut into several chunks; the plan's splits and forced ones, bf16 and fp8. Each row-tile
// variant a test of its own (scripts/device_sanitize.sh can then run each in a process of its
// own): an experiment instantiates it with its row-tile variants
// (INSTANTIATE_TEST_SUITE_P(<experiment>, DecodeGpuRowTileVariant, ...), row_tile_variant_name)
// and registers them for the seed sweep (register_row_tile_variants).
class DecodeGpuRowTileVariant : public ::testing::TestWithParam<NamedDecodeKernel> {};
inline std::string row_tile_variant_name(const ::testing::TestParamInfo<NamedDecodeKernel>& v) {
  return std::string(v.param.name);
}

}  // namespace schedlab::kernels::decode_test
