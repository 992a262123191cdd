// Kernel instantiations of prefill_persistent: one per policy (read by the static resource report).
#include "experiments/prefill_persistent/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill.cuh"

namespace schedlab::kernels {
template void launch_hopper_prefill<experiments::prefill_persistent::one_per_tile>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<experiments::prefill_persistent::one_per_tile>(const PrefillProblem&);
template void launch_hopper_prefill<experiments::prefill_persistent::persistent>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<experiments::prefill_persistent::persistent>(const PrefillProblem&);
template void launch_hopper_prefill<experiments::prefill_persistent::persistent_3stages>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<experiments::prefill_persistent::persistent_3stages>(const PrefillProblem&);
template void launch_hopper_prefill<experiments::prefill_persistent::persistent_dynamic>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<experiments::prefill_persistent::persistent_dynamic>(const PrefillProblem&);
}  // namespace schedlab::kernels
