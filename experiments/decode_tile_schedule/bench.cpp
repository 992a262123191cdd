// Benchmarks of decode_tile_schedule: every variant, and the baseline's A/A control, on the
// decode shapes of the run's tier or --schedlab_axes (kernels/decode/decode_shapes.hpp).
#include "experiments/decode_tile_schedule/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

int main(int argc, char** argv) {
  namespace x = schedlab::experiments::decode_tile_schedule;
  return schedlab::kernels::decode_bench_main<x::Variants>(argc, argv, "decode_tile_schedule", "split");
}
