// The current GPU test's seed (common/replay_seed.hpp): SCHEDLAB_SEED when set, else fresh.
// Drawn on the test's first call, printed as one line and recorded as the test's `seed`
// property in the gtest XML, so a failure seen once replays with
//   SCHEDLAB_SEED=<seed> <binary> --gtest_filter=<test>
// Every input of the test derives from it (each case takes the next seed, ++seed). A bad
// SCHEDLAB_SEED throws std::invalid_argument, which fails the test with the reason.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "common/replay_seed.hpp"

namespace schedlab::kernels {

namespace detail {
struct TestSeedState {
  bool drawn = false, listening = false;
  std::uint64_t seed = 0;
};
inline TestSeedState& test_seed_state() {
  static TestSeedState state;
  return state;
}
// Forgets the seed when a test ends, so the next test, or the next --gtest_repeat of the
// same one, draws its own.
struct ForgetSeedAtTestEnd : ::testing::EmptyTestEventListener {
  void OnTestEnd(const ::testing::TestInfo&) override { test_seed_state().drawn = false; }
};
}  // namespace detail

inline std::uint64_t test_seed() {
  detail::TestSeedState& state = detail::test_seed_state();
  if (!state.listening) {
    ::testing::UnitTest::GetInstance()->listeners().Append(new detail::ForgetSeedAtTestEnd);  // gtest owns it
    state.listening = true;
  }
  if (!state.drawn) {
    state.seed = seed_from_environment();
    state.drawn = true;
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string test = info ? std::string(info->test_suite_name()) + "." + info->name() : "?";
    const std::string hex = format_seed(state.seed);
    std::printf("seed=%s (replay: %s=%s --gtest_filter=%s)\n", hex.c_str(), kSeedEnv, hex.c_str(), test.c_str());
    std::fflush(stdout);
    if (info) ::testing::Test::RecordProperty("seed", hex);
  }
  return state.seed;
}

}  // namespace schedlab::kernels
