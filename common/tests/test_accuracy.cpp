#include "common/harness/accuracy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <tuple>
#include <vector>

#include "common/data.hpp"
#include "common/problem.hpp"
#include "common/reference/attention_ref.hpp"

namespace schedlab {
namespace {

constexpr Tolerance kTight{1e-3, 1e-3, 1e-3, 0.0};

std::vector<double> normal_values(std::size_t n, std::uint64_t seed) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = normal_at(seed, i);
  return v;
}

// The reference as a kernel storing its output in t would return it.
std::vector<float> rounded_to(DType t, const std::vector<double>& ref) {
  std::vector<float> out;
  unsigned char slot[sizeof(float)];
  for (double r : ref) {
    store_from_float(t, slot, 0, float(r));
    out.push_back(load_as_float(t, slot, 0));
  }
  return out;
}

double round_to(DType t, double x) {
  unsigned char slot[sizeof(float)];
  store_from_float(t, slot, 0, float(x));
  return load_as_float(t, slot, 0);
}

TEST(Compare, ExactMatchPasses) {
  const std::vector<double> ref{1.0, -2.5, 0.0, 3.25};
  const AccuracyReport r = compare({1.f, -2.5f, 0.f, 3.25f}, ref, kTight, 2);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_EQ(r.rel_l2_err, 0.0);
  EXPECT_EQ(r.max_row_rel_err, 0.0);
  EXPECT_EQ(r.max_abs_err, 0.0);
  EXPECT_EQ(r.mismatch_pct, 0.0);
  EXPECT_EQ(r.nonfinite, 0u);
  EXPECT_EQ(r.compared, 4u);
  EXPECT_EQ(r.rows, 2u);
  EXPECT_EQ(r.message.rfind("ok", 0), 0u) << r.message;
}

TEST(Compare, NonFiniteOutputFailsAndSaysHowMany) {
  const std::vector<double> ref{1.0, 2.0, 3.0, 4.0};
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const AccuracyReport r = compare({1.f, nan, 3.f, inf}, ref, default_tolerance(DType::bf16, DType::bf16), 2);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.nonfinite, 2u);
  EXPECT_NE(r.message.find("2 non-finite"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("first at 1"), std::string::npos) << r.message;
}

TEST(Compare, LargeErrorFails) {
  const auto ref = normal_values(1000, 1);
  std::vector<float> out(ref.begin(), ref.end());
  for (std::size_t i = 0; i < 100; ++i) out[i] += 1.f;  // a tenth of the values wrong by O(1)
  const AccuracyReport r = compare(out, ref, default_tolerance(DType::bf16, DType::bf16), 100);
  EXPECT_FALSE(r.passed);
  EXPECT_NEAR(r.mismatch_pct, 10.0, 1e-9);
  EXPECT_NEAR(r.max_abs_err, 1.0, 1e-6);
  EXPECT_EQ(r.worst_row, 0u);
  EXPECT_NE(r.message.find("FAILED"), std::string::npos);
  EXPECT_NE(r.message.find("beyond its bound at 0"), std::string::npos) << r.message;
}

TEST(Compare, RelativeL2OnAKnownCase) {
  // |ref| = 5, |out - ref| = 0.5, one row.
  const AccuracyReport r = compare({3.f, 4.5f}, {3.0, 4.0}, {0.2, 0.2, 1.0, 0.0}, 2);
  EXPECT_DOUBLE_EQ(r.rel_l2_err, 0.1);
  EXPECT_DOUBLE_EQ(r.max_row_rel_err, 0.1);
  EXPECT_DOUBLE_EQ(r.max_abs_err, 0.5);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_FALSE(compare({3.f, 4.5f}, {3.0, 4.0}, {0.05, 1.0, 1.0, 0.0}, 2).passed);
  EXPECT_FALSE(compare({3.f, 4.5f}, {3.0, 4.0}, {1.0, 0.05, 1.0, 0.0}, 2).passed);
}

// The element bound scales with the row: the same absolute error passes a large row and
// fails a small one, which no absolute tolerance does.
TEST(Compare, ElementBoundIsRelativeToTheRowsScale) {
  const std::vector<double> ref{100.0, -100.0, 1e-3, -1e-3};
  const std::vector<float> out{100.05f, -100.f, 1e-3f + 0.05f, -1e-3f};
  const AccuracyReport r = compare(out, ref, {1.0, 1e9, 1e-2, 0.0}, 2);
  EXPECT_DOUBLE_EQ(r.mismatch_pct, 25.0);  // only the small row's 0.05 is outside 1% of its RMS
  EXPECT_FALSE(r.passed);
}

// One wrong row among many: the global error is diluted below its bound, the row's is not.
TEST(Compare, OneBadRowFailsThoughTheGlobalErrorPasses) {
  constexpr std::size_t kRows = 1000, kDim = 128;
  const auto ref = normal_values(kRows * kDim, 4);
  std::vector<float> out(ref.begin(), ref.end());
  for (std::size_t d = 0; d < kDim; ++d) out[7 * kDim + d] = float(1.02 * ref[7 * kDim + d]);  // row 7 off by 2%
  const Tolerance tol = default_tolerance(DType::bf16, DType::bf16);
  const AccuracyReport r = compare(out, ref, tol, kDim);
  EXPECT_LT(r.rel_l2_err, tol.rel_l2);
  EXPECT_FALSE(r.passed) << r.message;
  EXPECT_EQ(r.worst_row, 7u);
  EXPECT_NEAR(r.max_row_rel_err, 0.02, 1e-6);
}

TEST(Compare, SizeMismatchPartialRowsAndBadReferenceFail) {
  EXPECT_FALSE(compare({1.f}, {1.0, 2.0}, kTight, 1).passed);
  EXPECT_FALSE(compare({1.f, 2.f, 3.f}, {1.0, 2.0, 3.0}, kTight, 2).passed);
  EXPECT_FALSE(compare({1.f, 2.f}, {1.0, 2.0}, kTight, 0).passed);
  const AccuracyReport r = compare({1.f}, {std::nan("")}, kTight, 1);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.message.find("reference"), std::string::npos);
}

TEST(Compare, AllZeroReferenceRowNeedsZeros) {
  EXPECT_TRUE(compare({0.f, 0.f, 1.f, 1.f}, {0.0, 0.0, 1.0, 1.0}, kTight, 2).passed);
  EXPECT_FALSE(compare({0.f, 1e-6f, 1.f, 1.f}, {0.0, 0.0, 1.0, 1.0}, kTight, 2).passed);
}

TEST(Worse, FailedBeforePassedThenLargerRowError) {
  AccuracyReport a, b;
  a.passed = true;
  a.max_row_rel_err = 1e-3;
  b.passed = false;
  b.max_row_rel_err = 1e-4;
  EXPECT_EQ(&worse(a, b), &b);
  b.passed = true;
  EXPECT_EQ(&worse(a, b), &a);
}

TEST(DefaultTolerance, PassesOutputRoundingAndCatchesCoarserErrors) {
  const auto ref = normal_values(4096, 2);
  for (DType t : {DType::bf16, DType::f16}) {
    const Tolerance tol = default_tolerance(t, t);
    const AccuracyReport r = compare(rounded_to(t, ref), ref, tol, 128);
    EXPECT_TRUE(r.passed) << dtype_name(t) << ": " << r.message;
    // An fp8-rounded output (16x coarser than bf16) is not a bf16/f16-accurate kernel.
    EXPECT_FALSE(compare(rounded_to(DType::fp8_e4m3, ref), ref, tol, 128).passed) << dtype_name(t);
  }
  EXPECT_LT(default_tolerance(DType::f16, DType::f16).rel_l2, default_tolerance(DType::bf16, DType::bf16).rel_l2);
}

TEST(DefaultTolerance, Fp8KvTakesItsComputeTypesBounds) {
  const Tolerance bf16 = default_tolerance(DType::bf16, DType::bf16);
  const Tolerance fp8_kv = default_tolerance(DType::bf16, DType::fp8_e4m3);
  EXPECT_EQ(fp8_kv.rel_l2, bf16.rel_l2);
  EXPECT_EQ(fp8_kv.row_rel_l2, bf16.row_rel_l2);
  // Mixed storage takes the coarser bound.
  EXPECT_EQ(default_tolerance(DType::f32, DType::bf16).rel_l2, bf16.rel_l2);
  EXPECT_LT(default_tolerance(DType::f32, DType::f32).rel_l2, bf16.rel_l2);
}

TEST(AccuracyRule, NamesEveryBound) {
  const std::string rule = accuracy_rule();
  for (const char* s : {"bf16", "f16", "every row", "RMS", "every input set", "last timed launch", "sequence"})
    EXPECT_NE(rule.find(s), std::string::npos) << s << " in " << rule;
}

// ---- the gate's power on attention outputs -----------------------------------------------
// A decode problem (GQA 4, head dim 128, page 16, so a page is one 16-key tile of the
// kernels) at the benchmarks' shortest and longest context. Faults are simulated on the
// double reference by editing the block table: a dropped tile is a page left out, a stale
// tile is a page read twice (the one two stages back, as with two buffers), a lost split
// partial is a split's pages left out (batch 1 at 64k plans 33 splits of 125 tiles on the
// H200's 132 SMs at two CTAs each). A correct kernel is emulated by rounding P to its MMA type and O to the output type,
// the roundings every kernel here makes.

struct Attention {
  DecodeProblem p;
  std::vector<unsigned char> q, k, v;
  std::vector<double> ref;  // every row
};

std::vector<double> reference_with(const Attention& a, const DecodeProblem& p) {
  return decode_reference(p, a.q.data(), a.k.data(), a.v.data(), all_rows(p));
}

Attention decode_attention(int context, DType kv, std::uint64_t seed) {
  Attention a;
  a.p = make_decode_problem(1, 8, 2, 128, 16, {context}, kv, seed);
  const auto fill = [&](std::vector<unsigned char>& buf, DType t, std::size_t n, std::uint64_t s) {
    buf.resize(n * dtype_bytes(t));
    fill_normal_host(t, buf.data(), n, s, 1.f);
  };
  fill(a.q, a.p.q_dtype, std::size_t(a.p.batch) * a.p.q_heads * a.p.head_dim, seed + 1);
  fill(a.k, kv, a.p.pool_elems(), seed + 2);
  fill(a.v, kv, a.p.pool_elems(), seed + 3);
  a.ref = reference_with(a, a.p);
  return a;
}

// P = exp(S - m) rounded to p_type before P V, the sum taken unrounded (in fp32 on the
// device), O rounded to the query type.
std::vector<float> emulated_kernel(const Attention& a, DType p_type) {
  const DecodeProblem& p = a.p;
  const int d = p.head_dim, n = p.context_lens[0], group = p.group_size();
  const bool fp8 = p.kv_dtype == DType::fp8_e4m3;
  std::vector<float> out(std::size_t(p.q_heads) * d);
  std::vector<double> row(d);
  auto load_key = [&](const std::vector<unsigned char>& pool, int kvh, int key, double scale) {
    const std::int64_t at = p.pool_offset(p.block_table[key / p.page_size], kvh, key % p.page_size);
    for (int i = 0; i < d; ++i) row[i] = scale * load_as_float(p.kv_dtype, pool.data(), std::size_t(at + i));
  };
  for (int kvh = 0; kvh < p.kv_heads; ++kvh) {
    const double ks = fp8 ? p.k_scale[kvh] : 1.0, vs = fp8 ? p.v_scale[kvh] : 1.0;
    std::vector<std::vector<double>> q(group, std::vector<double>(d)), s(group, std::vector<double>(n)), o = q;
    for (int g = 0; g < group; ++g)
      for (int i = 0; i < d; ++i) q[g][i] = load_as_float(p.q_dtype, a.q.data(), std::size_t(kvh * group + g) * d + i);
    for (int j = 0; j < n; ++j) {  // S = Q K^T
      load_key(a.k, kvh, j, ks);
      for (int g = 0; g < group; ++g) {
        double dot = 0;
        for (int i = 0; i < d; ++i) dot += q[g][i] * row[i];
        s[g][j] = dot * p.scale();
      }
    }
    std::vector<double> m(group), l(group, 0.0);
    for (int g = 0; g < group; ++g) m[g] = *std::max_element(s[g].begin(), s[g].end());
    for (auto& og : o) std::fill(og.begin(), og.end(), 0.0);
    for (int j = 0; j < n; ++j) {  // O = P V
      load_key(a.v, kvh, j, vs);
      for (int g = 0; g < group; ++g) {
        const double pj = std::exp(s[g][j] - m[g]);
        l[g] += pj;
        const double pr = round_to(p_type, pj);
        for (int i = 0; i < d; ++i) o[g][i] += pr * row[i];
      }
    }
    for (int g = 0; g < group; ++g)
      for (int i = 0; i < d; ++i) out[std::size_t(kvh * group + g) * d + i] = float(round_to(p.q_dtype, o[g][i] / l[g]));
  }
  return out;
}

// The problem with pages [first, first + count) of sequence 0 left out.
DecodeProblem without_pages(DecodeProblem p, int first, int count) {
  auto row = p.block_table.begin();
  std::rotate(row + first, row + first + count, row + p.max_pages_per_seq);
  p.context_lens[0] -= count * p.page_size;
  return p;
}

struct Fault {
  const char* name;
  std::function<DecodeProblem(const DecodeProblem&)> apply;
};

std::vector<Fault> faults(int context) {
  const int tiles = context / 16, tile = tiles / 2 + 1;
  constexpr int kSplitTiles = 125;
  return {
      {"one tile dropped", [=](const DecodeProblem& p) { return without_pages(p, tile, 1); }},
      {"one stale tile",
       [=](DecodeProblem p) {
         p.block_table[tile] = p.block_table[tile - 2];
         return p;
       }},
      {"one split partial lost",
       [=](const DecodeProblem& p) { return without_pages(p, tile / 2, std::min(kSplitTiles, tiles / 4)); }},
  };
}

// Rows of KV head 0 from `bad`, the others from `good`: a fault confined to one work unit.
std::vector<float> one_unit(const std::vector<float>& good, const std::vector<double>& bad, const DecodeProblem& p) {
  std::vector<float> out = good;
  for (std::size_t i = 0; i < std::size_t(p.group_size()) * p.head_dim; ++i) out[i] = float(bad[i]);
  return out;
}

class GatePower : public ::testing::TestWithParam<std::tuple<int, DType>> {};

TEST_P(GatePower, CorrectKernelPassesEveryFaultFails) {
  const auto [context, kv] = GetParam();
  const Attention a = decode_attention(context, kv, 17);
  const Tolerance tol = default_tolerance(a.p.q_dtype, kv);
  const std::size_t dim = a.p.head_dim;

  // The roundings of a correct kernel: P in the MMA type (f16 for fp8 KV), O in bf16.
  const DType p_type = kv == DType::fp8_e4m3 ? DType::f16 : kv;
  const std::vector<float> good = emulated_kernel(a, p_type);
  const AccuracyReport ok = compare(good, a.ref, tol, dim);
  EXPECT_TRUE(ok.passed) << ok.message;
  EXPECT_LT(ok.rel_l2_err, tol.rel_l2 / 1.5) << "headroom: " << ok.message;
  EXPECT_LT(ok.max_row_rel_err, tol.row_rel_l2 / 2) << "headroom: " << ok.message;
  EXPECT_TRUE(compare(rounded_to(a.p.q_dtype, a.ref), a.ref, tol, dim).passed);
  std::printf("%s, context %d, correct (emulated): %s\n", dtype_name(kv).data(), context, ok.message.c_str());

  for (const Fault& f : faults(context)) {
    const auto bad = reference_with(a, f.apply(a.p));
    std::vector<float> everywhere(bad.begin(), bad.end());
    const AccuracyReport all = compare(everywhere, a.ref, tol, dim);
    EXPECT_FALSE(all.passed) << f.name << " in every unit: " << all.message;
    const AccuracyReport unit = compare(one_unit(good, bad, a.p), a.ref, tol, dim);
    EXPECT_FALSE(unit.passed) << f.name << " in one unit: " << unit.message;
    std::printf("  %s: every unit rel_l2 %.3g, worst row %.3g; one unit rel_l2 %.3g, worst row %.3g\n", f.name,
                all.rel_l2_err, all.max_row_rel_err, unit.rel_l2_err, unit.max_row_rel_err);
  }
}

INSTANTIATE_TEST_SUITE_P(ShortAndLongContext, GatePower,
                         ::testing::Combine(::testing::Values(1024, 65536),
                                            ::testing::Values(DType::bf16, DType::fp8_e4m3)),
                         [](const auto& info) {
                           return "context" + std::to_string(std::get<0>(info.param)) + "_" +
                                  std::string(dtype_name(std::get<1>(info.param)));
                         });

}  // namespace
}  // namespace schedlab
