// decode_tile_schedule's variants against the double reference on the H200: every configuration and
// its small shapes; the schedules' counters across relaunches. The checks are the family's
// (kernels/tests/decode_gpu_checks.hpp: small shapes for compute-sanitizer, a launch twice on
// poisoned output); built into schedlab_gpu_tests_decode. Label: gpu.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiments/decode_tile_schedule/policy.hpp"
#include "kernels/tests/decode_gpu_checks.hpp"

namespace schedlab::kernels::decode_test {
namespace x = experiments::decode_tile_schedule;

using Timed = ::testing::Types<x::shared_tail, x::persistent, x::wide>;  // the macro takes one type name
INSTANTIATE_TYPED_TEST_SUITE_P(decode_tile_schedule, DecodeGpu, Timed);

// The schedule counters are left zero by each launch (by the combine for a shared tail, by
// the last warp of a persistent grid): relaunched, with the output poisoned in between, the
// result is still right (a stale counter would skip tiles).
template <class Policy>
void relaunch_and_check(bool persistent) {
  const std::vector<int> lens = {1, 15, 17, 3000, 9000};
  const std::uint64_t seed = test_seed();
  DecodeProblem p = make_decode_problem(5, 32, 8, 128, 16, lens, DType::bf16, seed, 7);
  DecodeCase c(p, DecodeKernel::of<Policy>());
  ASSERT_TRUE(c.plan().needs_schedule());
  ASSERT_EQ(c.plan().dynamic(), persistent);
  c.prepare(seed, 1);
  for (int i = 0; i < 4; ++i) {
    c.poison_output();
    c.launch(0);
    c.synchronize();
    const AccuracyReport acc = harness::check_output(c, 0);
    EXPECT_TRUE(acc.passed) << "launch " << i << ": " << acc.message;
  }
}
TEST(DecodeGpuSchedule, SharedTailRelaunches) {
  relaunch_and_check<x::shared_tail>(false);
}
TEST(DecodeGpuSchedule, PersistentRelaunches) {
  relaunch_and_check<x::persistent>(true);
}

}  // namespace schedlab::kernels::decode_test
