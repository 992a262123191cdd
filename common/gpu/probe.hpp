// In-kernel wait-point probes, opt-in at build time (-DSCHEDLAB_STALL_PROBES=ON): each warp
// counts the cycles it spends at explicit wait points (async-copy waits, block barriers) and
// its total cycles, read with the cycle counter; lane 0 adds them to global slots. A memwait
// estimate that needs no profiler. Without the option every call compiles to nothing.
#pragma once
#include <cstdint>

#include "common/gpu/device.hpp"
#include "common/gpu/instruments.hpp"

namespace schedlab::gpu {

class WaitProbe {
 public:
#if SCHEDLAB_STALL_PROBES
  __device__ WaitProbe() : start_(cycle_counter()) {}
  __device__ void before() { mark_ = cycle_counter(); }
  __device__ void after(WaitPoint p) { waited_[static_cast<int>(p)] += cycle_counter() - mark_; }
  __device__ void flush(unsigned long long* slots) const {
    if (slots == nullptr || lane_id() != 0) return;
    for (int p = 0; p < kWaitPoints; ++p) atomicAdd(slots + p, static_cast<unsigned long long>(waited_[p]));
    atomicAdd(slots + kWaitPoints, static_cast<unsigned long long>(cycle_counter() - start_));
  }

 private:
  std::uint64_t start_, mark_ = 0, waited_[kWaitPoints] = {};
#else
  __device__ void before() {}
  __device__ void after(WaitPoint) {}
  __device__ void flush(unsigned long long*) const {}
#endif
};

}  // namespace schedlab::gpu
