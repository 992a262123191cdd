// Kernel instantiations of decode_lds_buffers: one per policy (read by the static resource report).
#include "experiments/decode_lds_buffers/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

namespace schedlab::kernels {
template void launch_paged_decode<experiments::decode_lds_buffers::single>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_lds_buffers::single>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_lds_buffers::double_buffer>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_lds_buffers::double_buffer>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_lds_buffers::triple_buffer>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_lds_buffers::triple_buffer>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_lds_buffers::double_3ctas>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_lds_buffers::double_3ctas>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_lds_buffers::double_bulk>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_lds_buffers::double_bulk>(const DecodeProblem&, int);
}  // namespace schedlab::kernels
