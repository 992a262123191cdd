// Host side of the paged decode kernel for a policy: launch (launch_for), plan (plan_for), the
// dispatch over KV dtype and head dim, and the instantiation of an experiment's variant list.
#pragma once
#include "kernels/decode/decode_kernels.cuh"

namespace schedlab::kernels::decode_detail {

template <class Policy, DType kKv, int kHeadDim, DecodeBody kBody>
auto decode_kernel() {
  return paged_decode_kernel<Policy, kKv, kHeadDim, kBody, gpu::DynamicSmem<kSmemBytes<Policy, kKv, kHeadDim, kBody>>>;
}

// The tensor map of a 16-bit KV pool, encoded once per pool (a host call per launch would sit
// between the timing events).
template <int kHeadDim>
gpu::api::TensorMap pool_tensor_map(const void* pool, const DecodeProblem& p) {
  using T = Tile<DType::bf16, kHeadDim, true>;
  const std::uint64_t rows = std::uint64_t(p.num_pages) * p.kv_heads * p.page_size;
  if (rows > std::uint64_t(INT32_MAX)) throw UnsupportedProblem("paged decode: bulk copies address rows with 32-bit coordinates");
  static std::map<std::pair<const void*, std::uint64_t>, gpu::api::TensorMap> cache;
  auto [it, fresh] = cache.try_emplace({pool, rows});
  if (fresh)
    SCHEDLAB_GPU_CHECK(gpu::api::encode_tensor_map_2d(&it->second, pool, kHeadDim, rows, kHeadDim * 2, T::kBoxCols,
                                                      kDecodeTileTokens, 0));
  return it->second;
}

template <class Policy, DType kKv, int kHeadDim>
void launch_for(const DecodeArgs& args, const DecodePlan& plan, gpu::api::stream_t stream) {
  const DecodeProblem& p = *args.problem;
  if (plan.dynamic() && Policy::Partition::kTileSchedule != TileSchedule::persistent)
    throw std::invalid_argument("paged decode: a persistent plan for a policy without a persistent schedule");
  if (plan.needs_schedule() && !args.schedule) throw std::invalid_argument("paged decode: the plan needs the schedule counters");
  if (plan.balanced() && (Policy::Partition::kTileSchedule != TileSchedule::token_balanced || !args.work))
    throw std::invalid_argument("paged decode: a token-balanced plan needs a token-balanced policy and its uploaded work list");
  if (plan.row_tiles < 1 || plan.row_tiles > Policy::RowTiles::kMaxRowTiles || (plan.row_tiles > 1 && plan.dynamic()))
    throw std::invalid_argument("paged decode: a plan of " + std::to_string(plan.row_tiles) +
                                " row tiles for a policy of at most " + std::to_string(Policy::RowTiles::kMaxRowTiles));
  const int* work = plan.balanced() ? args.work : nullptr;
  Params a{args.q,      static_cast<const unsigned char*>(args.k_pool), static_cast<const unsigned char*>(args.v_pool),
           args.block_table, args.context_lens, args.k_scale, args.v_scale, args.o, args.partial_o, args.partial_lse, args.probe_slots,
           plan.needs_schedule() ? args.schedule : nullptr, work, work ? work + 4 * plan.work.chunks.size() : nullptr,
           decode_work_pairs(p, plan.row_tiles), plan.dynamic(),
           p.q_heads,   p.kv_heads, p.page_size, p.max_pages_per_seq, p.window, plan.num_splits, plan.tiles_per_split,
           p.scale() * kLog2e, plan.row_tiles};
#if SCHEDLAB_CTA_TIMELINE
  a.timeline = args.timeline;
#endif
  if constexpr (kBulk<Policy, kKv>) {
    a.k_map = pool_tensor_map<kHeadDim>(args.k_pool, p);
    a.v_map = pool_tensor_map<kHeadDim>(args.v_pool, p);
  }
  auto run = [&]<DecodeBody kBody>(dim3 grid) {
    const dim3 block(kThreadsOf<Policy, kKv, kBody>);
    constexpr int kBytes = kSmemBytes<Policy, kKv, kHeadDim, kBody>;
    auto kernel = decode_kernel<Policy, kKv, kHeadDim, kBody>();
    // Once per kernel: a runtime call between the timing events would be measured.
    static const bool smem_set = (gpu::set_max_dynamic_smem(kernel, kBytes), true);
    (void)smem_set;
    gpu::launch("paged_decode", kernel, gpu::LaunchConfig{grid, block, kBytes, stream}, a);
  };
  if constexpr (Policy::Partition::kTileSchedule == TileSchedule::persistent) {
    if (plan.dynamic()) run.template operator()<DecodeBody::dynamic>(dim3(plan.ctas));
  }
  const dim3 grid = plan.balanced() ? dim3(plan.work.chunks.size())
                                    : dim3(plan.num_splits, p.kv_heads * decode_group_chunks(p, plan.row_tiles), p.batch);
  bool row_tiles = false;
  if constexpr (Policy::RowTiles::kMaxRowTiles > 1) row_tiles = plan.row_tiles > 1;
  if (row_tiles) {
    if constexpr (Policy::RowTiles::kMaxRowTiles > 1) run.template operator()<kRowTileBody<Policy, kKv>>(grid);
  } else if (!plan.dynamic()) {
    run.template operator()<DecodeBody::split>(grid);
  }
  if (plan.needs_combine()) {
    constexpr bool kWarpPerRow = Policy::Merge::kCombineWarpPerRow;
    constexpr int kParts = kWarpPerRow ? Policy::Merge::kCombineWarpRowMaxPartials : 0;
    constexpr bool kRowList = Policy::Merge::kCombineRowList;
    static_assert(!kRowList || kWarpPerRow, "a combine row list needs the combine a warp per row");
    // A token-balanced plan's own list of rows; forced splits (a partial per split of every
    // row) keep the (sequence, slice) grid.
    const bool listed = kRowList && plan.balanced();
    auto combine = decode_combine_kernel<kQueryType<kKv>, kHeadDim, false, kWarpPerRow, kParts>;
    if constexpr (Policy::RowTiles::kMaxRowTiles > 1) {
      if (row_tiles) combine = decode_combine_kernel<kQueryType<kKv>, kHeadDim, true, kWarpPerRow, kParts>;
    }
    if constexpr (kRowList) {
      if (listed) combine = row_tiles ? decode_combine_kernel<kQueryType<kKv>, kHeadDim, true, true, kParts, true>
                                      : decode_combine_kernel<kQueryType<kKv>, kHeadDim, false, true, kParts, true>;
    }
    dim3 grid;
    if (listed) {
      a.combine_rows = a.unit_partials + a.units;
      a.combine_cta_rows = plan.combine_cta_rows;
      a.combine_warp_rows = plan.combine_warp_rows;
      grid = dim3(plan.combine_cta_rows + (plan.combine_warp_rows + kCombineWarps - 1) / kCombineWarps);
    } else {
      // With a warp per row, the CTAs of one row each only where a row may have more partials
      // than a warp merges (num_splits: the most partials of any row of the plan).
      const bool cta_rows = !kWarpPerRow || plan.num_splits > kParts;
      const int row_ctas = (kWarpPerRow ? (p.q_heads + kCombineWarps - 1) / kCombineWarps : 0) + (cta_rows ? p.q_heads : 0);
      grid = kWarpPerRow ? dim3(p.batch, row_ctas) : dim3(row_ctas, p.batch);
    }
    gpu::launch("decode_combine", combine,
                gpu::LaunchConfig{grid, dim3(kCombineWarps * kWarpSize), 0, stream, /*overlap_prior=*/true}, a);
  }
}

}  // namespace schedlab::kernels::decode_detail

namespace schedlab::kernels {

namespace decode_detail {
// Calls f.template operator()<kKv, kHeadDim>() for the problem's KV dtype and head dim.
template <class F>
decltype(auto) dispatch(const DecodeProblem& p, F&& f) {
  if (p.q_dtype != (p.kv_dtype == DType::f16 ? DType::f16 : DType::bf16))
    throw UnsupportedProblem("paged decode: queries are f16 with f16 KV and bf16 otherwise");
  auto by_dim = [&]<DType kKv>() {
    switch (p.head_dim) {
      case 64: return f.template operator()<kKv, 64>();
      case 128: return f.template operator()<kKv, 128>();
      default: throw UnsupportedProblem("paged decode: head_dim " + std::to_string(p.head_dim));
    }
  };
  switch (p.kv_dtype) {
    case DType::bf16: return by_dim.template operator()<DType::bf16>();
    case DType::f16: return by_dim.template operator()<DType::f16>();
    case DType::fp8_e4m3: return by_dim.template operator()<DType::fp8_e4m3>();
    default: throw UnsupportedProblem("paged decode: kv dtype");
  }
}
}  // namespace decode_detail

namespace decode_detail {
// The plan of one instantiation on the current device (its occupancy read from the runtime).
template <class Policy, DType kKv, int kHeadDim>
DecodePlan plan_for(const DecodeProblem& p, int forced_splits) {
  const gpu::DeviceInfo dev = gpu::device_info();
  const std::optional<gpu::GpuArch> arch = gpu::arch_of_device(dev.arch);
  if (!arch) throw UnsupportedProblem("paged decode: no code for device architecture " + dev.arch);
  // A policy whose stages do not fit this device is a skipped case, not a failed run.
  require_decode_fits<Policy>(p, *arch, dev.smem_per_block_optin);
  // A bulk copy moves a box of 16 contiguous rows of the pool, which a page smaller than a tile
  // does not hold.
  if (kBulk<Policy, kKv> && p.page_size < kDecodeTileTokens)
    throw UnsupportedProblem("paged decode: bulk copies need pages of at least " + std::to_string(kDecodeTileTokens) +
                             " keys (page_size " + std::to_string(p.page_size) + ")");
  static_assert(Policy::RowTiles::kMaxRowTiles == 1 || Policy::Partition::kTileSchedule == TileSchedule::split ||
                    Policy::Partition::kTileSchedule == TileSchedule::token_balanced,
                "row tiles are built for the split and token-balanced schedules only");
  auto slots_of = [&]<DecodeBody kBody>() {
    constexpr int kBodyBytes = kSmemBytes<Policy, kKv, kHeadDim, kBody>;  // checked by require_decode_fits
    auto kernel = decode_kernel<Policy, kKv, kHeadDim, kBody>();
    gpu::set_max_dynamic_smem(kernel, kBodyBytes);
    return dev.sm_count * gpu::max_active_blocks(kernel, kThreadsOf<Policy, kKv, kBody>, kBodyBytes);
  };
  constexpr DecodeBody kBody = Policy::Partition::kTileSchedule == TileSchedule::persistent ? DecodeBody::dynamic : DecodeBody::split;
  int slots = 0;
  if constexpr (Policy::RowTiles::kMaxRowTiles > 1) {
    if (decode_row_tiles(p, Policy::Partition::kTileSchedule, Policy::RowTiles::kMaxRowTiles) > 1)
      slots = slots_of.template operator()<kRowTileBody<Policy, kKv>>();
  }
  if (slots == 0) slots = slots_of.template operator()<kBody>();
  return plan_decode(p, DecodePlanOptions::of<Policy>(kKv, slots, forced_splits));
}
}  // namespace decode_detail

template <class Policy>
DecodePlan plan_paged_decode(const DecodeProblem& p, int forced_splits) {
  using namespace decode_detail;
  return dispatch(p, [&]<DType kKv, int kHeadDim>() { return plan_for<Policy, kKv, kHeadDim>(p, forced_splits); });
}

template <class Policy>
void launch_paged_decode(const DecodeArgs& args, const DecodePlan& plan, gpu::api::stream_t stream) {
  using namespace decode_detail;
  dispatch(*args.problem,
           [&]<DType kKv, int kHeadDim>() { launch_for<Policy, kKv, kHeadDim>(args, plan, stream); });
}

// The plan and the launch of every policy of an experiment's variant list, instantiated by the
// experiment's kernels.cu (`template struct DecodeInstances<Variants>;`), the kernels of each
// with them; its benchmark calls them through the declarations in paged_decode.hpp.
template <class List>
struct DecodeInstances;
template <class... Policies>
struct DecodeInstances<harness::VariantList<Policies...>> {
  // Tables defined out of the class: their explicit instantiation emits them, and with them
  // every function they point to (a use that left no code or data would emit nothing).
  static void (*const launches[])(const DecodeArgs&, const DecodePlan&, gpu::api::stream_t);
  static DecodePlan (*const plans[])(const DecodeProblem&, int);
};
template <class... Policies>
void (*const DecodeInstances<harness::VariantList<Policies...>>::launches[])(const DecodeArgs&, const DecodePlan&,
                                                                             gpu::api::stream_t) = {
    &launch_paged_decode<Policies>...};
template <class... Policies>
DecodePlan (*const DecodeInstances<harness::VariantList<Policies...>>::plans[])(const DecodeProblem&, int) = {
    &plan_paged_decode<Policies>...};

}  // namespace schedlab::kernels
