// Tile-shape and flag candidates of the flash prefill kernel on the FlashAttention-3 setting.
#include "common/harness/gpu_platform.hpp"
#include "kernels/prefill/prefill_bench.hpp"
#include "kernels/prefill/tuning_policy.hpp"

using namespace schedlab;
namespace tuning = experiments::prefill_tuning;

int main(int argc, char** argv) {
  // The steps of the tuning table in kernels/prefill/LOG.md that are still worth re-timing.
  const kernels::PrefillExperiment<tuning::w8_n64, tuning::w4_n128_single_ftz, tuning::w4_r32_union_ftz, tuning::w4_r32_union_u2_ftz, tuning::w4_r32_union_u2_thr_ftz, tuning::w4_r32_union_u8_thr_ftz, tuning::w4_r32_n48_u2_thr_ftz, tuning::w4_r32_n48_u8_thr_ftz, tuning::w4_r32_union_u2_thr, tuning::w4_r32_n48_u8_thr>
      experiment{"prefill_tuning", "w8_n64", {"w8_n64", "w4_n128_single_ftz", "w4_r32_union_ftz", "w4_r32_union_u2_ftz", "w4_r32_union_u2_thr_ftz", "w4_r32_union_u8_thr_ftz", "w4_r32_n48_u2_thr_ftz", "w4_r32_n48_u8_thr_ftz", "w4_r32_union_u2_thr", "w4_r32_n48_u8_thr"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
