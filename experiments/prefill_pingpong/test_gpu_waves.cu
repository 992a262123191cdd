// The AMD realization's policies (the register-tile family's 8-wave ping-pong and its plain
// twin) against the double reference on any GPU: the buffers, waits and barriers are portable
// (on NVIDIA the hand-overs are bar.sync and cp.async waits, the priorities no-ops), so its
// data hazards are checked numerically wherever a GPU is, not only on AMD. Instantiated here,
// as no backend but hip builds amd_kernels.cu; built into schedlab_gpu_tests_prefill. Label: gpu.
#include <gtest/gtest.h>

#include "experiments/prefill_pingpong/amd_policy.hpp"
#include "kernels/prefill/flash_prefill.cuh"
#include "kernels/tests/prefill_gpu_checks.hpp"

namespace schedlab::kernels {
template void launch_flash_prefill<experiments::prefill_pingpong::ping_pong_8wave>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_pingpong::plain_8wave>(const PrefillArgs&, gpu::api::stream_t);

namespace prefill_test {
namespace x = experiments::prefill_pingpong;

using Timed = ::testing::Types<x::ping_pong_8wave, x::plain_8wave>;  // the macro takes one type name
INSTANTIATE_TYPED_TEST_SUITE_P(prefill_pingpong, PrefillGpu, Timed);

}  // namespace prefill_test
}  // namespace schedlab::kernels
