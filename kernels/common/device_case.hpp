// Pieces every device Case shares: per-set input buffers filled on the device, a
// poisoned output, and the accuracy check against the double reference on sampled rows.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/gpu/fill.hpp"
#include "common/gpu/probe.hpp"
#include "common/gpu/runtime.hpp"
#include "common/harness/accuracy.hpp"
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

// Rows checked per configuration: enough to catch indexing errors in every tile and
// head, few enough that the double reference stays well under a second.
inline constexpr std::size_t kAccuracyRows = 512;

}  // namespace schedlab::kernels
