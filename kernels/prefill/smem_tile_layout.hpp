// The shared-tile index arithmetic moved to kernels/attention/smem_layout.hpp (the families
// share it); these names stay for the CPU test that checks it (common/tests/test_mfma_layout.cpp).
#pragma once
#include "kernels/attention/smem_layout.hpp"

namespace schedlab::kernels::prefill_layout {

using attention::lane_copy_source_chunk;
using attention::swizzled_chunk;

}  // namespace schedlab::kernels::prefill_layout
