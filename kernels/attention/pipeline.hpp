// A ring of shared-memory stages filled by bulk copies and drained by consumers, in the
// shape of CUTLASS's TMA pipeline: each stage has a `full` mbarrier (the producer's one
// arrival plus the bytes its copies land) and an `empty` mbarrier (one arrival per consumer
// warp that is done reading). A PipelineState walks the ring: index() is the stage, phase()
// the parity of the barrier phase this pass waits for.
// CUDA sm_90 only (mbarriers with transaction counts). The decode family's CopyPipe still
// waits on its own per-stage barriers; it is the next user of this type.
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
struct TmaPipeline {
  std::uint64_t full[kStages];
  std::uint64_t empty[kStages];

  // One thread, before the CTA-wide barrier that precedes any use.
  __device__ void init(int consumer_arrivals) {
    for (int s = 0; s < kStages; ++s) {
      gpu::mbarrier_init(&full[s], 1);
      gpu::mbarrier_init(&empty[s], consumer_arrivals);
    }
  }
  // Producer: wait until the consumers have released the stage (a fresh ring starts empty:
  // waiting on the opposite parity of a barrier that never completed returns at once).
  __device__ void producer_acquire(const PipelineState<kStages>& s) { gpu::mbarrier_wait(&empty[s.index()], s.phase() ^ 1u); }
  // Producer: announce `bytes` of copies into the stage; returns the barrier they complete.
  __device__ std::uint64_t* producer_expect(const PipelineState<kStages>& s, int bytes) {
    gpu::mbarrier_arrive_expect_tx(&full[s.index()], bytes);
    return &full[s.index()];
  }
  // Consumer: wait until the stage's bytes have landed.
  __device__ void consumer_wait(const PipelineState<kStages>& s) { gpu::mbarrier_wait(&full[s.index()], s.phase()); }
  // Consumer: one arrival (one lane per warp, after the warp's reads of the stage finished).
  __device__ void consumer_release(const PipelineState<kStages>& s) { gpu::mbarrier_arrive(&empty[s.index()]); }
};

}  // namespace schedlab::kernels::attention
