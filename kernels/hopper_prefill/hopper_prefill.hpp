// Hopper prefill (forward attention) in FlashAttention-3's structure: bulk tensor copies into
// a shared-memory ring, warpgroup matrix ops (wgmma), a producer warpgroup and two consumer
// warpgroups. sm_90a only. Host API: what the kernel supports and the launch for a policy
// (instantiated per experiment in its kernels.cu; the family default once, in hopper_prefill.cu).
#pragma once
#include "common/problem.hpp"
#include "kernels/prefill/prefill_case.hpp"

namespace schedlab::kernels {

// Head dim 64 or 128; bf16 / f16, and fp8 e4m3 (per-head scales, O in bf16) at head dim 128
// for the policies with a producer warpgroup (kHopperFp8Capable; the others refuse it in
// require_hopper_prefill_fits); causal (bottom-right aligned) or not; GQA;
// any lengths (the copies zero-fill past the end of a sequence), uniform or ragged (packed
// sequences: the keys past a sequence's end are masked, its rows past the end not written).
// No sliding window.
inline KernelSupport hopper_prefill_support() {
  return KernelSupport{
      .head_dims = {64, 128}, .dtypes = {DType::bf16, DType::f16, DType::fp8_e4m3}, .sliding_window = false};
}

template <class Policy>
void launch_hopper_prefill(const PrefillArgs& args, gpu::api::stream_t stream);

// Throws UnsupportedProblem when the policy's shared storage at this problem's head dim
// exceeds the device's per-block limit, or for fp8 the policy or head dim cannot run it (the
// harness then skips the case with the reason).
template <class Policy>
void require_hopper_prefill_fits(const PrefillProblem& p);

}  // namespace schedlab::kernels
