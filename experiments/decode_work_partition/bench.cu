// Benchmarks of decode_work_partition: every variant, and the baseline's A/A control, on this
// experiment's ragged batches (each beside a uniform batch of the same total keys) and the
// uniform headline shape, or on --schedlab_axes (kernels/decode/decode_shapes.hpp).
#include "common/harness/gpu_platform.hpp"
#include "experiments/decode_work_partition/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  namespace x = experiments::decode_work_partition;
  const harness::Experiment<kernels::DecodeFamilyOf<kernels::decode_ragged_tiers>, x::split, x::token_balanced,
                            x::persistent, x::token_balanced_warp_rows, x::token_balanced_convert_ahead, x::token_balanced_plain_step,
                            x::token_balanced_q_regs, x::token_balanced_fp8_three_ctas,
                            x::token_balanced_fp8_in_warps, x::token_balanced_merge_by_unit,
                            x::token_balanced_row_tiles_combine, x::token_balanced_overlap_pv,
                            x::token_balanced_warp_combine, x::token_balanced_row_list,
                            x::token_balanced_short_merges, x::token_balanced_filled,
                            x::token_balanced_two_waves, x::token_balanced_four_waves,
                            x::token_balanced_l2_prefetch, x::token_balanced_l2_prefetch4,
                            x::token_balanced_staged_rows, x::token_balanced_converted_keys,
                            x::token_balanced_s_behind_pv, x::token_balanced_keys_freed,
                            x::token_balanced_half_exp2, x::token_balanced_exact_max>
      experiment{"decode_work_partition",
                 "split",
                 {"split", "token_balanced", "persistent", "token_balanced_warp_rows", "token_balanced_convert_ahead",
                  "token_balanced_plain_step", "token_balanced_q_regs",
                  "token_balanced_fp8_three_ctas", "token_balanced_fp8_in_warps", "token_balanced_merge_by_unit",
                  "token_balanced_row_tiles_combine", "token_balanced_overlap_pv",
                  "token_balanced_warp_combine", "token_balanced_row_list",
                  "token_balanced_short_merges", "token_balanced_filled", "token_balanced_two_waves",
                  "token_balanced_four_waves", "token_balanced_l2_prefetch", "token_balanced_l2_prefetch4",
                  "token_balanced_staged_rows", "token_balanced_converted_keys",
                  "token_balanced_s_behind_pv", "token_balanced_keys_freed",
                  "token_balanced_half_exp2", "token_balanced_exact_max"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
