// Tile-shape, softmax and fp8 candidates of the Hopper prefill family on the prefill benchmark
// shapes and the fp8 ones (head dim 128, seq 8192).
#include "common/harness/gpu_platform.hpp"
#include "kernels/hopper_prefill/hopper_prefill_bench.hpp"
#include "kernels/hopper_prefill/tuning_policy.hpp"

using namespace schedlab;
namespace tuning = experiments::hopper_prefill_tuning;

int main(int argc, char** argv) {
  const kernels::HopperPrefillFp8Experiment<tuning::defaults, tuning::no_threshold, tuning::n128, tuning::d64_m128,
                                            tuning::one_chain, tuning::lpt_across_heads, tuning::within_head,
                                            tuning::causal_n176, tuning::causal_n192, tuning::dynamic_two_ahead,
                                            tuning::dynamic_one_ahead, tuning::fp8_words, tuning::fp8_n224,
                                            tuning::fp8_chains4, tuning::fp8_vt3, tuning::fp8_m192,
                                            tuning::fp8_fma4, tuning::fp8_fma3, tuning::fp8_fma2, tuning::fp8_split_qk>
      experiment{"hopper_prefill_tuning", "defaults",
                 {"defaults", "no_threshold", "n128", "d64_m128", "one_chain", "lpt_across_heads", "within_head",
                  "causal_n176", "causal_n192", "dynamic_two_ahead", "dynamic_one_ahead", "fp8_words", "fp8_n224",
                  "fp8_chains4", "fp8_vt3", "fp8_m192", "fp8_fma4",
                  "fp8_fma3", "fp8_fma2", "fp8_split_qk"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
