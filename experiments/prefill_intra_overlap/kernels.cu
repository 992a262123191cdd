// Kernel instantiations of prefill_intra_overlap: one per policy (read by the static resource report),
// but none for the family default, whose kernels are the family library's
// (kernels/hopper_prefill/hopper_prefill.cu).
#include "experiments/prefill_intra_overlap/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill.cuh"

namespace schedlab::kernels {
template void launch_hopper_prefill<experiments::prefill_intra_overlap::serial>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<experiments::prefill_intra_overlap::serial>(const PrefillProblem&);
template void launch_hopper_prefill<experiments::prefill_intra_overlap::serial_free_running>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<experiments::prefill_intra_overlap::serial_free_running>(const PrefillProblem&);
}  // namespace schedlab::kernels
