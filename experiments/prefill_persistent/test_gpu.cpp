// prefill_persistent's variants against the double reference on the H200: every shared prefill
// problem, fp8 where the variant runs it, and small shapes for compute-sanitizer. The checks are
// the family's (kernels/tests/hopper_prefill_gpu_checks.hpp); built into
// schedlab_gpu_tests_hopper_prefill. Label: gpu.
#include <gtest/gtest.h>

#include "experiments/prefill_persistent/policy.hpp"
#include "kernels/tests/hopper_prefill_gpu_checks.hpp"

namespace schedlab::kernels::hopper_prefill_test {
namespace x = experiments::prefill_persistent;

// the macro takes one type name
using Timed = ::testing::Types<x::one_per_tile, x::persistent, x::persistent_3stages, x::persistent_dynamic>;
INSTANTIATE_TYPED_TEST_SUITE_P(prefill_persistent, HopperPrefillGpu, Timed);

}  // namespace schedlab::kernels::hopper_prefill_test
