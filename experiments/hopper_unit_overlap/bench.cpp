// Benchmarks of hopper_unit_overlap: every variant (policy.hpp) with an fp8 e4m3 GEMM and with a
// bf16 one, against the GEMM alone (the baseline, with its A/A control).
#include "common/harness/gpu_platform.hpp"
#include "experiments/hopper_unit_overlap/policy.hpp"
#include "experiments/hopper_unit_overlap/unit_overlap.hpp"

using namespace schedlab;
namespace x = experiments::hopper_unit_overlap;

int main(int argc, char** argv) {
  const harness::ExperimentOf<x::UnitOverlapFamily, x::Variants> experiment{"hopper_unit_overlap", "gemm"};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
