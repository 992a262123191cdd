// prefill_kv_rings's variants against the double reference on the H200: every shared prefill
// problem, fp8 included, and small shapes for compute-sanitizer (one slot's two tenants are the
// race a missing wait would make). The checks are the family's
// (kernels/tests/hopper_prefill_gpu_checks.hpp); built into schedlab_gpu_tests_hopper_prefill.
// Label: gpu.
#include <gtest/gtest.h>

#include "experiments/prefill_kv_rings/policy.hpp"
#include "kernels/tests/hopper_prefill_gpu_checks.hpp"

namespace schedlab::kernels::hopper_prefill_test {
namespace x = experiments::prefill_kv_rings;

using Timed = ::testing::Types<x::union_slot, x::union_4slots>;  // the macro takes one type name; separate is the family default
INSTANTIATE_TYPED_TEST_SUITE_P(prefill_kv_rings, HopperPrefillGpu, Timed);

}  // namespace schedlab::kernels::hopper_prefill_test
