// Kernel instantiations of decode_page_prefetch: every variant of its list (read by the static resource report).
#include "experiments/decode_page_prefetch/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

template struct schedlab::kernels::DecodeInstances<schedlab::experiments::decode_page_prefetch::Variants>;
