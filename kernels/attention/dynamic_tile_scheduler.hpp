// The dynamic persistent tile schedule (FlashAttention-3's DynamicPersistentTileScheduler is
// the model): one CTA per SM; a CTA's first tile is blockIdx.x and each next one is drawn
// from a global counter by one thread of an otherwise idle producer warp, which hands the id
// to the copying thread and the consumer warps through a ring of kSlots ids in shared memory
// (the copying thread keeps its few registers for the copies); where no producer warp is idle,
// the copying thread draws and hands the ids on itself. The fetcher draws as soon as a
// slot is free, so a CTA holds up to kSlots ids past the tile it is computing: two keep the
// next id ready however late the fetcher runs, one lets the tile go to whichever CTA asks
// first for longer (the balance the hardware's own dispatch of one-tile CTAs has). Causal tiles differ in length by
// up to the number of query blocks; drawing them in longest-first order from one counter keeps
// every SM busy until the last tiles, which a static persistent walk cannot.
// CUDA sm_90 only (mbarriers), like pipeline.hpp.
#pragma once
#include <type_traits>

#include "kernels/attention/pipeline.hpp"
#include "kernels/attention/tile_scheduler.hpp"

namespace schedlab::kernels::attention {

// The ids in flight between the fetching thread and the warps that walk the tiles. `slots`
// reuses the pipeline's barriers: full completes on the fetcher's one arrival (after it wrote
// the id), empty on one arrival per reading warp (after the warp read it).
template <int kSlots>
struct TileQueue {
  int id[kSlots];
  TmaPipeline<kSlots> slots;
  __device__ void init(int reading_warps) { slots.init(reading_warps); }
};

// Who calls next(): the one thread that draws from the counter, a whole warp that reads the
// ids (lane 0 releases the slot), or a thread reading alone (the producer's copying thread,
// whose warp has no other active lane).
enum class TileRole { Fetcher, WarpReader, LoneReader };

template <int kSlots>
struct DynamicTileScheduler {
  const TileGrid& g;  // in kernel-parameter space: read from the constant bank, not held in registers
  TileQueue<kSlots>& queue;
  TileRole role;
  bool first = true;
  PipelineState<kSlots> state;
  static dim3 grid(const TileGrid& g, int sm_count) { return dim3(g.count() < sm_count ? g.count() : sm_count); }
  __device__ DynamicTileScheduler(const TileGrid& grid, TileQueue<kSlots>& q, TileRole r) : g(grid), queue(q), role(r) {}

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

// The scheduler of a schedule; a dynamic one with a ring of kQueueSlots ids.
template <TileSchedule kSchedule, int kQueueSlots>
using TileSchedulerOf =
    std::conditional_t<kSchedule == TileSchedule::Dynamic, DynamicTileScheduler<kQueueSlots>, TileScheduler<kSchedule>>;

}  // namespace schedlab::kernels::attention
