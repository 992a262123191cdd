// Benchmarks of prefill_pingpong: every variant on the prefill benchmark shapes, in fp8 e4m3
// at head dim 128, seq 8192, causal and not (beside the same shapes in bf16), and on a serving
// engine's ragged prefill batch in bf16 and fp8 (kernels/hopper_prefill/hopper_prefill_bench.hpp).
#include "common/harness/gpu_platform.hpp"
#include "experiments/prefill_pingpong/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  const kernels::HopperPrefillFrontierExperiment<experiments::prefill_pingpong::pingpong, experiments::prefill_pingpong::free_running> experiment{
      "prefill_pingpong", "free_running", {"pingpong", "free_running"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
