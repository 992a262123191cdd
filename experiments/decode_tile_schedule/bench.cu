// Benchmarks of decode_tile_schedule: every variant, and the baseline's A/A control, on the
// decode shapes of the run's tier or --schedlab_axes (kernels/decode/decode_shapes.hpp).
#include "common/harness/gpu_platform.hpp"
#include "experiments/decode_tile_schedule/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  namespace x = experiments::decode_tile_schedule;
  const kernels::DecodeExperiment<x::split, x::shared_tail, x::persistent, x::wide> experiment{
      "decode_tile_schedule", "split", {"split", "shared_tail", "persistent", "wide"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
