// Benchmarks of prefill_pingpong: every variant on the prefill benchmark shapes.
#include "common/harness/gpu_platform.hpp"
#include "experiments/prefill_pingpong/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  const kernels::HopperPrefillExperiment<experiments::prefill_pingpong::pingpong, experiments::prefill_pingpong::free_running> experiment{
      "prefill_pingpong", "free_running", {"pingpong", "free_running"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
