#include "common/harness/timeline.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_map>

namespace schedlab::harness {
namespace {

std::vector<CtaSpan> written_of(const std::vector<CtaSpan>& spans, const char* which) {
  std::vector<CtaSpan> out;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const CtaSpan& s = spans[i];
    if (!s.written) continue;
    if (s.end_ns == 0 || s.end_ns < s.start_ns)
      throw std::invalid_argument(std::string("timeline: ") + which + " kernel's CTA " + std::to_string(i) +
                                  " has end " + std::to_string(s.end_ns) + " before its start " +
                                  std::to_string(s.start_ns));
    out.push_back(s);
  }
  return out;
}

// Nearest-rank quantile of sorted values.
double quantile(const std::vector<double>& sorted, double q) {
  const std::size_t i = static_cast<std::size_t>(std::ceil(q * double(sorted.size())));
  return sorted[std::min(sorted.size() - 1, i == 0 ? 0 : i - 1)];
}

// Writes the kernel's counters under `prefix`; returns each SM's last CTA end.
std::unordered_map<std::uint32_t, std::uint64_t> describe(const std::vector<CtaSpan>& spans, std::uint64_t origin,
                                                          const std::string& prefix, std::map<std::string, double>& out) {
  const auto us = [&](std::uint64_t t) { return (double(t) - double(origin)) * 1e-3; };
  std::vector<double> ends, durations;
  double start_last = -INFINITY;
  std::unordered_map<std::uint32_t, std::uint64_t> sm_last_end;
  for (const CtaSpan& s : spans) {
    ends.push_back(us(s.end_ns));
    durations.push_back(double(s.end_ns - s.start_ns) * 1e-3);
    start_last = std::max(start_last, us(s.start_ns));
    auto& e = sm_last_end[s.sm];
    e = std::max(e, s.end_ns);
  }
  std::sort(ends.begin(), ends.end());
  std::sort(durations.begin(), durations.end());
  out[prefix + "ctas"] = double(spans.size());
  out[prefix + "start_last"] = start_last;
  out[prefix + "end_p10"] = quantile(ends, 0.10);
  out[prefix + "end_p50"] = quantile(ends, 0.50);
  out[prefix + "end_p90"] = quantile(ends, 0.90);
  out[prefix + "end"] = ends.back();
  out[prefix + "cta_p50"] = quantile(durations, 0.50);
  out[prefix + "cta_max"] = durations.back();
  out[prefix + "sms"] = double(sm_last_end.size());
  return sm_last_end;
}

}  // namespace

std::map<std::string, double> summarize_timeline(const std::vector<CtaSpan>& first,
                                                 const std::vector<CtaSpan>& second) {
  const std::vector<CtaSpan> a = written_of(first, "first"), b = written_of(second, "second");
  std::map<std::string, double> out;
  if (a.empty()) return out;
  std::uint64_t origin = a.front().start_ns, a_end = 0;
  for (const CtaSpan& s : a) {
    origin = std::min(origin, s.start_ns);
    a_end = std::max(a_end, s.end_ns);
  }
  // Idle tail: each SM's time between its last CTA's end and the kernel's last end.
  const auto sm_last_end = describe(a, origin, "tl_k0_", out);
  double idle = 0;
  for (const auto& [sm, end] : sm_last_end) idle += double(a_end - end);
  const double span = double(a_end - origin);
  out["tl_k0_tail_idle"] = span > 0 ? idle / (span * double(sm_last_end.size())) : 0.0;
  std::uint64_t last = a_end;
  if (!b.empty()) {
    describe(b, origin, "tl_k1_", out);
    std::uint64_t b_start = b.front().start_ns;
    for (const CtaSpan& s : b) {
      b_start = std::min(b_start, s.start_ns);
      last = std::max(last, s.end_ns);
    }
    out["tl_gap"] = (double(b_start) - double(a_end)) * 1e-3;
  }
  out["tl_span"] = (double(last) - double(origin)) * 1e-3;
  return out;
}

void write_timeline_csv(std::ostream& out, const std::vector<CtaSpan>& first, const std::vector<CtaSpan>& second,
                        int launch, bool header) {
  if (header) out << "launch,kernel,cta,sm,start_ns,end_ns\n";
  int kernel = 0;
  for (const std::vector<CtaSpan>* spans : {&first, &second}) {
    for (std::size_t i = 0; i < spans->size(); ++i) {
      const CtaSpan& s = (*spans)[i];
      if (s.written)
        out << launch << ',' << kernel << ',' << i << ',' << s.sm << ',' << s.start_ns << ',' << s.end_ns << '\n';
    }
    ++kernel;
  }
}

}  // namespace schedlab::harness
