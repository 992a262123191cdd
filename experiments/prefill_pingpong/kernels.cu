// Kernel instantiations of prefill_pingpong: one per policy (read by the static resource report),
// but none for the family default, whose kernels are the family library's
// (kernels/hopper_prefill/hopper_prefill.cu).
#include "experiments/prefill_pingpong/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill.cuh"

namespace schedlab::kernels {
template void launch_hopper_prefill<experiments::prefill_pingpong::free_running>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<experiments::prefill_pingpong::free_running>(const PrefillProblem&);
}  // namespace schedlab::kernels
