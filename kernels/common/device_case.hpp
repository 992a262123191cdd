// Pieces every device Case shares: per-set input buffers filled on the device, a
// poisoned output, and the rows of the output the accuracy gate compares. Host code (no
// kernel here), so that benchmark and test sources compile with the host compiler.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/gpu/fill.hpp"
#include "common/gpu/instruments.hpp"
#include "common/gpu/runtime.hpp"
#include "common/harness/accuracy.hpp"
#include "common/harness/timeline.hpp"
#include "common/numeric.hpp"
#include "common/reference/attention_ref.hpp"

namespace schedlab::kernels {

// Raw bytes of one buffer in a given dtype.
struct DeviceTensor {
  DType dtype = DType::bf16;
  std::size_t elems = 0;
  gpu::DeviceBuffer<unsigned char> buf;

  DeviceTensor() = default;
  DeviceTensor(DType t, std::size_t n) : dtype(t), elems(n), buf(n * dtype_bytes(t)) {}
  void* data() const { return buf.data(); }
  void fill(std::uint64_t seed, float stddev = 1.f) { gpu::fill_normal(dtype, buf.data(), elems, seed, stddev, nullptr); }
  void poison() { gpu::poison(buf.data(), buf.bytes(), nullptr); }
  std::vector<unsigned char> download() const { return buf.download(); }
};

// The global counters of the in-kernel wait probes (gpu::WaitProbe), when built in: a null
// pointer otherwise, which the kernels skip. counters() is each wait point's share of all
// warp cycles over every launch so far.
class ProbeSlots {
 public:
  static constexpr std::size_t kBytes = gpu::kStallProbes ? gpu::kProbeSlots * sizeof(unsigned long long) : 0;
  void allocate() {
    if (!gpu::kStallProbes) return;
    slots_ = gpu::DeviceBuffer<unsigned long long>(gpu::kProbeSlots);
    SCHEDLAB_GPU_CHECK(gpu::api::memset_async(slots_.data(), 0, slots_.bytes(), nullptr));
  }
  unsigned long long* data() const { return slots_.data(); }
  std::map<std::string, double> counters() const {
    if (slots_.size() == 0) return {};
    const auto v = slots_.download();
    const double total = static_cast<double>(v[gpu::kWaitPoints]);
    std::map<std::string, double> out{{"probe_total_cycles", total}};
    for (int p = 0; p < gpu::kWaitPoints; ++p)
      out[std::string("probe_wait_") + gpu::kWaitPointNames[p]] = total > 0 ? v[p] / total : 0.0;
    return out;
  }

 private:
  gpu::DeviceBuffer<unsigned long long> slots_;
};

// The per-CTA spans of a timeline build (gpu::CtaTimeline), a null pointer otherwise. reset()
// before each launch, so that counters() summarizes the last one (harness::summarize_timeline).
class CtaTimelineBuffer {
 public:
  static constexpr std::size_t kSpans = std::size_t(harness::kTimelineKernels) * harness::kTimelineCapacity;
  static constexpr std::size_t kBytes = gpu::kCtaTimeline ? kSpans * sizeof(harness::CtaSpan) : 0;
  void allocate() {
    if (!gpu::kCtaTimeline) return;
    spans_ = gpu::DeviceBuffer<harness::CtaSpan>(kSpans);
    reset();
  }
  void reset() {
    if (spans_.size() == 0) return;
    SCHEDLAB_GPU_CHECK(gpu::api::memset_async(spans_.data(), 0, spans_.bytes(), nullptr));
  }
  harness::CtaSpan* data() const { return spans_.data(); }
  // With SCHEDLAB_TIMELINE_CSV set, the spans are appended to that file too (one launch per
  // call, numbered within the process), for which-SM-ran-which-CTA questions.
  std::map<std::string, double> counters() const {
    if (spans_.size() == 0) return {};
    const std::vector<harness::CtaSpan> all = spans_.download();
    const auto half = all.begin() + harness::kTimelineCapacity;
    const std::vector<harness::CtaSpan> first(all.begin(), half), second(half, all.end());
    if (const char* path = std::getenv(harness::kTimelineCsvEnv); path && *path) {
      static int launch = 0;
      const bool fresh = !std::ifstream(path).good();
      std::ofstream out(path, std::ios::app);
      if (!out) throw std::runtime_error(std::string("cannot append the CTA timeline to ") + path);
      harness::write_timeline_csv(out, first, second, launch++, fresh);
    }
    return harness::summarize_timeline(first, second);
  }

 private:
  gpu::DeviceBuffer<harness::CtaSpan> spans_;
};

// Output rows (head_dim contiguous values each, at `row_offset(row)` elements) as float.
template <class RowOffset>
std::vector<float> gather_rows(const std::vector<unsigned char>& raw, DType t, const std::vector<QueryRow>& rows,
                               int head_dim, RowOffset row_offset) {
  std::vector<float> out;
  out.reserve(rows.size() * head_dim);
  for (const QueryRow& r : rows) {
    const std::size_t base = row_offset(r);
    for (int d = 0; d < head_dim; ++d) out.push_back(load_as_float(t, raw.data(), base + d));
  }
  return out;
}

// FNV-1a over the bytes of trivially copyable values, for input keys (harness::Case::input_key).
class KeyHash {
 public:
  template <class T>
  KeyHash& add(const std::vector<T>& v) {
    bytes(v.data(), v.size() * sizeof(T));
    return add(v.size());
  }
  template <class T>
  KeyHash& add(const T& x) {
    bytes(&x, sizeof x);
    return *this;
  }
  std::string hex() const {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
    return buf;
  }

 private:
  void bytes(const void* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) h_ = (h_ ^ static_cast<const unsigned char*>(p)[i]) * 0x100000001b3ull;
  }
  std::uint64_t h_ = 0xcbf29ce484222325ull;
};

// Prefill rows checked per configuration: enough to catch indexing errors in every tile and
// head, few enough that the double reference stays well under a second.
inline constexpr std::size_t kAccuracyRows = 512;

}  // namespace schedlab::kernels
