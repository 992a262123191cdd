// Benchmarks of prefill_persistent: every variant on the prefill benchmark shapes.
#include "common/harness/gpu_platform.hpp"
#include "experiments/prefill_persistent/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  const kernels::HopperPrefillExperiment<experiments::prefill_persistent::one_per_tile, experiments::prefill_persistent::persistent, experiments::prefill_persistent::persistent_3stages,
                                          experiments::prefill_persistent::persistent_dynamic> experiment{
      "prefill_persistent", "one_per_tile", {"one_per_tile", "persistent", "persistent_3stages", "persistent_dynamic"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
