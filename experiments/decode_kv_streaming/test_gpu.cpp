// decode_kv_streaming's variants against the double reference on the H200: every configuration and
// its small shapes. The checks are the family's (kernels/tests/decode_gpu_checks.hpp: small shapes
// for compute-sanitizer, a launch twice on poisoned output); built into schedlab_gpu_tests_decode.
// Label: gpu.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiments/decode_kv_streaming/policy.hpp"
#include "kernels/tests/decode_gpu_checks.hpp"

namespace schedlab::kernels::decode_test {
namespace x = experiments::decode_kv_streaming;

using Timed = ::testing::Types<x::resident, x::streaming>;  // the macro takes one type name
INSTANTIATE_TYPED_TEST_SUITE_P(decode_kv_streaming, DecodeGpu, Timed);

}  // namespace schedlab::kernels::decode_test
