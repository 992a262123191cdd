// Plan-time checks of the flash prefill kernel that need no GPU, made when a case is built:
// a policy whose shared memory does not fit the device is a skipped case, as in decode's plan.
#pragma once
#include <string>

#include "common/problem.hpp"
#include "kernels/prefill/prefill_policy.hpp"

namespace schedlab::kernels {

// Throws UnsupportedProblem when Policy's shared storage at p's head dim is over
// `smem_per_block` (the device's per-block limit, gpu::DeviceInfo::smem_per_block_optin).
template <class Policy>
void require_prefill_smem_fits(const PrefillProblem& p, int smem_per_block) {
  const int bytes = prefill_smem_bytes<Policy>(p.head_dim, p.dtype);
  if (bytes > smem_per_block)
    throw UnsupportedProblem("flash prefill: this policy needs " + std::to_string(bytes / 1024) +
                             " KiB of shared memory per CTA at head_dim " + std::to_string(p.head_dim) +
                             "; the device allows " + std::to_string(smem_per_block / 1024) + " KiB");
}

}  // namespace schedlab::kernels
