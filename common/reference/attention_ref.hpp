// Double-precision attention references for the accuracy gate. They read the same stored
// buffers the kernels read (problem layout and dtype, decoded exactly; fp8 K/V times its
// KV head's scale), so the only difference left to measure is the kernel's own arithmetic.
// They compute selected query rows only: a benchmark checks a sample, a test may ask for all.
//
// Semantics: softmax(scale * q K^T) V over the keys the masks of problem.hpp leave visible,
// with query head h reading KV head h / group_size (GQA). A row that sees no key (causal with
// q_len > kv_len leaves the first q_len - kv_len rows empty) outputs zeros, as FlashAttention
// kernels do when the running row sum stays 0.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/problem.hpp"

namespace schedlab {

struct QueryRow {
  int batch, head, pos;  // decode: pos is ignored (all_rows fills in context_len - 1)
};

// Outputs rows.size() * head_dim values, row-major, in the order of rows. Throws
// InvalidProblem for an invalid problem and std::out_of_range for a row outside it.
// Dequantization scales of fp8 inputs (a stored value is byte * scale): per query head (q) and
// per KV head (k, v). Empty lists mean 1.
struct QkvScales {
  std::vector<double> q, k, v;
};
std::vector<double> prefill_reference(const PrefillProblem& problem, const void* q, const void* k, const void* v,
                                      const std::vector<QueryRow>& rows, const QkvScales& scales = {});
std::vector<double> decode_reference(const DecodeProblem& problem, const void* q, const void* k_pool,
                                     const void* v_pool, const std::vector<QueryRow>& rows);

// Every query row in the order of the output layout, so the reference of all_rows is
// directly comparable with the whole O buffer.
std::vector<QueryRow> all_rows(const PrefillProblem& problem);
std::vector<QueryRow> all_rows(const DecodeProblem& problem);

// At most max_rows distinct rows, deterministic from seed, in output-layout order. Always
// includes the first and last query row of the problem and (prefill) rows around the start
// of the causal diagonal and of the window, where masking bugs live; the rest are uniform.
// All rows when the problem has no more than max_rows.
std::vector<QueryRow> sample_rows(const PrefillProblem& problem, std::size_t max_rows, std::uint64_t seed);
std::vector<QueryRow> sample_rows(const DecodeProblem& problem, std::size_t max_rows, std::uint64_t seed);

// Decode rows covering every sequence: on each, all query heads of some KV heads (picked
// from seed, at least one), as many KV heads as keep the keys the reference reads (each
// sequence's visible keys once per KV head) within max_keys. In output-layout order.
std::vector<QueryRow> rows_of_every_sequence(const DecodeProblem& problem, std::int64_t max_keys, std::uint64_t seed);
// How many KV heads of each sequence those rows cover (the same for every seed).
int checked_kv_heads(const DecodeProblem& problem, std::int64_t max_keys);

// body(0) .. body(n - 1) on every core; the first exception is rethrown after all finish.
void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body);

}  // namespace schedlab
