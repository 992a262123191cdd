// Benchmarks of decode_page_prefetch: every variant, and the baseline's A/A control, on the
// decode shapes of the run's tier or --schedlab_axes (kernels/decode/decode_shapes.hpp).
#include "common/harness/gpu_platform.hpp"
#include "experiments/decode_page_prefetch/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  const kernels::DecodeExperiment<experiments::decode_page_prefetch::load_on_use, experiments::decode_page_prefetch::prefetch> experiment{
      "decode_page_prefetch", "load_on_use", {"load_on_use", "prefetch"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
