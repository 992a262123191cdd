// Device memory a DecodeCase (decode_case.hpp) holds at its peak, counted on the host from
// the problem and the plan, so that a case larger than the device is refused before it
// allocates anything (and so that the count is tested without a GPU). It follows
// DecodeCase::prepare() and reference() buffer by buffer; a buffer added there is added here.
#pragma once
#include <cstddef>
#include <cstdint>

#include "common/dtype.hpp"
#include "common/problem.hpp"
#include "common/reference/attention_ref.hpp"
#include "kernels/decode/paged_decode.hpp"

namespace schedlab::kernels {

// Keys the reference reads per check (each checked sequence's visible keys once per KV
// head): every sequence always, as many KV heads of each as fit (all 8 at batch 16, 16k;
// 4 at batch 64, 16k; 1 at batch 64, 64k).
inline constexpr std::int64_t kDecodeReferenceKeys = std::int64_t(1) << 22;

// Bytes of `input_sets` sets of Q and the K and V pools, the launch's own buffers, and the
// gate's gathered pages. In-kernel probe and timeline buffers of instrumented builds are the
// case's to add.
inline std::size_t decode_case_device_bytes(const DecodeProblem& p, const DecodePlan& plan, int input_sets) {
  const std::size_t q_bytes = std::size_t(p.batch) * p.q_heads * p.head_dim * dtype_bytes(p.q_dtype);
  const std::size_t pool_bytes = std::size_t(p.pool_elems()) * dtype_bytes(p.kv_dtype);
  const std::size_t per_set = q_bytes + 2 * pool_bytes;  // Q, K pool, V pool

  std::size_t launch = q_bytes;  // the output, in Q's dtype
  launch += p.block_table.size() * sizeof(int) + p.context_lens.size() * sizeof(int);
  if (p.kv_dtype == DType::fp8_e4m3) launch += (p.k_scale.size() + p.v_scale.size()) * sizeof(float);
  if (plan.needs_partials()) {
    const std::size_t slots = std::size_t(p.batch) * p.q_heads * plan.num_splits;
    launch += slots * p.head_dim * sizeof(float) + slots * sizeof(float);  // partial O, partial LSE
  }
  if (plan.needs_schedule()) launch += std::size_t(decode_schedule_ints(p)) * sizeof(int);
  if (plan.balanced()) launch += plan.work.device_words().size() * sizeof(int);

  // The gate gathers every page of each checked (sequence, KV head), K then V (one copy at a
  // time), with one 8-byte offset per page.
  std::size_t pages = 0;
  for (int b = 0; b < p.batch; ++b) pages += std::size_t(p.context_lens.at(b) + p.page_size - 1) / p.page_size;
  pages *= std::size_t(checked_kv_heads(p, kDecodeReferenceKeys));
  const std::size_t page_bytes = std::size_t(p.page_size) * p.head_dim * dtype_bytes(p.kv_dtype);
  const std::size_t gathered = pages * (page_bytes + sizeof(std::int64_t));

  return std::size_t(input_sets) * per_set + launch + gathered;
}

}  // namespace schedlab::kernels
