// Per-CTA timelines: when each CTA of a launch started and ended, and on which SM (CU), as
// the kernels record them in a build with -DSCHEDLAB_CTA_TIMELINE=ON (common/gpu/timeline.hpp),
// and their summary as record counters. Host code: the summary is tested on the CPU.
#pragma once
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace schedlab::harness {

// One CTA of one launch. end_ns == 0: the slot was not written (no such CTA, or it did not
// finish). Times are the device's shared nanosecond clock.
struct CtaSpan {
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint32_t sm = 0;
  std::uint32_t written = 0;  // 1 once thread 0 stored start_ns and sm
};
static_assert(sizeof(CtaSpan) == 24, "the device writes this layout");

// Spans a recording kernel may write: kernel k's CTA b goes to slot k * kTimelineCapacity + b.
inline constexpr int kTimelineCapacity = 1 << 18;
inline constexpr int kTimelineKernels = 2;  // the main kernel, then the one launched after it

// Counters (microseconds from the first CTA start of the first kernel) of one launch's spans:
// for the first kernel ("tl_k0_*") and, where it ran, the second ("tl_k1_*"):
//   ctas, start_last (the last CTA to start: waves), end_p10 / end_p50 / end_p90 / end (CTA
//   ends), cta_p50 / cta_max (CTA durations), sms (SMs that ran one);
// tl_k0_tail_idle: the share of (SMs x the first kernel's span) in which an SM that ran some
// of its CTAs had none left to run, i.e. finished its last before the kernel's last CTA ended;
// tl_gap: the second kernel's first CTA start minus the first kernel's last CTA end (negative
// when they overlap); tl_span: the last end of either.
// Unwritten slots are skipped. Throws std::invalid_argument on a written span with no end or
// an end before its start (a CTA that did not finish, or a torn record).
std::map<std::string, double> summarize_timeline(const std::vector<CtaSpan>& first,
                                                 const std::vector<CtaSpan>& second);

// The written spans themselves, for where the counters are not enough (which SM ran which CTA):
// one CSV row each, `launch,kernel,cta,sm,start_ns,end_ns` (kernel 0 the first, 1 the second;
// cta the slot, i.e. the CTA's index in its grid), with the header when `header` is set.
void write_timeline_csv(std::ostream& out, const std::vector<CtaSpan>& first, const std::vector<CtaSpan>& second,
                        int launch, bool header);
// Where the timeline build appends every summarized launch's spans: the file the environment
// variable SCHEDLAB_TIMELINE_CSV names (nothing when it is unset or empty).
inline constexpr const char* kTimelineCsvEnv = "SCHEDLAB_TIMELINE_CSV";

}  // namespace schedlab::harness
