// Kernel instantiations of the Hopper prefill tuning candidates that change a tile shape.
#include "kernels/hopper_prefill/hopper_prefill.cuh"
#include "kernels/hopper_prefill/tuning_policy.hpp"

namespace schedlab::kernels {
namespace tuning = experiments::hopper_prefill_tuning;
template void launch_hopper_prefill<tuning::d64_m128>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::d64_m128>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::d64_n192>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::d64_n192>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::n128_p2>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::n128_p2>(const PrefillProblem&);
}  // namespace schedlab::kernels
