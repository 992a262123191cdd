// The seed plumbing of the GPU tests and the seed sweep: SCHEDLAB_SEED's forms and errors, and
// that one seed gives the same inputs (problem tables, scales, buffers) every time.
#include "common/replay_seed.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <vector>

#include "common/data.hpp"
#include "common/problem.hpp"

namespace schedlab {
namespace {

TEST(ReplaySeed, ParsesWhatItPrints) {
  for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{0xdeadbeef}, ~std::uint64_t{0}}) {
    EXPECT_EQ(format_seed(seed).size(), 18u);
    EXPECT_EQ(parse_seed(format_seed(seed)), seed);
  }
  EXPECT_EQ(format_seed(0xabc), "0x0000000000000abc");
}

TEST(ReplaySeed, ReadsHexAndDecimal) {
  EXPECT_EQ(parse_seed("0x1F"), 31u);
  EXPECT_EQ(parse_seed("0X1f"), 31u);
  EXPECT_EQ(parse_seed("31"), 31u);
  EXPECT_EQ(parse_seed("18446744073709551615"), ~std::uint64_t{0});
  EXPECT_EQ(parse_seed("0xffffffffffffffff"), ~std::uint64_t{0});
}

TEST(ReplaySeed, RejectsAnythingElseNamingTheVariable) {
  for (const char* bad : {"", "0x", "x12", "12a", " 12", "12 ", "-1", "+1", "0x-1", "0xg", "1e3", "seed",
                          "18446744073709551616", "0x10000000000000000"}) {
    try {
      parse_seed(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("SCHEDLAB_SEED='" + std::string(bad) + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("is not a seed"), std::string::npos) << what;
    }
  }
}

TEST(ReplaySeed, TheEnvironmentValueDecidesAndABadOneIsAnError) {
  EXPECT_EQ(seed_from("0x2a"), 42u);
  EXPECT_THROW(seed_from("forty-two"), std::invalid_argument);
  // Unset or empty: fresh seeds, which differ (two equal 64-bit draws: about 2^-64).
  EXPECT_NE(seed_from(nullptr), seed_from(nullptr));
  EXPECT_NE(seed_from(""), seed_from(""));
}

TEST(ReplaySeed, SweepSeedsAreDistinctAndReplayable) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t i = 0; i < 1000; ++i) seen.insert(sweep_seed(7, i));
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(sweep_seed(7, 3), sweep_seed(7, 3));
  EXPECT_NE(sweep_seed(7, 3), sweep_seed(8, 3));
  // Not consecutive: a case reads seed, seed + 1, seed + 2 for Q, K and V.
  for (std::uint64_t i = 0; i < 1000; ++i) {
    const std::uint64_t step = sweep_seed(7, i + 1) - sweep_seed(7, i);  // modulo 2^64
    EXPECT_TRUE(step > 2 && step < ~std::uint64_t{0} - 1) << i;
  }
}

// The same seed, the same inputs: what a replay relies on. The decode problem's block table and
// fp8 scales, and a buffer as fill_normal_host (the device fill's twin) writes it.
TEST(ReplaySeed, TheSameSeedGivesTheSameInputs) {
  const std::uint64_t seed = parse_seed("0x5eed");
  const std::vector<int> lens = {1, 200, 200, 20000};
  auto problem = [&](std::uint64_t s) {
    return make_decode_problem(4, 32, 1, 128, 16, lens, DType::fp8_e4m3, s, /*spare_pages=*/3);
  };
  const DecodeProblem a = problem(seed), b = problem(seed), other = problem(seed + 1);
  EXPECT_EQ(a.block_table, b.block_table);
  EXPECT_EQ(a.k_scale, b.k_scale);
  EXPECT_EQ(a.v_scale, b.v_scale);
  EXPECT_NE(a.block_table, other.block_table);
  EXPECT_NE(a.k_scale, other.k_scale);
  constexpr std::size_t kN = 4096;
  std::vector<unsigned char> x(kN), y(kN), z(kN);
  fill_normal_host(DType::fp8_e4m3, x.data(), kN, seed, 1.f);
  fill_normal_host(DType::fp8_e4m3, y.data(), kN, seed, 1.f);
  fill_normal_host(DType::fp8_e4m3, z.data(), kN, seed + 1, 1.f);
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
}

}  // namespace
}  // namespace schedlab
