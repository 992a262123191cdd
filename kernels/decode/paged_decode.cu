// Host side of the paged decode kernel: the split plan and what the kernel supports.
// The kernel instantiations live in each experiment's .cu (one per policy).
#include <algorithm>

#include "kernels/decode/decode_policy.hpp"
#include "kernels/decode/paged_decode.hpp"

namespace schedlab::kernels {

DecodePlan plan_decode(const DecodeProblem& p, int cta_slots, int warps, int forced_splits) {
  int max_tiles = 0;
  for (int b = 0; b < p.batch; ++b) {
    const int first_tile = p.first_visible_key(b) / kDecodeTileTokens;
    const int last_tile = (p.context_lens[b] + kDecodeTileTokens - 1) / kDecodeTileTokens;
    max_tiles = std::max(max_tiles, last_tile - first_tile);
  }
  DecodePlan plan;
  if (forced_splits > 0) {
    plan.num_splits = forced_splits;
  } else {
    const int ctas = p.batch * p.kv_heads * decode_group_chunks(p);
    const int wanted = std::max(1, cta_slots / ctas);
    const int most = std::max(1, max_tiles / (warps * kMinTilesPerWarp));
    plan.num_splits = std::clamp(wanted, 1, most);
  }
  plan.tiles_per_split = std::max(1, (max_tiles + plan.num_splits - 1) / plan.num_splits);
  if (forced_splits <= 0) plan.num_splits = std::max(1, (max_tiles + plan.tiles_per_split - 1) / plan.tiles_per_split);
  return plan;
}

int decode_group_chunks(const DecodeProblem& p) {
  return (p.group_size() + kDecodeMaxGroup - 1) / kDecodeMaxGroup;
}

KernelSupport paged_decode_support() {
  KernelSupport s;
  s.head_dims = {64, 128};
  s.dtypes = {DType::bf16, DType::f16, DType::fp8_e4m3};
  s.page_sizes = {16, 32, 64, 128, 256};
  return s;
}

}  // namespace schedlab::kernels
