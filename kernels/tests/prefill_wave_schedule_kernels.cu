// The flash prefill kernel with the AMD prefill_pingpong policies, for the GPU tests on any
// backend: the 8-wave ping-pong's buffers, waits and barriers are portable (on NVIDIA the
// hand-overs are bar.sync and cp.async waits, the priorities no-ops), so its data hazards
// are checked numerically wherever a GPU is, not only on AMD.
#include "experiments/prefill_pingpong/amd_policy.hpp"
#include "kernels/prefill/flash_prefill.cuh"

namespace schedlab::kernels {
template void launch_flash_prefill<experiments::prefill_pingpong::ping_pong_8wave>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_pingpong::plain_8wave>(const PrefillArgs&, gpu::api::stream_t);
}  // namespace schedlab::kernels
