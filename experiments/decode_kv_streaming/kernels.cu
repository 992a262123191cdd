// Kernel instantiations of decode_kv_streaming: one per policy (read by the static resource report).
#include "experiments/decode_kv_streaming/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

namespace schedlab::kernels {
template void launch_paged_decode<experiments::decode_kv_streaming::resident>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_kv_streaming::resident>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_kv_streaming::streaming>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_kv_streaming::streaming>(const DecodeProblem&, int);
}  // namespace schedlab::kernels
