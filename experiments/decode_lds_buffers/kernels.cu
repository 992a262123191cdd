// Kernel instantiations of decode_lds_buffers: every variant of its list (read by the static resource report).
#include "experiments/decode_lds_buffers/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

template struct schedlab::kernels::DecodeInstances<schedlab::experiments::decode_lds_buffers::Variants>;
