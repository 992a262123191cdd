// Kernel instantiations of the Hopper prefill tuning candidates.
#include "kernels/hopper_prefill/hopper_prefill.cuh"
#include "kernels/hopper_prefill/tuning_policy.hpp"

namespace schedlab::kernels {
namespace tuning = experiments::hopper_prefill_tuning;
template void launch_hopper_prefill<tuning::defaults>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::defaults>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::no_threshold>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::no_threshold>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::n128>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::n128>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::d64_m128>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::d64_m128>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::one_chain>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::one_chain>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::within_head>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::within_head>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::lpt_across_heads>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::lpt_across_heads>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::causal_n176>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::causal_n176>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::causal_n192>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::causal_n192>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::dynamic_two_ahead>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::dynamic_two_ahead>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::dynamic_one_ahead>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::dynamic_one_ahead>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::fp8_words>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_words>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::fp8_n224>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_n224>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::fp8_chains4>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_chains4>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::fp8_split_qk>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_split_qk>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::fp8_vt3>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_vt3>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::fp8_m192>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_m192>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::fp8_fma4>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_fma4>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::fp8_fma3>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_fma3>(const PrefillProblem&);
template void launch_hopper_prefill<tuning::fp8_fma2>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<tuning::fp8_fma2>(const PrefillProblem&);
}  // namespace schedlab::kernels
