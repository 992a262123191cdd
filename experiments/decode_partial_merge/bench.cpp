// Benchmarks of decode_partial_merge: every variant, and the baseline's A/A control, on the
// ragged batches and twins of decode_work_partition (kernels/decode/decode_shapes.hpp), or on
// --schedlab_axes.
#include "experiments/decode_partial_merge/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

int main(int argc, char** argv) {
  namespace x = schedlab::experiments::decode_partial_merge;
  using schedlab::kernels::decode_ragged_tiers;
  return schedlab::kernels::decode_bench_main<x::Variants, decode_ragged_tiers>(argc, argv, "decode_partial_merge", "token_balanced");
}
