// Benchmarks of prefill_intra_overlap: every variant on the prefill benchmark shapes, and in fp8
// e4m3 at head dim 128, seq 8192 (where the exp2s take as long as the matrix ops).
#include "common/harness/gpu_platform.hpp"
#include "experiments/prefill_intra_overlap/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  const kernels::HopperPrefillFp8Experiment<experiments::prefill_intra_overlap::overlapped, experiments::prefill_intra_overlap::serial,
                                          experiments::prefill_intra_overlap::serial_free_running> experiment{
      "prefill_intra_overlap", "serial", {"overlapped", "serial", "serial_free_running"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
