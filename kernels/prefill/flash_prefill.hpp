// FlashAttention-2-style forward attention (prefill). Host API: what the kernel supports
// and the launch for a policy (instantiated per experiment in its kernels.cu).
#pragma once
#include <optional>
#include <utility>

#include "common/gpu/runtime.hpp"
#include "common/problem.hpp"
#include "kernels/prefill/prefill_case.hpp"
#include "kernels/prefill/prefill_plan.hpp"

namespace schedlab::kernels {

// Head dims with a tile; bf16 / f16 Q, K, V, or OCP fp8 e4m3 with per-head dequantization
// scales (PrefillArgs; O in bf16); causal (bottom-right aligned) or not; GQA;
// any lengths of a uniform batch. No sliding window, no ragged batch.
inline KernelSupport flash_prefill_support() {
  return KernelSupport{.head_dims = {64, 128},
                       .dtypes = {DType::bf16, DType::f16, DType::fp8_e4m3},
                       .sliding_window = false,
                       .ragged = false};
}

template <class Policy>
void launch_flash_prefill(const PrefillArgs& args, gpu::api::stream_t stream);

// This device's architecture and per-block shared-memory limit, asked of the runtime once: a
// host query between timing events would be timed.
inline const std::pair<gpu::GpuArch, int>& prefill_device_arch() {
  static const std::pair<gpu::GpuArch, int> arch = [] {
    const gpu::DeviceInfo info = gpu::device_info();
    const std::optional<gpu::GpuArch> a = gpu::arch_of_device(info.arch);
    if (!a) throw UnsupportedProblem("flash prefill: no code for device architecture " + info.arch);
    return std::pair{*a, info.smem_per_block_optin};
  }();
  return arch;
}

// The plan on the device at hand (kernels/prefill/prefill_plan.hpp).
template <class Policy>
PrefillPlan plan_prefill_on_device(const PrefillProblem& p) {
  const auto& [arch, limit] = prefill_device_arch();
  return plan_prefill<Policy>(p, arch, limit);
}

}  // namespace schedlab::kernels
