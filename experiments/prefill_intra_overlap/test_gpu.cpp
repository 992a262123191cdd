// prefill_intra_overlap's variants against the double reference on the H200: every shared prefill
// problem, fp8 where the variant runs it, and small shapes for compute-sanitizer. The checks are
// the family's (kernels/tests/hopper_prefill_gpu_checks.hpp); built into
// schedlab_gpu_tests_hopper_prefill. Label: gpu.
#include <gtest/gtest.h>

#include "experiments/prefill_intra_overlap/policy.hpp"
#include "kernels/tests/hopper_prefill_gpu_checks.hpp"

namespace schedlab::kernels::hopper_prefill_test {
namespace x = experiments::prefill_intra_overlap;

using Timed = ::testing::Types<x::overlapped, x::serial, x::serial_free_running>;  // the macro takes one type name
INSTANTIATE_TYPED_TEST_SUITE_P(prefill_intra_overlap, HopperPrefillGpu, Timed);

}  // namespace schedlab::kernels::hopper_prefill_test
