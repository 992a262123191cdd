// Benchmarks of decode_work_partition: every variant, and the baseline's A/A control, on this
// experiment's ragged batches (each beside a uniform batch of the same total keys) and the
// uniform headline shape, or on --schedlab_axes (kernels/decode/decode_shapes.hpp).
#include "experiments/decode_work_partition/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

int main(int argc, char** argv) {
  namespace x = schedlab::experiments::decode_work_partition;
  using schedlab::kernels::decode_ragged_tiers;
  return schedlab::kernels::decode_bench_main<x::Variants, decode_ragged_tiers>(argc, argv, "decode_work_partition", "split");
}
