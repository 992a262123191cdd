#include "common/harness/accuracy.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/data.hpp"

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

TEST(Compare, ExactMatchPasses) {
  const std::vector<double> ref{1.0, -2.5, 0.0, 3.25};
  const AccuracyReport r = compare({1.f, -2.5f, 0.f, 3.25f}, ref, kTight);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_EQ(r.rel_l2_err, 0.0);
  EXPECT_EQ(r.max_abs_err, 0.0);
  EXPECT_EQ(r.mismatch_pct, 0.0);
  EXPECT_EQ(r.nonfinite, 0u);
  EXPECT_EQ(r.compared, 4u);
  EXPECT_EQ(r.message.rfind("ok", 0), 0u) << r.message;
}

TEST(Compare, NonFiniteOutputFailsAndSaysHowMany) {
  const std::vector<double> ref{1.0, 2.0, 3.0, 4.0};
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const AccuracyReport r = compare({1.f, nan, 3.f, inf}, ref, default_tolerance(DType::bf16, DType::bf16));
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.nonfinite, 2u);
  EXPECT_NE(r.message.find("2 non-finite"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("first at 1"), std::string::npos) << r.message;
}

TEST(Compare, LargeErrorFails) {
  const auto ref = normal_values(1000, 1);
  std::vector<float> out(ref.begin(), ref.end());
  for (std::size_t i = 0; i < 100; ++i) out[i] += 1.f;  // a tenth of the rows wrong by O(1)
  const AccuracyReport r = compare(out, ref, default_tolerance(DType::bf16, DType::bf16));
  EXPECT_FALSE(r.passed);
  EXPECT_NEAR(r.mismatch_pct, 10.0, 1e-9);
  EXPECT_NEAR(r.max_abs_err, 1.0, 1e-6);
  EXPECT_NE(r.message.find("FAILED"), std::string::npos);
  EXPECT_NE(r.message.find("first mismatch at 0"), std::string::npos) << r.message;
}

TEST(Compare, RelativeL2OnAKnownCase) {
  // |ref| = 5, |out - ref| = 0.5.
  const AccuracyReport r = compare({3.f, 4.5f}, {3.0, 4.0}, {0.2, 1.0, 0.0, 0.0});
  EXPECT_DOUBLE_EQ(r.rel_l2_err, 0.1);
  EXPECT_DOUBLE_EQ(r.max_abs_err, 0.5);
  EXPECT_TRUE(r.passed) << r.message;
  EXPECT_FALSE(compare({3.f, 4.5f}, {3.0, 4.0}, {0.05, 1.0, 0.0, 0.0}).passed);
}

TEST(Compare, MismatchUsesAtolPlusRtolTimesReference) {
  const std::vector<double> ref{1.0, 10.0, 100.0, 0.0};
  // atol 0.1 + rtol 0.01 * |r|: allowed 0.11, 0.2, 1.1, 0.1.
  const std::vector<float> out{1.1f, 10.25f, 101.f, 0.05f};
  const AccuracyReport r = compare(out, ref, {1.0, 0.1, 0.01, 100.0});
  EXPECT_DOUBLE_EQ(r.mismatch_pct, 25.0);  // only 10.25 is outside
  EXPECT_FALSE(compare(out, ref, {1.0, 0.1, 0.01, 20.0}).passed);
}

TEST(Compare, SizeMismatchAndBadReferenceFail) {
  EXPECT_FALSE(compare({1.f}, {1.0, 2.0}, kTight).passed);
  const AccuracyReport r = compare({1.f}, {std::nan("")}, kTight);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.message.find("reference"), std::string::npos);
}

TEST(Compare, AllZeroReferenceNeedsZeros) {
  EXPECT_TRUE(compare({0.f, 0.f}, {0.0, 0.0}, kTight).passed);
  EXPECT_FALSE(compare({0.f, 1e-3f}, {0.0, 0.0}, kTight).passed);
}

TEST(DefaultTolerance, PassesOutputRoundingAndCatchesCoarserErrors) {
  const auto ref = normal_values(4096, 2);
  for (DType t : {DType::bf16, DType::f16}) {
    const Tolerance tol = default_tolerance(t, t);
    EXPECT_EQ(tol.rel_l2, 1e-2);
    const AccuracyReport r = compare(rounded_to(t, ref), ref, tol);
    EXPECT_TRUE(r.passed) << dtype_name(t) << ": " << r.message;
    // An fp8-rounded output (16x coarser than bf16) is not a bf16/f16-accurate kernel.
    EXPECT_FALSE(compare(rounded_to(DType::fp8_e4m3, ref), ref, tol).passed) << dtype_name(t);
  }
}

TEST(DefaultTolerance, Fp8KvIsLooserThanItsComputeTypeButStillCatchesBugs) {
  const Tolerance bf16 = default_tolerance(DType::bf16, DType::bf16);
  const Tolerance fp8_kv = default_tolerance(DType::bf16, DType::fp8_e4m3);
  EXPECT_GT(fp8_kv.rel_l2, bf16.rel_l2);
  EXPECT_LE(fp8_kv.rel_l2, 4e-2);
  // A missed per-head scale of 1.25 is a 25% error: caught.
  const auto ref = normal_values(1024, 3);
  std::vector<float> out;
  for (double r : ref) out.push_back(float(1.25 * r));
  EXPECT_FALSE(compare(out, ref, fp8_kv).passed);
  // Mixed storage takes the coarser bound.
  EXPECT_EQ(default_tolerance(DType::f32, DType::bf16).rel_l2, bf16.rel_l2);
  EXPECT_LT(default_tolerance(DType::f32, DType::f32).rel_l2, bf16.rel_l2);
}

}  // namespace
}  // namespace schedlab
