// Kernel instantiations of prefill_pingpong on AMD: one per policy (read by the static resource report).
#include "experiments/prefill_pingpong/amd_policy.hpp"
#include "kernels/prefill/flash_prefill.cuh"

namespace schedlab::kernels {
template void launch_flash_prefill<experiments::prefill_pingpong::ping_pong_8wave>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_pingpong::plain_8wave>(const PrefillArgs&, gpu::api::stream_t);
}  // namespace schedlab::kernels
