// A ring of shared-memory stages between producers and consumers, in the shape of CUTLASS's
// pipelines: each stage has a `full` barrier (the producers' arrivals, and with bulk copies
// the bytes they land) and an `empty` barrier (one arrival per consumer that is done
// reading). A PipelineState walks the ring: index() is the stage, phase() the parity of the
// barrier phase this pass waits for.
//   FullPipeline: the `full` half alone, for a ring whose producer and consumer are the same
//     threads (the decode warp body's own K/V stages: a warp refills a stage after its own
//     reads of it, in program order, so nothing needs to say the stage is empty).
//   FullEmptyPipeline: any number of producer arrivals per stage; a producer arrives with
//     producer_commit() after its own writes to the stage (ordinary stores, or a value such
//     as a tile id), or with producer_expect() for bytes that bulk copies will land.
//   TmaPipeline: one producer thread whose bulk copies fill the stage (producer_expect()).
//   NamedBarrierPipeline: full and empty as named barriers (bar.sync / bar.arrive) over the
//     producer and consumer threads together, for stages filled by ordinary stores (the
//     decode warpgroup body's converting warps). A named barrier has no phase: each pass
//     over the ring is one use, so the producers skip the empty wait of their first pass and
//     the consumers skip the releases no producer will wait for.
// The mbarrier rings are CUDA sm_90 only (the HIP backend's mbarrier wrappers trap; its
// kernels test gpu::kHasBulkCopy first); NamedBarrierPipeline needs the CUDA backend's named
// barriers. The dynamic tile queue (dynamic_tile_scheduler.hpp) is a one-producer
// FullEmptyPipeline in all but name; it keeps TmaPipeline and its own arrive, since
// producer_commit() there changed the Hopper dynamic-schedule kernels' SASS (the arrive's
// addressing).
#pragma once
#include <cstdint>

#include "common/gpu/device.hpp"
#if !defined(__HIP_PLATFORM_AMD__)
#include "common/gpu/backend/cuda/hopper.hpp"
#endif

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

// The state `passes` (at most kStages) steps past `state`: the stage a producer will reach
// then, for a wait on it ahead of time.
template <int kStages>
__device__ PipelineState<kStages> ahead(PipelineState<kStages> state, int passes) {
  state.stage += passes;
  if (state.stage >= kStages) {
    state.stage -= kStages;
    state.parity ^= 1u;
  }
  return state;
}

template <int kStages>
struct FullPipeline {
  std::uint64_t full[kStages];

  // One thread, before the barrier that precedes any use: a stage is full after
  // `producer_arrivals` arrivals (plus the bytes announced with them).
  __device__ void init_full(int producer_arrivals) {
    for (int s = 0; s < kStages; ++s) gpu::mbarrier_init(&full[s], producer_arrivals);
  }
  // Producer: one arrival that announces `bytes` of bulk copies into the stage; returns the
  // barrier they complete.
  __device__ std::uint64_t* producer_expect(const PipelineState<kStages>& s, int bytes) {
    gpu::mbarrier_arrive_expect_tx(&full[s.index()], bytes);
    return &full[s.index()];
  }
  // Consumer: wait until the stage is full.
  __device__ void consumer_wait(const PipelineState<kStages>& s) { gpu::mbarrier_wait(&full[s.index()], s.phase()); }
};

#if !defined(__HIP_PLATFORM_AMD__)
// Its own arrays rather than FullPipeline's plus `empty`: derived from FullPipeline, nvcc
// addressed the Hopper fp8 kernels' V^T ring differently (scripts/sass_diff.py).
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
  // The same for a whole warp, which leaves the wait together (gpu::mbarrier_wait_warp).
  __device__ void consumer_wait_warp(const PipelineState<kStages>& s) { gpu::mbarrier_wait_warp(&full[s.index()], s.phase()); }
  // Consumer: one arrival (one lane per warp, after the warp's reads of the stage finished).
  __device__ void consumer_release(const PipelineState<kStages>& s) { gpu::mbarrier_arrive(&empty[s.index()]); }
};

// The ring of one bulk-copying producer thread: its single arrival per stage carries the bytes.
template <int kStages>
struct TmaPipeline : FullEmptyPipeline<kStages> {
  __device__ void init(int consumer_arrivals) { FullEmptyPipeline<kStages>::init(1, consumer_arrivals); }
};

// Stage b's barriers are named barriers kFirstId + b (full) and kFirstId + kStages + b
// (empty), each over kThreads threads: every producer and consumer thread of the ring. Steps
// are numbered from 0; step i uses stage i % kStages (a PipelineState's index, without the
// phase a named barrier does not have).
template <int kStages, int kFirstId, int kThreads>
struct NamedBarrierPipeline {
  static_assert(kStages >= 1 && kFirstId >= 1 && kFirstId + 2 * kStages <= 16,
                "named barriers 1..15 (0 is the CTA barrier)");
  static_assert(kThreads % 32 == 0, "named barriers count whole warps");
  static constexpr int kFull = kFirstId, kEmpty = kFirstId + kStages;
  // Producer: before writing step i, wait until the consumers released its stage (the first
  // pass over the ring finds every stage empty).
  static __device__ void producer_acquire(int i) {
    if (i >= kStages) gpu::named_barrier_sync(kEmpty + i % kStages, kThreads);
  }
  // Producer: step i is written (and fenced for its readers); arrive without waiting.
  static __device__ void producer_commit(int i) { gpu::named_barrier_arrive(kFull + i % kStages, kThreads); }
  // Consumer: wait until step i is written.
  static __device__ void consumer_wait(int i) { gpu::named_barrier_sync(kFull + i % kStages, kThreads); }
  // Consumer: done reading step i of `steps`; only a stage a producer refills is released.
  static __device__ void consumer_release(int i, int steps) {
    if (i + kStages < steps) gpu::named_barrier_arrive(kEmpty + i % kStages, kThreads);
  }
};
#endif  // !__HIP_PLATFORM_AMD__

}  // namespace schedlab::kernels::attention
