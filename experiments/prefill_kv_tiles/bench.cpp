// Benchmarks of prefill_kv_tiles: every variant, and the baseline's A/A control, on the
// prefill shapes of the run's tier plus fp8 at head dim 128, seq 8192, non-causal (seed 003's
// setting; prefill_tiers_with_fp8), or --schedlab_axes (kernels/prefill/prefill_shapes.hpp).
#include "common/harness/gpu_platform.hpp"
#include "experiments/prefill_kv_tiles/policy.hpp"
#include "kernels/prefill/prefill_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  const kernels::PrefillFp8Experiment<experiments::prefill_kv_tiles::kv_union, experiments::prefill_kv_tiles::kv_separate> experiment{
      "prefill_kv_tiles", "kv_union", {"kv_union", "kv_separate"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
