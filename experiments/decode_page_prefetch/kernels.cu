// Kernel instantiations of decode_page_prefetch: one per policy (read by the static resource report).
#include "experiments/decode_page_prefetch/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

namespace schedlab::kernels {
template void launch_paged_decode<experiments::decode_page_prefetch::load_on_use>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_page_prefetch::load_on_use>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_page_prefetch::prefetch>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_page_prefetch::prefetch>(const DecodeProblem&, int);
}  // namespace schedlab::kernels
