// Kernel instantiations of prefill_sched_barrier: one per policy (read by the static resource report).
#include "experiments/prefill_sched_barrier/policy.hpp"
#include "kernels/prefill/flash_prefill.cuh"

namespace schedlab::kernels {
template void launch_flash_prefill<experiments::prefill_sched_barrier::compiler>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_sched_barrier::pinned>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_sched_barrier::interleaved>(const PrefillArgs&, gpu::api::stream_t);
}  // namespace schedlab::kernels
