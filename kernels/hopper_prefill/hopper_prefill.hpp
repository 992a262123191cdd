// Hopper prefill (forward attention) in FlashAttention-3's structure: bulk tensor copies into
// a shared-memory ring, warpgroup matrix ops (wgmma), a producer warpgroup and two consumer
// warpgroups. sm_90a only. Host API: what the kernel supports and the launch for a policy
// (instantiated per experiment in its kernels.cu).
#pragma once
#include "common/problem.hpp"
#include "kernels/prefill/prefill_case.hpp"

namespace schedlab::kernels {

// Head dim 64 or 128; bf16 / f16; causal (bottom-right aligned) or not; GQA; any lengths
// (the copies zero-fill past the end of a sequence). No sliding window.
inline KernelSupport hopper_prefill_support() {
  return KernelSupport{.head_dims = {64, 128}, .dtypes = {DType::bf16, DType::f16}, .sliding_window = false};
}

template <class Policy>
void launch_hopper_prefill(const PrefillArgs& args, gpu::api::stream_t stream);

// Throws UnsupportedProblem when the policy's shared storage at this problem's head dim
// exceeds the device's per-block limit (the harness then skips the case with the reason).
template <class Policy>
void require_hopper_prefill_fits(const PrefillProblem& p);

}  // namespace schedlab::kernels
