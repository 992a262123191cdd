// Kernel instantiations of the tuning candidates built with -ftz=true (see CMakeLists.txt).
#include "kernels/prefill/flash_prefill.cuh"
#include "kernels/prefill/tuning_policy.hpp"

namespace schedlab::kernels {
template void launch_flash_prefill<experiments::prefill_tuning::w4_n128_single_ftz>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_tuning::w4_r32_union_ftz>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_tuning::w4_r32_union_u2_ftz>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_tuning::w4_r32_union_u2_thr_ftz>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_tuning::w4_r32_union_u8_thr_ftz>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_tuning::w4_r32_n48_u2_thr_ftz>(const PrefillArgs&, gpu::api::stream_t);
template void launch_flash_prefill<experiments::prefill_tuning::w4_r32_n48_u8_thr_ftz>(const PrefillArgs&, gpu::api::stream_t);
}  // namespace schedlab::kernels
