// Benchmarks of decode_lds_buffers: every variant on issue #3's decode shapes.
#include "common/harness/gpu_platform.hpp"
#include "experiments/decode_lds_buffers/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  const kernels::DecodeExperiment<experiments::decode_lds_buffers::single, experiments::decode_lds_buffers::double_buffer> experiment{
      "decode_lds_buffers", "single", {"single", "double_buffer"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
