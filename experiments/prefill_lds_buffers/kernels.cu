// Kernel instantiations of prefill_lds_buffers: one per policy (read by the static resource report).
#include "experiments/prefill_lds_buffers/policy.hpp"
#include "kernels/prefill/flash_prefill.cuh"

namespace schedlab::kernels {
template void launch_flash_prefill<experiments::prefill_lds_buffers::single>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_lds_buffers::double_buffer>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_lds_buffers::double_padded>(const PrefillArgs&, gpu::api::stream_t);
}  // namespace schedlab::kernels
