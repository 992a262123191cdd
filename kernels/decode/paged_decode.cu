// Host side of the paged decode kernel: the split plan and what the kernel supports.
// The kernel instantiations live in each experiment's .cu (one per policy).
#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "kernels/decode/decode_policy.hpp"
#include "kernels/decode/paged_decode.hpp"

namespace schedlab::kernels {

DecodePlan plan_decode(const DecodeProblem& p, int cta_slots, int warps, int forced_splits, TileSchedule schedule) {
  if (cta_slots < 1 || warps < 1) throw std::invalid_argument("plan_decode: no CTA slots or warps");
  // Before any launch and any allocation: a bad batch description (a length below 1, a page id
  // outside the pool, a length needing more pages than its block-table row) is an
  // InvalidProblem naming the sequence and entry, and nothing is written.
  p.validate(paged_decode_support());
  int max_tiles = 0;
  std::int64_t total_tiles = 0;
  for (int b = 0; b < p.batch; ++b) {
    const int first_tile = p.first_visible_key(b) / kDecodeTileTokens;
    const int last_tile = (p.context_lens[b] + kDecodeTileTokens - 1) / kDecodeTileTokens;
    max_tiles = std::max(max_tiles, last_tile - first_tile);
    total_tiles += std::int64_t(last_tile - first_tile) * p.kv_heads * decode_group_chunks(p);
  }
  DecodePlan plan;
  if (schedule == TileSchedule::persistent && forced_splits <= 0) {
    // As many CTAs as keep every warp at kMinTilesPerWarp tiles, at most one resident wave.
    const std::int64_t per_cta = std::int64_t(warps) * kMinTilesPerWarp;
    plan.ctas = static_cast<int>(std::clamp<std::int64_t>((total_tiles + per_cta - 1) / per_cta, 1, cta_slots));
    const int pairs = decode_work_pairs(p);
    plan.num_splits = (plan.ctas * warps + pairs - 1) / pairs + kDynamicJoins;
    plan.tiles_per_split = max_tiles;
    return plan;
  }
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
  plan.shared_tail = schedule != TileSchedule::split && plan.num_splits > 1;
  return plan;
}

int decode_group_chunks(const DecodeProblem& p) {
  return (p.group_size() + kDecodeMaxGroup - 1) / kDecodeMaxGroup;
}

int decode_work_pairs(const DecodeProblem& p) { return p.batch * p.kv_heads * decode_group_chunks(p); }

KernelSupport paged_decode_support() {
  KernelSupport s;
  s.head_dims = {64, 128};
  s.dtypes = {DType::bf16, DType::f16, DType::fp8_e4m3};
  s.page_sizes = {16, 32, 64, 128, 256};
  return s;
}

}  // namespace schedlab::kernels
