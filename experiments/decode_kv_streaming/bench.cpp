// Benchmarks of decode_kv_streaming: every variant, and the baseline's A/A control, on the
// decode shapes of the run's tier or --schedlab_axes (kernels/decode/decode_shapes.hpp).
#include "experiments/decode_kv_streaming/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

int main(int argc, char** argv) {
  namespace x = schedlab::experiments::decode_kv_streaming;
  return schedlab::kernels::decode_bench_main<x::Variants>(argc, argv, "decode_kv_streaming", "resident");
}
