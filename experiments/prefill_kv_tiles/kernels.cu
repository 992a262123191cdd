// Kernel instantiations of prefill_kv_tiles: one per policy (read by the static resource report).
#include "experiments/prefill_kv_tiles/policy.hpp"
#include "kernels/prefill/flash_prefill.cuh"

namespace schedlab::kernels {
template void launch_flash_prefill<experiments::prefill_kv_tiles::kv_union>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_kv_tiles::kv_separate>(const PrefillArgs&, gpu::api::stream_t);
}  // namespace schedlab::kernels
