// Kernel instantiations of decode_work_partition: one per policy (read by the static resource report).
#include "experiments/decode_work_partition/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

namespace schedlab::kernels {
template void launch_paged_decode<experiments::decode_work_partition::split>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::split>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::persistent>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::persistent>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_warp_rows>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_warp_rows>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_convert_ahead>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_convert_ahead>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_plain_step>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_plain_step>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_q_regs>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_q_regs>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_fp8_three_ctas>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_fp8_three_ctas>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_fp8_in_warps>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_fp8_in_warps>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_merge_by_unit>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_merge_by_unit>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_row_tiles_combine>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_row_tiles_combine>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_overlap_pv>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_overlap_pv>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_warp_combine>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_warp_combine>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_row_list>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_row_list>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_short_merges>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_short_merges>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_filled>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_filled>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_two_waves>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_two_waves>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_four_waves>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_four_waves>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_l2_prefetch>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_l2_prefetch>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_l2_prefetch4>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_l2_prefetch4>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_staged_rows>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_staged_rows>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_converted_keys>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_converted_keys>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_s_behind_pv>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_s_behind_pv>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_keys_freed>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_keys_freed>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_half_exp2>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_half_exp2>(const DecodeProblem&, int);
template void launch_paged_decode<experiments::decode_work_partition::token_balanced_exact_max>(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
template DecodePlan plan_paged_decode<experiments::decode_work_partition::token_balanced_exact_max>(const DecodeProblem&, int);
}  // namespace schedlab::kernels
