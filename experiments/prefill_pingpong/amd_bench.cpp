// Benchmarks of prefill_pingpong on AMD: the 8-wave ping-pong against the same eight waves in
// step, and the baseline's A/A control, on the prefill benchmark shapes.
#include "common/harness/gpu_platform.hpp"
#include "experiments/prefill_pingpong/amd_policy.hpp"
#include "kernels/prefill/prefill_bench.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  const kernels::PrefillExperiment<experiments::prefill_pingpong::ping_pong_8wave,
                                   experiments::prefill_pingpong::plain_8wave>
      experiment{"prefill_pingpong", "plain_8wave", {"ping_pong_8wave", "plain_8wave"}};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}
