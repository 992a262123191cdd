// The persistent grid's body: warps that move on to the unfinished unit with the most tiles
// left, each writing its own partial (decode_dynamic).
#pragma once
#include "kernels/decode/decode_warpgroup.cuh"

namespace schedlab::kernels::decode_detail {

// Dynamic tiles: a warp writes its own normalized partial and log-sum-exp to a slot of the
// split combine, no shared memory involved.
template <DType kKv, int kHeadDim>
__device__ void write_warp_partial(Softmax<kHeadDim>& st, const Params& a, const WorkUnit& u, int slot) {
  if constexpr (kOnWarpTile) {
    write_partial_on_tile<kKv, kHeadDim>(st, a, u.seq, u.kvh, u.head0, u.rows, slot);
  } else {
    const int g = gpu::mma::frag_lane() / 4, t = gpu::mma::frag_lane() % 4;
    const float v_scale = a.v_scale ? a.v_scale[u.kvh] : 1.f;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      st.l[r] += gpu::shfl_xor(st.l[r], 1);
      st.l[r] += gpu::shfl_xor(st.l[r], 2);
      const int row = g + 8 * r;
      if (row >= u.rows) continue;
      const std::size_t at = (std::size_t(u.seq) * a.q_heads + u.head0 + row) * a.num_splits + slot;
      const float inv = inverse_sum(st.l[r], v_scale);
      float* o = a.partial_o + at * kHeadDim;
#pragma unroll
      for (int n = 0; n < kHeadDim / 8; ++n) {
        o[Tile<kKv, kHeadDim>::o_column(n, 2 * t)] = st.o[n][2 * r] * inv;
        o[Tile<kKv, kHeadDim>::o_column(n, 2 * t + 1)] = st.o[n][2 * r + 1] * inv;
      }
      if (t == 0) a.partial_lse[at] = row_lse(st.m[r], st.l[r]);
    }
  }
}

// The schedule's counters (decode_schedule_ints): next tile and joins per unit, the published
// joins per unit for the combine, the warps that have left, and whether every unit is drained.
struct Schedule {
  int* next_tile;
  int* joined;
  int* published;
  int* left;
  int* drained;
  __device__ explicit Schedule(const Params& a)
      : next_tile(a.schedule), joined(a.schedule + a.units), published(a.schedule + 2 * a.units),
        left(a.schedule + 3 * a.units), drained(a.schedule + 3 * a.units + 1) {}
};

// Warps of a persistent grid of `total` that start on a unit (warp gw starts on gw % units).
// They own its first partial slots; warps that join later take the ones after.
__device__ inline int starters_of(const Params& a, int unit, int total) {
  return unit < total ? (total - unit + a.units - 1) / a.units : 0;
}
__device__ inline int joiner_slots(const Params& a, int unit, int total) {
  return a.num_splits - starters_of(a, unit, total);
}
// Tiles of a unit of n split statically among its starters (Policy::Partition::kStaticPercent, rounded
// down to a multiple of the starters); the counter hands out the rest.
template <class Policy>
__device__ inline int static_share(const Params& a, int unit, int total, int n) {
  const int starters = starters_of(a, unit, total);
  return starters > 0 ? n * Policy::Partition::kStaticPercent / 100 / starters * starters : 0;
}

// The unit a warp moves to when its own has no tiles left: the one with the most tiles not
// yet handed out and a free partial slot (the nearest after `after` among equals), or -1.
// Lanes read kScanBatch units each before using any (one round trip per batch, not per
// unit: a unit-by-unit scan cost the dynamic grid 10-20 us at its end). Nothing is ever
// handed back, so once a scan finds no unit every later one would too: it says so in
// `drained` and later scans stop at that.
inline constexpr int kScanBatch = 4;
template <class Policy>
__device__ inline int next_unit(const Params& a, const Schedule& sch, int after, int total) {
  if (gpu::load_coherent(sch.drained)) return -1;
  const int lane = gpu::lane_id();
  int best = 0, best_at = a.units;  // tiles left, distance after `after`
  for (int base = 0; base < a.units; base += kWarpSize * kScanBatch) {
    // joined: joiner slots still free; tiles: the unit's dynamic ones; taken: those handed out
    int joined[kScanBatch], taken[kScanBatch], tiles[kScanBatch];
#pragma unroll
    for (int b = 0; b < kScanBatch; ++b) {
      const int d = base + b * kWarpSize + lane, unit = (after + 1 + d) % a.units;
      joined[b] = d < a.units ? joiner_slots(a, unit, total) - gpu::load_coherent(sch.joined + unit) : 0;
      taken[b] = d < a.units ? gpu::load_coherent(sch.next_tile + unit) : 0;
      if (d < a.units) {
        const WorkUnit u = WorkUnit::of(a, unit);
        tiles[b] = u.tile_hi - u.tile_lo - static_share<Policy>(a, unit, total, u.tile_hi - u.tile_lo);
      } else {
        tiles[b] = 0;
      }
    }
#pragma unroll
    for (int b = 0; b < kScanBatch; ++b) {
      const int left = joined[b] > 0 ? tiles[b] - taken[b] : 0;
      if (left > best) {
        best = left;
        best_at = base + b * kWarpSize + lane;
      }
    }
  }
  for (int off = kWarpSize / 2; off > 0; off /= 2) {
    const int other = gpu::shfl_xor(best, off), other_at = gpu::shfl_xor(best_at, off);
    if (other > best || (other == best && other_at < best_at)) {
      best = other;
      best_at = other_at;
    }
  }
  if (best > 0) return (after + 1 + best_at) % a.units;
  if (lane == 0) *sch.drained = 1;
  return -1;
}

// Dynamic tiles: warp gw of the persistent grid starts on unit gw % units, then moves on
// (next_unit) until no unit has tiles left. The last warp to leave publishes the join
// counts for the combine and zeroes the counters for the next launch.
template <class Policy, DType kKv, int kHeadDim>
__device__ void decode_dynamic(const Params& a, unsigned char* smem, gpu::WaitProbe& probe) {
  const Schedule sch(a);
  const int w = gpu::warp_id(), gw = blockIdx.x * kWarpsOf<Policy, kKv> + w, total = gridDim.x * kWarpsOf<Policy, kKv>;
  CopyPipe<Policy, kKv, kHeadDim> pipe(smem, w);  // its barriers' phases carry over from unit to unit
  bool first = true;  // a warp's static share is in its first unit only, even if it comes back
  for (int unit = gw % a.units; unit >= 0; unit = next_unit<Policy>(a, sch, unit, total), first = false) {
    const int starters = starters_of(a, unit, total);
    const int slot = first ? gw / a.units
                           : starters + gpu::shfl(gpu::lane_id() == 0 ? atomicAdd(sch.joined + unit, 1) : 0, 0);
    if (slot >= a.num_splits) continue;  // full: the warps on it finish it
    const WorkUnit u = WorkUnit::of(a, unit);
    std::uint32_t qa[kHeadDim / 16][4];
    load_q<kKv, kHeadDim>(qa, a, u.seq, u.head0, u.rows);  // in flight while the first tiles are grabbed
    const float scale_log2 = a.scale_log2 * (a.k_scale ? a.k_scale[u.kvh] : 1.f);
    // The warps that start here (gw = unit + j * units) share its first tiles; joiners have none.
    const int n = u.tile_hi - u.tile_lo, fixed = static_share<Policy>(a, unit, total, n);
    DynamicTiles<2 * kStages<Policy, kKv>> src{sch.next_tile + unit, u.tile_lo, n, fixed,
                                                u.tile_lo + gw / a.units, first ? fixed / max(starters, 1) : 0, starters};
    src.start();
    Softmax<kHeadDim> st;
    stream_tiles<Policy, kKv, kHeadDim>(src, pipe, st, qa, a, u.seq, u.kvh, u.first_key, u.seq_len, scale_log2, probe);
    write_warp_partial<kKv, kHeadDim>(st, a, u, slot);  // a slot taken is always written, if empty
  }
  gpu::allow_dependent_launch();
  gpu::fence_device();  // this warp's joins and partials before its leaving is counted
  const bool last = gpu::shfl(gpu::lane_id() == 0 ? int(atomicAdd(sch.left, 1) == total - 1) : 0, 0);
  if (!last) return;
  gpu::fence_device();
  for (int unit = gpu::lane_id(); unit < a.units; unit += kWarpSize) {
    sch.published[unit] = starters_of(a, unit, total) + min(gpu::load_coherent(sch.joined + unit), joiner_slots(a, unit, total));
    sch.joined[unit] = 0;
    sch.next_tile[unit] = 0;
  }
  if (gpu::lane_id() == 0) {
    *sch.left = 0;
    *sch.drained = 0;
  }
}

}  // namespace schedlab::kernels::decode_detail
