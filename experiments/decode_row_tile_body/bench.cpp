// Benchmarks of decode_row_tile_body: both variants, and the baseline's A/A control, on GQA
// groups above 16, each beside a GQA 32/8 batch of the same KV bytes
// (kernels/decode/decode_shapes.hpp, decode_group_tiers), or on --schedlab_axes.
#include "experiments/decode_row_tile_body/policy.hpp"
#include "kernels/decode/decode_bench.hpp"

int main(int argc, char** argv) {
  namespace x = schedlab::experiments::decode_row_tile_body;
  using schedlab::kernels::decode_group_tiers;
  return schedlab::kernels::decode_bench_main<x::Variants, decode_group_tiers>(argc, argv, "decode_row_tile_body", "token_balanced");
}
