// Kernel instantiations of the Hopper prefill tuning candidates (tuning_policy.hpp).
#include "kernels/hopper_prefill/hopper_prefill.cuh"
#include "kernels/hopper_prefill/tuning_policy.hpp"

namespace schedlab::kernels {
namespace tuning = experiments::hopper_prefill_tuning;
template void launch_hopper_prefill<tuning::defaults>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::defaults>(const PrefillProblem&);
}  // namespace schedlab::kernels
