// Kernel instantiations of the tuning candidates built with the project's flags.
#include "kernels/prefill/flash_prefill.cuh"
#include "kernels/prefill/tuning_policy.hpp"

namespace schedlab::kernels {
template void launch_flash_prefill<experiments::prefill_tuning::w8_n64>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_tuning::w4_r32_union_u2_thr>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_tuning::w4_r32_n48_u8_thr>(const PrefillArgs&, gpu::api::stream_t);
}  // namespace schedlab::kernels
