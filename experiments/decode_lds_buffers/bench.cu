// Benchmarks of decode_lds_buffers: every variant, and the baseline's A/A control, on the
// decode shapes of the run's tier or --schedlab_axes (kernels/decode/decode_shapes.hpp).
#include "common/harness/gpu_platform.hpp"
#include "experiments/decode_lds_buffers/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  namespace x = experiments::decode_lds_buffers;
  const kernels::DecodeExperiment<x::single, x::double_buffer, x::triple_buffer, x::double_3ctas, x::double_bulk> experiment{
      "decode_lds_buffers", "single", {"single", "double_buffer", "triple_buffer", "double_3ctas", "double_bulk"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
