// Device memory a PrefillCase (prefill_case.hpp) holds at its peak, counted on the host from
// the problem, so that a case larger than the device is refused before it allocates anything
// (and so that the count is tested without a GPU). It follows PrefillCase::prepare() buffer
// by buffer (the reference reads host copies); a buffer added there is added here.
#pragma once
#include <cstddef>

#include "common/dtype.hpp"
#include "common/problem.hpp"

namespace schedlab::kernels {

// The output dtype of a prefill problem: the inputs', except bf16 for fp8 inputs.
inline DType prefill_out_dtype(const PrefillProblem& p) { return p.dtype == DType::fp8_e4m3 ? DType::bf16 : p.dtype; }

// Bytes of `input_sets` sets of Q, K and V (with their per-head scales for fp8) and the
// output. In-kernel probe buffers of instrumented builds are the case's to add.
inline std::size_t prefill_case_device_bytes(const PrefillProblem& p, int input_sets) {
  std::size_t per_set = (std::size_t(p.q_elems()) + 2 * std::size_t(p.kv_elems())) * dtype_bytes(p.dtype);
  if (p.dtype == DType::fp8_e4m3) per_set += std::size_t(p.q_heads + 2 * p.kv_heads) * sizeof(float);
  const std::size_t out = std::size_t(p.q_elems()) * dtype_bytes(prefill_out_dtype(p));
  return std::size_t(input_sets) * per_set + out;
}

}  // namespace schedlab::kernels
