// Kernel instantiations of decode_tile_schedule: one per policy (read by the static resource report).
#include "experiments/decode_tile_schedule/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

namespace schedlab::kernels {
template void launch_paged_decode<experiments::decode_tile_schedule::split>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_tile_schedule::split>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_tile_schedule::shared_tail>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_tile_schedule::shared_tail>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_tile_schedule::persistent>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_tile_schedule::persistent>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_tile_schedule::wide>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_tile_schedule::wide>(const DecodeProblem&, int);
}  // namespace schedlab::kernels
