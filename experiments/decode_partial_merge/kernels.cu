// Kernel instantiations of decode_partial_merge: every variant of its list (read by the static resource report).
#include "experiments/decode_partial_merge/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

template struct schedlab::kernels::DecodeInstances<schedlab::experiments::decode_partial_merge::Variants>;
