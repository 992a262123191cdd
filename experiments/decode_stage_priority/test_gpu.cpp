// decode_stage_priority's variants against the double reference on the H200: every configuration
// and its small shapes. The checks are the family's (kernels/tests/decode_gpu_checks.hpp: small
// shapes for compute-sanitizer, a launch twice on poisoned output); built into
// schedlab_gpu_tests_decode. Label: gpu.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiments/decode_stage_priority/policy.hpp"
#include "kernels/tests/decode_gpu_checks.hpp"

namespace schedlab::kernels::decode_test {
namespace x = experiments::decode_stage_priority;

using Timed = ::testing::Types<x::plain, x::stage_priority>;  // the macro takes one type name
INSTANTIATE_TYPED_TEST_SUITE_P(decode_stage_priority, DecodeGpu, Timed);

}  // namespace schedlab::kernels::decode_test
