// The naive attention kernel against the double reference (label: gpu).
#include <gtest/gtest.h>

#include <vector>

#include "kernels/naive/naive_attention.hpp"
#include "kernels/tests/test_seed.hpp"

namespace schedlab::kernels {
namespace {

struct Shape {
  int batch, q_heads, kv_heads, q_len, kv_len, head_dim;
  bool causal;
  int window;
};

// Each shape from the test's seed on (++seed a shape), launched once and checked.
void expect_shapes_match_reference(const std::vector<Shape>& shapes) {
  std::uint64_t seed = test_seed();
  for (const Shape& s : shapes) {
    PrefillProblem p;
    p.batch = s.batch;
    p.q_heads = s.q_heads;
    p.kv_heads = s.kv_heads;
    p.q_len = s.q_len;
    p.kv_len = s.kv_len;
    p.head_dim = s.head_dim;
    p.causal = s.causal;
    p.window = s.window;
    PrefillCase c(p, launch_naive_attention);
    c.prepare(++seed, 1);
    c.poison_output();
    c.launch(0);
    c.synchronize();
    const AccuracyReport acc = harness::check_output(c, 0);
    EXPECT_TRUE(acc.passed) << acc.message;
  }
}

TEST(NaiveAttentionGpu, MatchesReference) {
  expect_shapes_match_reference({{2, 4, 4, 100, 100, 64, false, 0},
                                 {1, 8, 2, 77, 300, 128, true, 0},
                                 {2, 4, 1, 300, 300, 128, true, 64},
                                 {1, 2, 2, 513, 513, 64, false, 0}});
}

// Two small shapes for compute-sanitizer (memcheck, racecheck, synccheck): ragged, and causal
// GQA with q_len < kv_len and a window.
TEST(NaiveAttentionGpu, SmallShapesForSanitizer) {
  expect_shapes_match_reference({{1, 2, 2, 33, 33, 64, false, 0}, {1, 4, 2, 17, 70, 128, true, 16}});
}

}  // namespace
}  // namespace schedlab::kernels
