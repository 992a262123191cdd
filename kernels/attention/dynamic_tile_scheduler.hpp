// The dynamic persistent tile schedule (FlashAttention-3's DynamicPersistentTileScheduler is
// the model): one CTA per SM; a CTA's first tile is blockIdx.x and each next one is drawn
// from a global counter by one thread of an otherwise idle producer warp, which hands the id
// to the copying thread and the consumer warps through a two-slot ring in shared memory (the
// copying thread keeps its few registers for the copies). Causal tiles differ in length by
// up to the number of query blocks; drawing them in longest-first order from one counter keeps
// every SM busy until the last tiles, which a static persistent walk cannot.
// CUDA sm_90 only (mbarriers), like pipeline.hpp.
#pragma once
#include "kernels/attention/pipeline.hpp"
#include "kernels/attention/tile_scheduler.hpp"

namespace schedlab::kernels::attention {

// The ids in flight between the fetching thread and the warps that walk the tiles. `slots`
// reuses the pipeline's barriers: full completes on the fetcher's one arrival (after it wrote
// the id), empty on one arrival per reading warp (after the warp read it).
struct TileQueue {
  int id[2];
  TmaPipeline<2> slots;
  __device__ void init(int reading_warps) { slots.init(reading_warps); }
};

// Who calls next(): the one thread that draws from the counter, a whole warp that reads the
// ids (lane 0 releases the slot), or a thread reading alone (the producer's copying thread,
// whose warp has no other active lane).
enum class TileRole { Fetcher, WarpReader, LoneReader };

template <>
struct TileScheduler<TileSchedule::Dynamic> {
  const TileGrid& g;  // in kernel-parameter space: read from the constant bank, not held in registers
  TileQueue& queue;
  TileRole role;
  bool first = true;
  PipelineState<2> state;
  static dim3 grid(const TileGrid& g, int sm_count) { return dim3(g.count() < sm_count ? g.count() : sm_count); }
  __device__ TileScheduler(const TileGrid& grid, TileQueue& q, TileRole r) : g(grid), queue(q), role(r) {}

  __device__ bool next(TileCoord& t) {
    int id;
    if (role == TileRole::Fetcher) {
      id = first ? static_cast<int>(blockIdx.x)
                 : static_cast<int>(atomicAdd(g.counter, 1u) - g.base) + static_cast<int>(gridDim.x);
      queue.slots.producer_acquire(state);
      queue.id[state.index()] = id;
      gpu::mbarrier_arrive(&queue.slots.full[state.index()]);  // release: the id is visible to the waiters
    } else {
      queue.slots.consumer_wait(state);
      id = queue.id[state.index()];
      if (role == TileRole::WarpReader) gpu::warp_sync();  // every lane has read the id before the slot is released
      if (role == TileRole::LoneReader || gpu::lane_id() == 0) queue.slots.consumer_release(state);
    }
    first = false;
    ++state;
    if (id >= g.count()) return false;
    t = g.at(id);
    return true;
  }
};

}  // namespace schedlab::kernels::attention
