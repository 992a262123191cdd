// Tile-shape, schedule, softmax and fp8 candidates of the Hopper prefill family on the shapes its default
// is compared with its peers on: the prefill benchmark shapes, the fp8 ones (head dim 128, seq 8192)
// and the serving batch in bf16 and fp8.
#include "common/harness/gpu_platform.hpp"
#include "kernels/hopper_prefill/hopper_prefill_bench.hpp"
#include "kernels/hopper_prefill/tuning_policy.hpp"

using namespace schedlab;
namespace tuning = experiments::hopper_prefill_tuning;

int main(int argc, char** argv) {
  const kernels::HopperPrefillFrontierExperiment<tuning::defaults, tuning::whole_tail, tuning::whole_last> experiment{
      "hopper_prefill_tuning", "defaults", {"defaults", "whole_tail", "whole_last"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
