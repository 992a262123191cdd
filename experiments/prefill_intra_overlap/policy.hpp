// FlashAttention-3 section 3.2 and Table 2: inside one warpgroup, S(j) = Q K(j)^T and
// O += P(j-1) V(j-1) issued together so the softmax of S(j) overlaps the PV GEMM (there:
// 582 -> 661 TFLOP/s with warp specialization, fp16, head dim 128, seq 8448, H100),
// against the plain order QK, softmax, PV.
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::prefill_intra_overlap {

// The family default, S(j) and P(j-1) V(j-1) issued together (kIntraOverlap); its kernels are
// the family's (kernels/hopper_prefill/hopper_prefill.cu).
using overlapped = kernels::HopperPrefillPolicy;
static_assert(overlapped::kIntraOverlap);
struct serial : kernels::HopperPrefillPolicy {
  /* IntraOverlap = */ static constexpr bool kIntraOverlap = false;
};
// The plain order without ping-pong: against `serial`, what the consumers' turns are worth
// when no warpgroup hides its own softmax (each then waits for its GEMMs, so only the other
// consumer's matrix ops can fill the tensor cores during a softmax).
struct serial_free_running : kernels::HopperPrefillPolicy {
  /* IntraOverlap = */ static constexpr bool kIntraOverlap = false;
  /* PingPong = */ static constexpr bool kPingPong = false;
};

}  // namespace schedlab::experiments::prefill_intra_overlap
