// Kernel instantiations of decode_work_partition: every variant of its list (read by the static resource report).
#include "experiments/decode_work_partition/policy.hpp"
#include "kernels/decode/paged_decode.cuh"

template struct schedlab::kernels::DecodeInstances<schedlab::experiments::decode_work_partition::Variants>;
