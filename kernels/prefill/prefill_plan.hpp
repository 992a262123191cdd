// The flash prefill kernel's plan: which instantiation of a policy a device's architecture
// launches, chosen on the host when a case is built (no GPU needed), as decode's plan is.
// Where a policy's shared storage overflows the architecture (the tuned default's 80 KiB at
// head dim 128 on gfx942's 64 KiB), the plan launches PrefillPolicyFor<Policy, arch>, the
// same knobs with a shorter key tile; where not even that fits, the case is refused here with
// the bytes and the limit (UnsupportedProblem: a skipped case), never at launch.
#pragma once
#include <string>

#include "common/gpu/arch.hpp"
#include "common/problem.hpp"
#include "kernels/prefill/prefill_policy.hpp"

namespace schedlab::kernels {

struct PrefillPlan {
  gpu::GpuArch arch;
  int block_n = 0;         // keys per K/V tile the launched instantiation uses
  int kv_buffers = 0;      // K/V stages in shared memory
  int smem_bytes = 0;      // its shared storage at the problem's head dim and dtype
  bool key_tile_cut = false;  // PrefillPolicyFor<Policy, arch>: block_n below the policy's own
};

// The plan for Policy on `arch` at p's head dim and dtype. `smem_limit` is the device's
// per-block limit where a device is at hand (DeviceInfo::smem_per_block_optin), else the
// architecture's; the smaller of it and the architecture's applies. Throws UnsupportedProblem
// when neither the policy's tiles nor the cut ones fit.
template <class Policy>
PrefillPlan plan_prefill(const PrefillProblem& p, gpu::GpuArch arch, int smem_limit = 0) {
  const int arch_limit = gpu::smem_per_block(arch);
  const int limit = smem_limit > 0 && smem_limit < arch_limit ? smem_limit : arch_limit;
  PrefillPlan plan{.arch = arch, .block_n = prefill_block_n<Policy>(p.dtype), .kv_buffers = Policy::kKvBuffers};
  plan.smem_bytes = prefill_smem_bytes_at<Policy>(p.head_dim, p.dtype, plan.block_n);
  const int own_bytes = plan.smem_bytes;
  // The build holds the cut instantiation where the policy overflows its architecture
  // (prefill_policy_on); a device that allows less than its architecture gets no further cut.
  const int cut = prefill_block_n_within<Policy>(arch_limit, kPrefillMaxHeadDim, p.dtype);
  if (own_bytes > arch_limit && cut != 0) {
    plan.block_n = cut;
    plan.smem_bytes = prefill_smem_bytes_at<Policy>(p.head_dim, p.dtype, cut);
    plan.key_tile_cut = true;
  }
  if (plan.smem_bytes > limit)
    throw UnsupportedProblem(
        "flash prefill: this policy needs " + std::to_string(own_bytes) + " bytes of shared memory per block at head_dim " +
        std::to_string(p.head_dim) +
        (plan.key_tile_cut ? " (" + std::to_string(plan.smem_bytes) + " with its key tile cut to " + std::to_string(cut) + ")"
         : cut == 0        ? std::string(" (over the limit with even the shortest key tile)")
                           : std::string()) +
        "; " + std::string(gpu::arch_name(arch)) + " allows " + std::to_string(limit) + " (" + std::to_string(limit / 1024) +
        " KiB)");
  return plan;
}

}  // namespace schedlab::kernels
