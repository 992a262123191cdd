// The scheduling knobs of the flash prefill kernel. An experiment variant is one of these
// with some members changed; the kernel body is shared (kernels/prefill/flash_prefill.cuh).
#pragma once
#include <type_traits>

#include "common/dtype.hpp"
#include "common/gpu/arch.hpp"
#include "kernels/attention/smem_layout.hpp"

namespace schedlab::kernels {

// Shared-memory layout of a K, V (or Q) tile: rows of head_dim values (16-bit, or fp8 bytes).
using attention::SmemLayout;

// Register storage of the K and V B-operand fragments (seed 003).
enum class KvFragments {
  Union,     // one storage: V fragments are loaded into it only after the last QK matrix op
  Separate,  // own registers: V's first fragments are loaded before the last QK matrix ops
};

// Where the first K fragments of a tile (shared -> registers) are loaded (seed 003).
enum class KLoadSchedule {
  Compiler,     // no hint: the compiler places the loads
  Pinned,       // fenced by sched_barrier between the previous PV and this QK matrix groups
  Interleaved,  // sched_group_barrier alternates matrix ops with shared-memory reads (AMD)
};

// How the waves of a CTA share the matrix units (on AMD, the four SIMDs of a CU).
enum class WaveSchedule {
  plain,            // every wave runs the same main loop; the hardware interleaves them as it can
  ping_pong_8wave,  // HipKittens' 8-wave ping-pong (Hu et al. 2025, arXiv 2511.08083): two groups of four
                    // waves, one of each per SIMD, one phase apart; every phase ends at a barrier of all
                    // eight, so one group issues matrix ops while the other copies tiles and runs the
                    // softmax; matrix phases run at raised wave priority (s_setprio)
};

// Faults injected on purpose, to show that the accuracy gate catches a broken kernel
// (kernels/tests/test_prefill_gpu.cu). No shipped variant sets one: with `none` the kernel
// compiles none of the injection points in, and its machine code is unchanged.
enum class PrefillFault {
  none,
  drop_tile,   // each CTA's middle K/V tile is loaded but its scores never count
  stale_tile,  // each CTA's middle tile is copied from the tile kKvBuffers before it (what its buffer held)
  skip_mask,   // tiles crossing the causal diagonal or the key end are computed unmasked
};

// The defaults are the family's fastest configuration built with the project's own flags
// (kernels/prefill/README.md: 360 / 333 TFLOP/s at D=128, 8k, non-causal / causal, H200),
// so each experiment changes one knob of a kernel as fast as the FlashAttention-2 users run.
struct PrefillPolicy {
  /* Warps = */ static constexpr int kWarps = 4;        // a CTA owns kWarps * kWarpRows query rows
  /* WarpRows = */ static constexpr int kWarpRows = 32;  // 16 or 32: m16 tiles sharing each K/V fragment
  /* QInRegisters = */ static constexpr bool kQInRegisters = false;  // false: re-read Q from shared memory per k16 step
  /* QkUnroll = */ static constexpr int kQkUnroll = 8;  // with Q in shared memory: k16 steps of QK unrolled
  /* BlockN = */ static constexpr int kBlockN = 48;     // keys per K/V tile (48: S fits 32 rows without spills)
  // fp8 inputs: P V steps over 32 keys (m16n8k32 / 16x16x32), so tiles are whole 32-key blocks.
  /* BlockNFp8 = */ static constexpr int kBlockNFp8 = 32;
  /* KvBuffers = */ static constexpr int kKvBuffers = 2;  // 1: FA2's single K and V buffers, split waits (seed 001)
  /* SkipUnitRescale = */ static constexpr bool kSkipUnitRescale = false;  // branch around O *= 1
  // > 0: keep a stale running max until a row's max grows by more than this (log2 units),
  // and skip O *= corr when no row of the warp moved (FA4's conditional rescaling). P then
  // reaches 2^threshold at most, which bf16/f16 and the f32 sums hold exactly as well.
  /* RescaleThreshold = */ static constexpr float kRescaleThreshold = 8.f;
  /* PipelineQk = */ static constexpr bool kPipelineQk = false;  // QK(j+1) issued before softmax(j); needs 3 buffers
  /* Layout = */ static constexpr SmemLayout kLayout = SmemLayout::Swizzled;
  /* KvFragments = */ static constexpr KvFragments kKvFragments = KvFragments::Union;
  /* KLoad = */ static constexpr KLoadSchedule kKLoad = KLoadSchedule::Compiler;
  /* WaveSchedule = */ static constexpr WaveSchedule kWaveSchedule = WaveSchedule::plain;
  /* Fault = */ static constexpr PrefillFault kFault = PrefillFault::none;  // tests only
};

// Keys per K/V tile for an input dtype.
template <class Policy>
constexpr int prefill_block_n(DType dtype) {
  return dtype == DType::fp8_e4m3 ? Policy::kBlockNFp8 : Policy::kBlockN;
}

// Shared memory of the flash prefill kernel for a policy at a head dim, input dtype and key
// tile: the Q tile and kKvBuffers K and V tiles of head_dim elements per row (one 16-byte
// chunk more per row when padded).
template <class Policy>
constexpr int prefill_smem_bytes_at(int head_dim, DType dtype, int block_n) {
  const int row_bytes = head_dim * (dtype == DType::fp8_e4m3 ? 1 : 2) + (Policy::kLayout == SmemLayout::Padded ? 16 : 0);
  return (Policy::kWarps * Policy::kWarpRows + Policy::kKvBuffers * 2 * block_n) * row_bytes;
}

// The same at the policy's own key tile. The launch asserts that the kernel's SharedStorage
// has this size (kernels/prefill/flash_prefill.cuh).
template <class Policy>
constexpr int prefill_smem_bytes(int head_dim, DType dtype = DType::bf16) {
  return prefill_smem_bytes_at<Policy>(head_dim, dtype, prefill_block_n<Policy>(dtype));
}

inline constexpr int kPrefillMaxHeadDim = 128;  // the largest of flash_prefill_support()'s head dims

// Keys per K/V tile of Policy cut to whole P V steps (16 keys; 32 for fp8) until its shared
// storage at `head_dim` fits `limit` bytes: Policy's own tile where that fits, 0 where not
// even one step does.
template <class Policy>
constexpr int prefill_block_n_within(int limit, int head_dim, DType dtype) {
  const int step = dtype == DType::fp8_e4m3 ? 32 : 16;
  for (int n = prefill_block_n<Policy>(dtype) / step * step; n >= step; n -= step)
    if (prefill_smem_bytes_at<Policy>(head_dim, dtype, n) <= limit) return n;
  return 0;
}

// Policy on an architecture whose shared memory its tiles overflow: the same knobs with the
// key tile cut so Q and every K/V stage fit kArch's limit at the largest head dim (gfx942 at
// head dim 128: 48 -> 32 keys double-buffered, 16 padded). kBlockN 0: nothing fits (the plan
// refuses it). The plan launches it only where Policy itself does not fit (prefill_plan.hpp).
template <class Policy, gpu::GpuArch kArch>
struct PrefillPolicyFor : Policy {
  /* BlockN = */ static constexpr int kBlockN =
      prefill_block_n_within<Policy>(gpu::smem_per_block(kArch), kPrefillMaxHeadDim, DType::bf16);
  /* BlockNFp8 = */ static constexpr int kBlockNFp8 =
      prefill_block_n_within<Policy>(gpu::smem_per_block(kArch), kPrefillMaxHeadDim, DType::fp8_e4m3);
};

// The policy the flash prefill kernel is instantiated with on kArch at a head dim and dtype:
// Policy where its storage fits kArch, PrefillPolicyFor<Policy, kArch> where only the cut
// one does, void where neither does.
template <class Policy, gpu::GpuArch kArch, int kHeadDim, DType kT>
using prefill_policy_on = std::conditional_t<
    prefill_smem_bytes<Policy>(kHeadDim, kT) <= gpu::smem_per_block(kArch), Policy,
    std::conditional_t<prefill_block_n_within<Policy>(gpu::smem_per_block(kArch), kPrefillMaxHeadDim, kT) != 0,
                       PrefillPolicyFor<Policy, kArch>, void>>;

// The family's default policy on each architecture: PrefillPolicy, with its key tile cut
// where its shared storage does not fit (gfx942: 32-key tiles, 64 KiB at head dim 128 where
// PrefillPolicy's 48-key ones need 80 KiB). The plan makes the same choice for every policy.
template <gpu::GpuArch kArch>
struct DefaultPrefillPolicy {
  using type = std::conditional_t<prefill_smem_bytes<PrefillPolicy>(kPrefillMaxHeadDim) <= gpu::smem_per_block(kArch),
                                  PrefillPolicy, PrefillPolicyFor<PrefillPolicy, kArch>>;
};

}  // namespace schedlab::kernels
