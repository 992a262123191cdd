// Benchmarks of decode_kv_streaming: every variant on issue #3's decode shapes.
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
