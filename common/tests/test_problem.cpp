#include "common/problem.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

namespace schedlab {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

template <typename Problem>
void expect_invalid(const Problem& p, const std::string& field, const KernelSupport& support = {}) {
  try {
    p.validate(support);
    ADD_FAILURE() << "expected InvalidProblem naming " << field;
  } catch (const InvalidProblem& e) {
    EXPECT_EQ(e.field(), field) << e.what();
  }
}

// A problem with one field changed from a valid base.
template <typename Problem>
Problem with(Problem p, const std::function<void(Problem&)>& change) {
  change(p);
  return p;
}

// ---- prefill ----------------------------------------------------------------------------

PrefillProblem valid_prefill() {
  PrefillProblem p;
  p.batch = 2, p.q_heads = 8, p.kv_heads = 2, p.q_len = 64, p.kv_len = 96, p.head_dim = 64;
  return p;
}

TEST(PrefillValidate, ValidProblemsPass) {
  EXPECT_NO_THROW(valid_prefill().validate());
  EXPECT_NO_THROW(PrefillProblem{}.validate());
  PrefillProblem p = valid_prefill();
  p.causal = true, p.window = 16, p.softmax_scale = 0.1f, p.dtype = DType::f16;
  EXPECT_NO_THROW(p.validate({.head_dims = {64, 128}, .dtypes = {DType::f16}}));
}

TEST(PrefillValidate, RejectsNonPositiveSizes) {
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.batch = 0; }), "batch");
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.batch = -1; }), "batch");
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.q_heads = 0; }), "q_heads");
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.kv_heads = 0; }), "kv_heads");
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.kv_heads = -2; }), "kv_heads");
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.q_len = 0; }), "q_len");
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.kv_len = -5; }), "kv_len");
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.head_dim = 0; }), "head_dim");
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.head_dim = -64; }), "head_dim");
}

TEST(PrefillValidate, RejectsQHeadsNotAMultipleOfKvHeads) {
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.q_heads = 6, p.kv_heads = 4; }), "q_heads");
}

TEST(PrefillValidate, RejectsUnsupportedHeadDims) {
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.head_dim = 12; }), "head_dim");
  expect_invalid(valid_prefill(), "head_dim", {.head_dims = {128, 256}});
  // Not a multiple of 8 is rejected even when a kernel lists it.
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.head_dim = 100; }), "head_dim",
                 {.head_dims = {100}});
}

TEST(PrefillValidate, RejectsUnsupportedDtype) {
  expect_invalid(valid_prefill(), "dtype", {.dtypes = {DType::f16, DType::fp8_e4m3}});
}

TEST(PrefillValidate, RejectsBadWindowAndMasks) {
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.window = -1; }), "window");
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.window = 32; }), "window",
                 {.sliding_window = false});
  expect_invalid(with<PrefillProblem>(valid_prefill(), [](auto& p) { p.causal = true; }), "causal",
                 {.causal = false});
  // Not asking for the feature is fine on a kernel without it.
  EXPECT_NO_THROW(valid_prefill().validate({.sliding_window = false, .causal = false}));
}

TEST(PrefillValidate, RejectsBadSoftmaxScale) {
  for (float s : {kNaN, kInf, -kInf, -0.5f}) {
    expect_invalid(with<PrefillProblem>(valid_prefill(), [s](auto& p) { p.softmax_scale = s; }), "softmax_scale");
  }
}

TEST(PrefillProblem, ScaleDefaultsToInverseSqrtHeadDim) {
  PrefillProblem p = valid_prefill();
  EXPECT_FLOAT_EQ(p.scale(), 1.f / 8.f);
  p.softmax_scale = 0.3f;
  EXPECT_FLOAT_EQ(p.scale(), 0.3f);
}

TEST(PrefillProblem, VisibleKeysFollowBottomRightCausalAndWindow) {
  PrefillProblem p = valid_prefill();  // q_len 64, kv_len 96: offset 32
  EXPECT_EQ(p.visible_keys(0).begin, 0);
  EXPECT_EQ(p.visible_keys(0).end, 96);
  p.causal = true;
  EXPECT_EQ(p.visible_keys(0).end, 33);   // sees keys 0..32
  EXPECT_EQ(p.visible_keys(63).end, 96);  // the last query sees the last key
  p.window = 8;
  EXPECT_EQ(p.visible_keys(0).begin, 25);  // keys 25..32
  EXPECT_EQ(p.visible_keys(0).size(), 8);
  p.q_len = 100, p.kv_len = 90, p.window = kNoWindow;  // offset -10
  EXPECT_EQ(p.visible_keys(9).size(), 0);  // the first 10 queries see nothing
  EXPECT_EQ(p.visible_keys(10).size(), 1);
}

TEST(PrefillProblem, FlopsCountVisiblePairs) {
  PrefillProblem p;
  p.batch = 2, p.q_heads = 4, p.kv_heads = 4, p.q_len = 128, p.kv_len = 256, p.head_dim = 64;
  const double per_pair = 4.0 * 64 * 4 * 2;
  EXPECT_DOUBLE_EQ(p.flops(), per_pair * 128 * 256);
  // Causal square: n(n+1)/2 pairs, the papers' n^2/2 plus half the diagonal.
  p.kv_len = 128, p.causal = true;
  EXPECT_DOUBLE_EQ(p.flops(), per_pair * (128.0 * 128 / 2 + 128.0 / 2));
  // Window w on a long square causal problem: w keys per query once past the first w.
  p.q_len = p.kv_len = 1000, p.window = 10;
  EXPECT_DOUBLE_EQ(p.flops(), per_pair * (10.0 * 11 / 2 + 990.0 * 10));
}

TEST(PrefillProblem, RaggedBatchPacksItsSequences) {
  const PrefillProblem p = make_ragged_prefill({100, 7, 300}, 8, 2, 64, true, DType::bf16);
  EXPECT_EQ(p.batch, 3);
  EXPECT_EQ(p.q_len, 300);
  EXPECT_EQ(p.kv_len, 300);
  EXPECT_EQ(p.q_start(0), 0);
  EXPECT_EQ(p.q_start(2), 107);
  EXPECT_EQ(p.kv_start(3), 407);
  EXPECT_EQ(p.q_elems(), 407 * 8 * 64);
  EXPECT_EQ(p.kv_elems(), 407 * 2 * 64);
  EXPECT_EQ(p.visible_keys(6, 1).end, 7);  // sequence 1's last query sees its 7 keys
  EXPECT_EQ(p.visible_keys(0, 2).end, 1);
  // The FLOPs are the sequences' own, added.
  double sum = 0;
  for (int len : p.lengths) {
    PrefillProblem one = p;
    one.lengths.clear();
    one.batch = 1;
    one.q_len = one.kv_len = len;
    sum += one.flops();
  }
  EXPECT_DOUBLE_EQ(p.flops(), sum);
  // A uniform batch written as lengths packs as the uniform layout does.
  PrefillProblem uniform = p;
  uniform.lengths.clear();
  uniform.q_len = uniform.kv_len = 50;
  const PrefillProblem listed = make_ragged_prefill({50, 50, 50}, 8, 2, 64, true, DType::bf16);
  EXPECT_EQ(listed.q_start(2), uniform.q_start(2));
  EXPECT_DOUBLE_EQ(listed.flops(), uniform.flops());
  EXPECT_DOUBLE_EQ(listed.min_bytes(), uniform.min_bytes());
}

TEST(PrefillValidate, RejectsMalformedRaggedBatches) {
  const PrefillProblem ragged = make_ragged_prefill({10, 20}, 4, 4, 64, false, DType::bf16);
  expect_invalid(with<PrefillProblem>(ragged, [](auto& p) { p.batch = 3; }), "lengths");
  expect_invalid(with<PrefillProblem>(ragged, [](auto& p) { p.q_len = 10; }), "lengths");
  expect_invalid(with<PrefillProblem>(ragged, [](auto& p) { p.lengths[0] = 0; }), "lengths");
  expect_invalid(ragged, "lengths", KernelSupport{.ragged = false});
  EXPECT_NO_THROW(ragged.validate(KernelSupport{}));
  EXPECT_THROW(make_ragged_prefill({}, 4, 4, 64, false, DType::bf16), InvalidProblem);
}

TEST(PrefillProblem, MinBytesReadQKVOnceWriteOOnce) {
  PrefillProblem p = valid_prefill();
  EXPECT_DOUBLE_EQ(p.min_bytes(), 2.0 * (2 * p.q_elems() + 2 * p.kv_elems()));
  p.dtype = DType::fp8_e4m3;  // bytes in, O in bf16
  EXPECT_DOUBLE_EQ(p.min_bytes(), 1.0 * (p.q_elems() + 2 * p.kv_elems()) + 2.0 * p.q_elems());
}

// ---- decode -----------------------------------------------------------------------------

DecodeProblem valid_decode() {
  return make_decode_problem(/*batch=*/3, /*q_heads=*/8, /*kv_heads=*/2, /*head_dim=*/64, /*page_size=*/16,
                             {5, 40, 33}, DType::bf16, /*seed=*/7);
}

DecodeProblem valid_fp8_decode() {
  return make_decode_problem(3, 8, 2, 64, 16, {5, 40, 33}, DType::fp8_e4m3, 7);
}

TEST(DecodeValidate, ValidProblemsPass) {
  EXPECT_NO_THROW(valid_decode().validate());
  EXPECT_NO_THROW(valid_fp8_decode().validate({.head_dims = {64}, .dtypes = {DType::fp8_e4m3}, .page_sizes = {16}}));
  DecodeProblem p = valid_decode();
  p.q_dtype = DType::f16, p.window = 8, p.softmax_scale = 0.2f;
  EXPECT_NO_THROW(p.validate());
}

TEST(DecodeValidate, RejectsNonPositiveSizes) {
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.batch = 0; }), "batch");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.q_heads = -8; }), "q_heads");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.kv_heads = 0; }), "kv_heads");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.head_dim = 0; }), "head_dim");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.page_size = 0; }), "page_size");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.num_pages = 0; }), "num_pages");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.max_pages_per_seq = -1; }),
                 "max_pages_per_seq");
}

TEST(DecodeValidate, RejectsQHeadsNotAMultipleOfKvHeads) {
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.kv_heads = 3; }), "q_heads");
}

TEST(DecodeValidate, RejectsUnsupportedHeadDims) {
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.head_dim = 60; }), "head_dim");
  expect_invalid(valid_decode(), "head_dim", {.head_dims = {128}});
}

TEST(DecodeValidate, RejectsBadBlockTables) {
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.block_table.pop_back(); }), "block_table");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.block_table.push_back(0); }), "block_table");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.block_table[0] = -1; }), "block_table");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.block_table[1] = p.num_pages; }),
                 "block_table");
  // An unused tail entry must be a real page too.
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.block_table.back() = p.num_pages + 5; }),
                 "block_table");
}

TEST(DecodeValidate, RejectsBadContextLengths) {
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.context_lens.pop_back(); }), "context_lens");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.context_lens.push_back(3); }), "context_lens");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.context_lens[0] = 0; }), "context_lens");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.context_lens[2] = -4; }), "context_lens");
  // Lengths that disagree with the table: 3 pages of 16 hold at most 48 keys.
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.context_lens[1] = 49; }), "context_lens");
  EXPECT_NO_THROW(with<DecodeProblem>(valid_decode(), [](auto& p) { p.context_lens[1] = 48; }).validate());
}

TEST(DecodeValidate, RejectsUnsupportedDtypesAndPageSizes) {
  expect_invalid(valid_decode(), "kv_dtype", {.dtypes = {DType::fp8_e4m3}});
  expect_invalid(valid_decode(), "page_size", {.page_sizes = {32, 64}});
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.q_dtype = DType::f32; }), "q_dtype");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.q_dtype = DType::fp8_e4m3; }), "q_dtype");
}

TEST(DecodeValidate, RejectsBadFp8Scales) {
  expect_invalid(with<DecodeProblem>(valid_fp8_decode(), [](auto& p) { p.k_scale.clear(); }), "k_scale");
  expect_invalid(with<DecodeProblem>(valid_fp8_decode(), [](auto& p) { p.v_scale.clear(); }), "v_scale");
  expect_invalid(with<DecodeProblem>(valid_fp8_decode(), [](auto& p) { p.k_scale.push_back(1.f); }), "k_scale");
  for (float s : {kNaN, kInf, 0.f, -1.f}) {
    expect_invalid(with<DecodeProblem>(valid_fp8_decode(), [s](auto& p) { p.k_scale[1] = s; }), "k_scale");
    expect_invalid(with<DecodeProblem>(valid_fp8_decode(), [s](auto& p) { p.v_scale[0] = s; }), "v_scale");
  }
  // Scales on a non-fp8 cache mean the caller thinks it is quantized: reject.
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.k_scale = {1.f, 1.f}; }), "k_scale");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.v_scale = {1.f, 1.f}; }), "v_scale");
}

TEST(DecodeValidate, RejectsBadWindowAndSoftmaxScale) {
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.window = -3; }), "window");
  expect_invalid(with<DecodeProblem>(valid_decode(), [](auto& p) { p.window = 8; }), "window",
                 {.sliding_window = false});
  for (float s : {kNaN, kInf, -1.f}) {
    expect_invalid(with<DecodeProblem>(valid_decode(), [s](auto& p) { p.softmax_scale = s; }), "softmax_scale");
  }
}

TEST(DecodeProblem, CountsVisibleKeys) {
  DecodeProblem p = valid_decode();  // lengths 5, 40, 33; q_heads 8, kv_heads 2, D 64
  EXPECT_EQ(p.total_context(), 78);
  EXPECT_DOUBLE_EQ(p.flops(), 4.0 * 64 * 8 * 78);
  EXPECT_DOUBLE_EQ(p.min_bytes(), 2.0 * 78 * 2 * 64 * 2 + 2.0 * 3 * 8 * 64 * 2);
  p.window = 10;
  EXPECT_EQ(p.first_visible_key(0), 0);
  EXPECT_EQ(p.first_visible_key(1), 30);
  EXPECT_EQ(p.visible_keys(1).size(), 10);
  EXPECT_EQ(p.total_context(), 78);  // the stored context, not the window
  EXPECT_DOUBLE_EQ(p.flops(), 4.0 * 64 * 8 * (5 + 10 + 10));
}

TEST(MakeDecodeProblem, BlockTableIsAPermutationOfThePool) {
  const DecodeProblem p = make_decode_problem(4, 8, 8, 128, 16, {100, 1, 16, 300}, DType::bf16, 42, /*spare=*/5);
  const int needed = 7 + 1 + 1 + 19;
  EXPECT_EQ(p.max_pages_per_seq, 19);
  EXPECT_EQ(p.num_pages, needed + 5);
  std::vector<int> used;
  for (int s = 0; s < p.batch; ++s) {
    const int pages = (p.context_lens[s] + p.page_size - 1) / p.page_size;
    for (int i = 0; i < p.max_pages_per_seq; ++i) {
      const int page = p.block_table[s * p.max_pages_per_seq + i];
      if (i < pages) {
        used.push_back(page);
      } else {
        EXPECT_EQ(page, 0) << "unused tail entries are page 0";
      }
    }
  }
  std::sort(used.begin(), used.end());
  EXPECT_EQ(std::adjacent_find(used.begin(), used.end()), used.end()) << "no page used twice";
  EXPECT_GE(used.front(), 0);
  EXPECT_LT(used.back(), p.num_pages);
  EXPECT_EQ(int(used.size()), needed);
  EXPECT_TRUE(p.k_scale.empty() && p.v_scale.empty());
}

TEST(MakeDecodeProblem, ConsecutivePagesAreNotInOrder) {
  const DecodeProblem p = make_decode_problem(1, 8, 8, 128, 16, {16 * 64}, DType::bf16, 3);
  std::vector<int> row(p.block_table.begin(), p.block_table.begin() + p.max_pages_per_seq);
  int in_order = 0;
  for (std::size_t i = 1; i < row.size(); ++i) in_order += row[i] == row[i - 1] + 1;
  EXPECT_LT(in_order, 8) << "a sequence's pages should be scattered, not contiguous";
  EXPECT_FALSE(std::is_sorted(row.begin(), row.end()));
}

TEST(MakeDecodeProblem, DeterministicFromSeed) {
  const auto make = [](std::uint64_t seed) {
    return make_decode_problem(2, 8, 2, 64, 16, {100, 200}, DType::fp8_e4m3, seed, 3);
  };
  EXPECT_EQ(make(1).block_table, make(1).block_table);
  EXPECT_EQ(make(1).k_scale, make(1).k_scale);
  EXPECT_NE(make(1).block_table, make(2).block_table);
}

TEST(MakeDecodeProblem, Fp8GetsPositivePerHeadScales) {
  const DecodeProblem p = valid_fp8_decode();
  ASSERT_EQ(p.k_scale.size(), 2u);
  ASSERT_EQ(p.v_scale.size(), 2u);
  for (float s : p.k_scale) EXPECT_TRUE(s >= 0.5f && s <= 2.f) << s;
  for (float s : p.v_scale) EXPECT_TRUE(s >= 0.5f && s <= 2.f) << s;
  EXPECT_NE(p.k_scale[0], p.k_scale[1]);
}

TEST(MakeDecodeProblem, NamesBadArguments) {
  const auto throws_field = [](const std::function<void()>& make, const std::string& field) {
    try {
      make();
      ADD_FAILURE() << "expected InvalidProblem naming " << field;
    } catch (const InvalidProblem& e) {
      EXPECT_EQ(e.field(), field) << e.what();
    }
  };
  throws_field([] { make_decode_problem(2, 8, 2, 64, 16, {10}, DType::bf16, 1); }, "context_lens");
  throws_field([] { make_decode_problem(1, 8, 2, 64, 16, {0}, DType::bf16, 1); }, "context_lens");
  throws_field([] { make_decode_problem(1, 8, 2, 64, 0, {10}, DType::bf16, 1); }, "page_size");
  throws_field([] { make_decode_problem(1, 8, 3, 64, 16, {10}, DType::bf16, 1); }, "q_heads");
}

}  // namespace
}  // namespace schedlab
