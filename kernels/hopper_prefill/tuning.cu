// Kernel instantiations of the Hopper prefill tuning defaults and its schedule and softmax
// candidates (the tile-shape candidates are tuning_tiles.cu: two objects build in parallel).
#include "kernels/hopper_prefill/hopper_prefill.cuh"
#include "kernels/hopper_prefill/tuning_policy.hpp"

namespace schedlab::kernels {
namespace tuning = experiments::hopper_prefill_tuning;
template void launch_hopper_prefill<tuning::defaults>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::defaults>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::within_head>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::within_head>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::fp8_chains4>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_chains4>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::fp8_chains2>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_chains2>(const PrefillProblem&);
}  // namespace schedlab::kernels
