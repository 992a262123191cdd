// Benchmarks of decode_stage_priority: every variant, and the baseline's A/A control, on the
// decode shapes of the run's tier or --schedlab_axes (kernels/decode/decode_shapes.hpp).
#include "common/harness/gpu_platform.hpp"
#include "experiments/decode_stage_priority/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  const kernels::DecodeExperiment<experiments::decode_stage_priority::plain, experiments::decode_stage_priority::stage_priority> experiment{
      "decode_stage_priority", "plain", {"plain", "stage_priority"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
