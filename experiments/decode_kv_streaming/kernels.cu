// Kernel instantiations of decode_kv_streaming: every variant of its list (read by the static resource report).
#include "experiments/decode_kv_streaming/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

template struct schedlab::kernels::DecodeInstances<schedlab::experiments::decode_kv_streaming::Variants>;
