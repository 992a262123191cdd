// Which in-kernel instruments this build compiles in, and the host side's view of their
// buffers: the wait-point probes (probe.hpp, -DSCHEDLAB_STALL_PROBES=ON) and the per-CTA
// timeline (timeline.hpp, -DSCHEDLAB_CTA_TIMELINE=ON). Host code, so that the code which sizes
// and reads those buffers compiles without the device layer.
#pragma once

#ifndef SCHEDLAB_STALL_PROBES
#define SCHEDLAB_STALL_PROBES 0
#endif
#ifndef SCHEDLAB_CTA_TIMELINE
#define SCHEDLAB_CTA_TIMELINE 0
#endif

namespace schedlab::gpu {

enum class WaitPoint : int { AsyncCopy = 0, BlockBarrier = 1 };
inline constexpr int kWaitPoints = 2;
inline constexpr int kProbeSlots = kWaitPoints + 1;  // the wait points, then total cycles
inline constexpr bool kStallProbes = SCHEDLAB_STALL_PROBES != 0;
inline constexpr const char* kWaitPointNames[kWaitPoints] = {"async_copy", "block_barrier"};

inline constexpr bool kCtaTimeline = SCHEDLAB_CTA_TIMELINE != 0;

}  // namespace schedlab::gpu
