// Benchmarks of prefill_lds_buffers: every variant, and the baseline's A/A control, on the
// prefill shapes of the run's tier or --schedlab_axes (kernels/prefill/prefill_shapes.hpp).
#include "common/harness/gpu_platform.hpp"
#include "experiments/prefill_lds_buffers/policy.hpp"
#include "kernels/prefill/prefill_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  const kernels::PrefillExperiment<experiments::prefill_lds_buffers::single, experiments::prefill_lds_buffers::double_buffer, experiments::prefill_lds_buffers::double_padded> experiment{
      "prefill_lds_buffers", "single", {"single", "double_buffer", "double_padded"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
