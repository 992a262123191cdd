// prefill_sched_barrier's variants against the double reference on the H200: every shared prefill
// problem and its small shapes for compute-sanitizer. The checks are the family's
// (kernels/tests/prefill_gpu_checks.hpp); built into schedlab_gpu_tests_prefill. Label: gpu.
#include <gtest/gtest.h>

#include "experiments/prefill_sched_barrier/policy.hpp"
#include "kernels/tests/prefill_gpu_checks.hpp"

namespace schedlab::kernels::prefill_test {
namespace x = experiments::prefill_sched_barrier;

using Timed = ::testing::Types<x::compiler, x::pinned, x::interleaved>;  // the macro takes one type name
INSTANTIATE_TYPED_TEST_SUITE_P(prefill_sched_barrier, PrefillGpu, Timed);

}  // namespace schedlab::kernels::prefill_test
