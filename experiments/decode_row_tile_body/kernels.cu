// Kernel instantiations of decode_row_tile_body: every variant of its list (read by the static resource report).
#include "experiments/decode_row_tile_body/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

template struct schedlab::kernels::DecodeInstances<schedlab::experiments::decode_row_tile_body::Variants>;
