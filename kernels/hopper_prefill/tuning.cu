// Kernel instantiations of the Hopper prefill tuning candidates (tuning_policy.hpp); the bench's
// `defaults` is the family default, whose kernels are the family library's (hopper_prefill.cu).
#include "kernels/hopper_prefill/hopper_prefill.cuh"
#include "kernels/hopper_prefill/tuning_policy.hpp"

namespace schedlab::kernels {
namespace tuning = experiments::hopper_prefill_tuning;
template void launch_hopper_prefill<tuning::fp8_n256_serial>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_n256_serial>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::fp8_serial>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_serial>(const PrefillProblem&);
}  // namespace schedlab::kernels
