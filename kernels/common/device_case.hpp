// Pieces every device Case shares: per-set input buffers filled on the device, a
// poisoned output, and the accuracy check against the double reference on sampled rows.
#pragma once
#include <cstdint>
#include <vector>

#include "common/gpu/fill.hpp"
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
