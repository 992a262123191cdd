// Kernel instantiations of the Hopper prefill tuning candidates (tuning_policy.hpp); the bench's
// `defaults` is the family default, whose kernels are the family library's (hopper_prefill.cu).
#include "kernels/hopper_prefill/hopper_prefill.cuh"
#include "kernels/hopper_prefill/tuning_policy.hpp"

namespace schedlab::kernels {
namespace tuning = experiments::hopper_prefill_tuning;
template void launch_hopper_prefill<tuning::long_causal_4096>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::long_causal_4096>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::short_causal_1024>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::short_causal_1024>(const PrefillProblem&);
}  // namespace schedlab::kernels
