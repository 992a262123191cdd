// FlashAttention-2-style forward attention (prefill). Host API: what the kernel supports
// and the launch for a policy (instantiated per experiment in its kernels.cu).
#pragma once
#include "common/problem.hpp"
#include "kernels/prefill/prefill_case.hpp"
#include "kernels/prefill/prefill_plan.hpp"

namespace schedlab::kernels {

// Head dims with a tile; bf16 / f16 Q, K, V, or OCP fp8 e4m3 with per-head dequantization
// scales (PrefillArgs; O in bf16); causal (bottom-right aligned) or not; GQA;
// any lengths. No sliding window.
inline KernelSupport flash_prefill_support() {
  return KernelSupport{.head_dims = {64, 128}, .dtypes = {DType::bf16, DType::f16, DType::fp8_e4m3}, .sliding_window = false};
}

template <class Policy>
void launch_flash_prefill(const PrefillArgs& args, gpu::api::stream_t stream);

}  // namespace schedlab::kernels
