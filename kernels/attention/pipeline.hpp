// A ring of shared-memory stages between producers and consumers, in the shape of CUTLASS's
// pipelines: each stage has a `full` mbarrier (the producers' arrivals, and with bulk copies
// the bytes they land) and an `empty` mbarrier (one arrival per consumer that is done
// reading). A PipelineState walks the ring: index() is the stage, phase() the parity of the
// barrier phase this pass waits for.
//   FullEmptyPipeline: any number of producer arrivals per stage; a producer arrives with
//     producer_commit() after its own writes to the stage (ordinary stores, or a value such
//     as a tile id), or with producer_expect() for bytes that bulk copies will land.
//   TmaPipeline: one producer thread whose bulk copies fill the stage (producer_expect()).
// CUDA sm_90 only (mbarriers with transaction counts). The decode family's CopyPipe still
// waits on its own per-stage barriers; it is the next user of these types. The dynamic tile
// queue (dynamic_tile_scheduler.hpp) is a one-producer FullEmptyPipeline in all but name;
// it keeps TmaPipeline and its own arrive, since producer_commit() there changed the Hopper
// dynamic-schedule kernels' SASS (the arrive's addressing).
#pragma once
#include <cstdint>

#include "common/gpu/device.hpp"
#include "common/gpu/backend/cuda/hopper.hpp"

namespace schedlab::kernels::attention {

template <int kStages>
struct PipelineState {
  static_assert(kStages >= 1, "a ring has at least one stage");
  int stage = 0;
  unsigned parity = 0;
  __device__ int index() const { return stage; }
  __device__ unsigned phase() const { return parity; }
  __device__ PipelineState& operator++() {
    if (++stage == kStages) {
      stage = 0;
      parity ^= 1u;
    }
    return *this;
  }
};

template <int kStages>
struct FullEmptyPipeline {
  std::uint64_t full[kStages];
  std::uint64_t empty[kStages];

  // One thread, before the CTA-wide barrier that precedes any use: a stage is full after
  // `producer_arrivals` arrivals (plus the bytes announced with them), empty after
  // `consumer_arrivals`.
  __device__ void init(int producer_arrivals, int consumer_arrivals) {
    for (int s = 0; s < kStages; ++s) {
      gpu::mbarrier_init(&full[s], producer_arrivals);
      gpu::mbarrier_init(&empty[s], consumer_arrivals);
    }
  }
  // Producer: wait until the consumers have released the stage (a fresh ring starts empty:
  // waiting on the opposite parity of a barrier that never completed returns at once).
  __device__ void producer_acquire(const PipelineState<kStages>& s) { gpu::mbarrier_wait(&empty[s.index()], s.phase() ^ 1u); }
  // Producer: one arrival that announces `bytes` of bulk copies into the stage; returns the
  // barrier they complete.
  __device__ std::uint64_t* producer_expect(const PipelineState<kStages>& s, int bytes) {
    gpu::mbarrier_arrive_expect_tx(&full[s.index()], bytes);
    return &full[s.index()];
  }
  // Producer: one arrival after this thread's own writes to the stage (release: they are
  // visible to the consumers that wait on the stage).
  __device__ void producer_commit(const PipelineState<kStages>& s) { gpu::mbarrier_arrive(&full[s.index()]); }
  // Consumer: wait until the stage is full.
  __device__ void consumer_wait(const PipelineState<kStages>& s) { gpu::mbarrier_wait(&full[s.index()], s.phase()); }
  // Consumer: one arrival (one lane per warp, after the warp's reads of the stage finished).
  __device__ void consumer_release(const PipelineState<kStages>& s) { gpu::mbarrier_arrive(&empty[s.index()]); }
};

// The ring of one bulk-copying producer thread: its single arrival per stage carries the bytes.
template <int kStages>
struct TmaPipeline : FullEmptyPipeline<kStages> {
  __device__ void init(int consumer_arrivals) { FullEmptyPipeline<kStages>::init(1, consumer_arrivals); }
};

}  // namespace schedlab::kernels::attention
