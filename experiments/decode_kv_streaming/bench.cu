// Benchmarks of decode_kv_streaming: every variant, and the baseline's A/A control, on the
// decode shapes of the run's tier or --schedlab_axes (kernels/decode/decode_shapes.hpp).
#include "common/harness/gpu_platform.hpp"
#include "experiments/decode_kv_streaming/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  const kernels::DecodeExperiment<experiments::decode_kv_streaming::resident, experiments::decode_kv_streaming::streaming> experiment{
      "decode_kv_streaming", "resident", {"resident", "streaming"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
