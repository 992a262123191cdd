// Benchmarks of prefill_warp_specialization: every variant on the prefill benchmark shapes.
#include "common/harness/gpu_platform.hpp"
#include "experiments/prefill_warp_specialization/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  const kernels::HopperPrefillExperiment<experiments::prefill_warp_specialization::ws_realloc, experiments::prefill_warp_specialization::ws_even_regs, experiments::prefill_warp_specialization::no_ws> experiment{
      "prefill_warp_specialization", "no_ws", {"ws_realloc", "ws_even_regs", "no_ws"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
