// decode_page_prefetch's variants against the double reference on the H200: every configuration and
// its small shapes (prefetch is SplitWarps itself). The checks are the family's
// (kernels/tests/decode_gpu_checks.hpp: small shapes for compute-sanitizer, a launch twice on
// poisoned output); built into schedlab_gpu_tests_decode. Label: gpu.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "experiments/decode_page_prefetch/policy.hpp"
#include "kernels/tests/decode_gpu_checks.hpp"

namespace schedlab::kernels::decode_test {
namespace x = experiments::decode_page_prefetch;

using Timed = ::testing::Types<x::load_on_use>;  // the macro takes one type name
INSTANTIATE_TYPED_TEST_SUITE_P(decode_page_prefetch, DecodeGpu, Timed);

}  // namespace schedlab::kernels::decode_test
