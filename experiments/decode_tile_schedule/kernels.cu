// Kernel instantiations of decode_tile_schedule: every variant of its list (read by the static resource report).
#include "experiments/decode_tile_schedule/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

template struct schedlab::kernels::DecodeInstances<schedlab::experiments::decode_tile_schedule::Variants>;
