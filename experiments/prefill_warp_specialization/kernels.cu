// Kernel instantiations of prefill_warp_specialization: one per policy (read by the static resource report).
#include "experiments/prefill_warp_specialization/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill.cuh"

namespace schedlab::kernels {
template void launch_hopper_prefill<experiments::prefill_warp_specialization::ws_realloc>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<experiments::prefill_warp_specialization::ws_realloc>(const PrefillProblem&);
template void launch_hopper_prefill<experiments::prefill_warp_specialization::ws_even_regs>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<experiments::prefill_warp_specialization::ws_even_regs>(const PrefillProblem&);
template void launch_hopper_prefill<experiments::prefill_warp_specialization::no_ws>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<experiments::prefill_warp_specialization::no_ws>(const PrefillProblem&);
}  // namespace schedlab::kernels
