// Kernel instantiations of decode_stage_priority: every variant of its list (read by the static resource report).
#include "experiments/decode_stage_priority/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

template struct schedlab::kernels::DecodeInstances<schedlab::experiments::decode_stage_priority::Variants>;
