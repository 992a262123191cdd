// Benchmarks of decode_page_prefetch: every variant, and the baseline's A/A control, on the
// decode shapes of the run's tier or --schedlab_axes (kernels/decode/decode_shapes.hpp).
#include "experiments/decode_page_prefetch/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

int main(int argc, char** argv) {
  namespace x = schedlab::experiments::decode_page_prefetch;
  return schedlab::kernels::decode_bench_main<x::Variants>(argc, argv, "decode_page_prefetch", "load_on_use");
}
