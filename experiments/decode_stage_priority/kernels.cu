// Kernel instantiations of decode_stage_priority: one per policy (read by the static resource report).
#include "experiments/decode_stage_priority/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

namespace schedlab::kernels {
template void launch_paged_decode<experiments::decode_stage_priority::plain>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_stage_priority::plain>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_stage_priority::stage_priority>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_stage_priority::stage_priority>(const DecodeProblem&, int);
}  // namespace schedlab::kernels
