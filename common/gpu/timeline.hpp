// Per-CTA start and end times, opt-in at build time (-DSCHEDLAB_CTA_TIMELINE=ON): thread 0
// stores the CTA's start (the shared nanosecond clock at kernel entry) and its SM; each warp's
// lane 0 raises the end to its own exit time, so the end is the last warp's. Without the option
// the record macro compiles to nothing, and kernels keep their machine code. The host reads the spans
// back and summarizes them (common/harness/timeline.hpp).
#pragma once
#include <cstdint>

#include "common/gpu/device.hpp"
#include "common/gpu/instruments.hpp"
#include "common/harness/timeline.hpp"

namespace schedlab::gpu {

// Records at construction (start, SM) and at destruction (end), so every return path of a
// kernel counts: declare it first in the kernel, through SCHEDLAB_CTA_TIMELINE_RECORD.
class CtaTimeline {
 public:
  // Kernel `kernel` (0 or 1) of the recorded pair; spans may be null (nothing recorded).
  __device__ CtaTimeline(harness::CtaSpan* spans, int kernel) : start_(global_ns()) {
    const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    span_ = spans == nullptr || block >= unsigned(harness::kTimelineCapacity)
                ? nullptr
                : spans + std::size_t(kernel) * harness::kTimelineCapacity + block;
  }
  __device__ ~CtaTimeline() {
    if (span_ == nullptr) return;
    if (threadIdx.x == 0) {
      span_->start_ns = start_;
      span_->sm = sm_id();
      span_->written = 1;
    }
    if (lane_id() == 0)
      atomicMax(reinterpret_cast<unsigned long long*>(&span_->end_ns), static_cast<unsigned long long>(global_ns()));
  }
  CtaTimeline(const CtaTimeline&) = delete;
  CtaTimeline& operator=(const CtaTimeline&) = delete;

 private:
  std::uint64_t start_;
  harness::CtaSpan* span_;
};

// The argument (a kernel parameter that exists only in a timeline build) is not compiled
// without the option.
#if SCHEDLAB_CTA_TIMELINE
#define SCHEDLAB_CTA_TIMELINE_RECORD(spans, kernel) \
  const ::schedlab::gpu::CtaTimeline schedlab_cta_timeline_((spans), (kernel))
#else
#define SCHEDLAB_CTA_TIMELINE_RECORD(spans, kernel) static_cast<void>(0)
#endif

}  // namespace schedlab::gpu
