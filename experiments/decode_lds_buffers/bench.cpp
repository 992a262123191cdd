// Benchmarks of decode_lds_buffers: every variant, and the baseline's A/A control, on the
// decode shapes of the run's tier or --schedlab_axes (kernels/decode/decode_shapes.hpp).
#include "experiments/decode_lds_buffers/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

int main(int argc, char** argv) {
  namespace x = schedlab::experiments::decode_lds_buffers;
  return schedlab::kernels::decode_bench_main<x::Variants>(argc, argv, "decode_lds_buffers", "single");
}
