// Paged-KV decode attention (one query token per sequence, flash-decoding split-K).
// Host API: the plan (how many splits), the launch for a policy, and what it supports.
#pragma once
#include <cstdint>

#include "common/gpu/runtime.hpp"
#include "common/problem.hpp"

namespace schedlab::kernels {

struct DecodeArgs {
  const void* q;
  const void* k_pool;
  const void* v_pool;
  const int* block_table;   // device, [batch, max_pages_per_seq]
  const int* context_lens;  // device, [batch]
  const float* k_scale;     // device, [kv_heads]; fp8 only
  const float* v_scale;
  void* o;
  float* partial_o;    // [batch, q_heads, splits, head_dim] when splits > 1
  float* partial_lse;  // [batch, q_heads, splits], log2 domain
  unsigned long long* probe_slots;  // gpu::kProbeSlots wait-point counters, or null
  const DecodeProblem* problem;
  int num_splits;
};

// Split-K plan. The heuristic: batch x kv_heads CTAs fill the GPU only when there are at
// least as many as resident CTA slots (SMs x CTAs per SM at the kernel's occupancy); below
// that the context is split so that the CTAs fill the slots in one wave (a partial second
// wave would leave most SMs idle at the end), never leaving a warp fewer than
// kMinTilesPerWarp tiles (each split also costs a partial write and a share of the combine).
struct DecodePlan {
  int num_splits = 1;
  int tiles_per_split = 0;
};
inline constexpr int kMinTilesPerWarp = 4;
DecodePlan plan_decode(const DecodeProblem& p, int cta_slots, int warps, int forced_splits = 0);

// The plan for Policy on the current device (its occupancy read from the runtime).
template <class Policy>
DecodePlan plan_paged_decode(const DecodeProblem& p, int forced_splits = 0);

KernelSupport paged_decode_support();

// CTAs per KV head: a GQA group larger than the 16 rows of the matrix instruction is split.
int decode_group_chunks(const DecodeProblem& p);

// Launches for Policy (declared here, instantiated per experiment in its .cu file).
template <class Policy>
void launch_paged_decode(const DecodeArgs& args, const DecodePlan& plan, gpu::api::stream_t stream);

}  // namespace schedlab::kernels
