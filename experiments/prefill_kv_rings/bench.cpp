// Benchmarks of prefill_kv_rings: every variant on the prefill benchmark shapes, and in fp8 e4m3
// at head dim 128, seq 8192, causal and not (seed 003's setting, beside the same shapes in bf16).
#include "common/harness/gpu_platform.hpp"
#include "experiments/prefill_kv_rings/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  namespace x = experiments::prefill_kv_rings;
  const kernels::HopperPrefillFp8Experiment<x::separate, x::union_slot, x::union_4slots> experiment{
      "prefill_kv_rings", "separate", {"separate", "union_slot", "union_4slots"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
