#include "common/data.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace schedlab {
namespace {

constexpr std::uint64_t kSamples = 100000;

TEST(NormalAt, HasZeroMeanAndUnitVariance) {
  double sum = 0, sum_sq = 0, sum_4 = 0;
  for (std::uint64_t i = 0; i < kSamples; ++i) {
    const double x = normal_at(1234, i);
    ASSERT_TRUE(std::isfinite(x));
    sum += x, sum_sq += x * x, sum_4 += x * x * x * x;
  }
  const double mean = sum / kSamples, var = sum_sq / kSamples - mean * mean;
  // Standard errors over 1e5 samples: mean 1/sqrt(n) = 0.0032, variance sqrt(2/n) = 0.0045;
  // bounds of about 5 standard errors.
  EXPECT_NEAR(mean, 0.0, 0.016);
  EXPECT_NEAR(var, 1.0, 0.025);
  EXPECT_NEAR(sum_4 / kSamples, 3.0, 0.15);  // normal kurtosis, not just any unit variance
}

TEST(NormalAt, TailsMatchTheNormal) {
  std::uint64_t beyond_2 = 0;
  for (std::uint64_t i = 0; i < kSamples; ++i) beyond_2 += std::abs(normal_at(99, i)) > 2.f;
  // P(|x| > 2) = 4.55%; binomial standard error 0.066%.
  EXPECT_NEAR(double(beyond_2) / kSamples, 0.0455, 0.004);
}

TEST(NormalAt, IsAPureFunctionOfSeedAndIndex) {
  EXPECT_EQ(normal_at(5, 17), normal_at(5, 17));
  EXPECT_EQ(normal_at(0, 0), normal_at(0, 0));
  int same_seed_diff = 0, same_index = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    same_seed_diff += normal_at(5, i) == normal_at(6, i);
    same_index += normal_at(5, i) == normal_at(5, i + 1);
  }
  EXPECT_EQ(same_seed_diff, 0) << "different seeds give different streams";
  EXPECT_EQ(same_index, 0);
}

TEST(NormalAt, NeighbouringSeedsAreUncorrelated) {
  double cross = 0;
  for (std::uint64_t i = 0; i < kSamples; ++i) cross += double(normal_at(7, i)) * normal_at(8, i);
  EXPECT_NEAR(cross / kSamples, 0.0, 0.016);
}

TEST(FillNormalHost, StoresEachDtypeRoundedFromTheSameSamples) {
  constexpr std::size_t kN = 1000;
  constexpr float kStddev = 0.5f;
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::fp8_e4m3}) {
    std::vector<unsigned char> buf(kN * dtype_bytes(t));
    fill_normal_host(t, buf.data(), kN, 42, kStddev);
    for (std::size_t i = 0; i < kN; ++i) {
      const float expected = kStddev * normal_at(42, i);
      std::vector<unsigned char> one(dtype_bytes(t));
      store_from_float(t, one.data(), 0, expected);
      ASSERT_EQ(load_as_float(t, buf.data(), i), load_as_float(t, one.data(), 0)) << dtype_name(t) << " " << i;
    }
  }
}

}  // namespace
}  // namespace schedlab
