// Problem descriptions for the two kernel families, with validate() that names the field
// a malformed problem gets wrong. Layouts (row-major, innermost last):
//   prefill  Q [batch, q_len, q_heads, head_dim], K/V [batch, kv_len, kv_heads, head_dim],
//            O like Q. A ragged batch (`lengths`) packs its sequences one after another:
//            Q/O [total tokens, q_heads, head_dim], K/V [total tokens, kv_heads, head_dim]
//            (the uniform layout is that packing with every length the same).
//   decode   Q [batch, q_heads, head_dim]; K/V pool [num_pages, kv_heads, page_size, head_dim]
//            (a page of one head is contiguous); block_table [batch, max_pages_per_seq] of
//            int32 page ids; O [batch, q_heads, head_dim] in the query dtype.
// Masks: a query at position i (keys aligned to the end of the KV sequence, offset
// kv_len - q_len) sees key j when j <= i + offset (causal) and j > i + offset - window
// (window > 0). Decode queries sit at position context_len - 1.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/dtype.hpp"

namespace schedlab {

class InvalidProblem : public std::invalid_argument {
 public:
  InvalidProblem(std::string field, const std::string& why)
      : std::invalid_argument("invalid problem: " + field + ": " + why), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// A well-formed problem outside what one kernel supports (a head dim it has no tile
// for, a dtype it does not read): that combination is skipped with this reason.
class UnsupportedProblem : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a kernel accepts; validate() rejects anything outside it. Empty lists accept all.
struct KernelSupport {
  // "= {}" lets a kernel write KernelSupport{.dtypes = {...}} without -Wextra's
  // missing-field-initializers warning for the lists it leaves out.
  std::vector<int> head_dims = {};
  std::vector<DType> dtypes = {};      // prefill Q/K/V dtype, or decode KV dtype
  std::vector<int> page_sizes = {};    // decode only
  bool sliding_window = true;
  bool causal = true;
  bool ragged = true;  // prefill: takes a batch of sequences of different lengths (`lengths`)
};

inline constexpr int kNoWindow = 0;

// Keys [begin, end) one query sees; empty when end <= begin.
struct KeyRange {
  int begin = 0, end = 0;
  int size() const { return end > begin ? end - begin : 0; }
};

struct PrefillProblem {
  int batch = 1, q_heads = 16, kv_heads = 16, q_len = 1024, kv_len = 1024, head_dim = 128;
  bool causal = false;
  int window = kNoWindow;  // > 0: keys further than window-1 positions back are masked
  DType dtype = DType::bf16;
  float softmax_scale = 0.f;  // 0: 1/sqrt(head_dim)
  // A ragged batch (as a serving engine's prefill batch is): sequence b has lengths[b] queries
  // and as many keys, packed after sequence b - 1. Empty: every sequence has q_len queries and
  // kv_len keys. Given, it has `batch` entries and q_len = kv_len = the longest (make_ragged).
  std::vector<int> lengths;

  void validate(const KernelSupport& support = {}) const;
  float scale() const;
  int group_size() const { return q_heads / kv_heads; }
  bool ragged() const { return !lengths.empty(); }
  int seq_q_len(int seq) const { return ragged() ? lengths[std::size_t(seq)] : q_len; }
  int seq_kv_len(int seq) const { return ragged() ? lengths[std::size_t(seq)] : kv_len; }
  // Sequence seq's first row in the packed Q / O and K / V; q_start(batch) is every query.
  std::int64_t q_start(int seq) const;
  std::int64_t kv_start(int seq) const;
  std::int64_t q_elems() const { return q_start(batch) * q_heads * head_dim; }
  std::int64_t kv_elems() const { return kv_start(batch) * kv_heads * head_dim; }
  // Matrix FLOPs the FlashAttention papers count: 4 * q_len * kv_len * head_dim * heads * batch,
  // halved for causal (square case); masked-out blocks are not counted as work. Counted
  // exactly as 4 * head_dim * heads * batch per visible (query, key) pair, so the causal
  // square case is n(n+1)/2 pairs: the papers' n^2/2 plus half the diagonal.
  double flops() const;
  // Fewest bytes: Q, K, V read once, O written once.
  double min_bytes() const;
  // Keys the query at position q_pos of sequence seq sees under the causal and window masks.
  // Empty for the first q_len - kv_len queries of a causal problem with q_len > kv_len.
  KeyRange visible_keys(int q_pos, int seq = 0) const;
};

// A ragged prefill problem of `lengths` (batch, q_len and kv_len follow from them).
PrefillProblem make_ragged_prefill(std::vector<int> lengths, int q_heads, int kv_heads, int head_dim, bool causal,
                                   DType dtype);

struct DecodeProblem {
  int batch = 1, q_heads = 32, kv_heads = 8, head_dim = 128, page_size = 16;
  int num_pages = 0;                 // pages in the pool (block-table entries index it)
  int max_pages_per_seq = 0;         // block-table row length
  std::vector<int> context_lens;     // one per sequence, ragged
  std::vector<int> block_table;      // batch * max_pages_per_seq page ids
  DType q_dtype = DType::bf16;
  DType kv_dtype = DType::bf16;
  std::vector<float> k_scale, v_scale;  // per KV head, fp8 only (dequantized value = byte * scale)
  int window = kNoWindow;
  float softmax_scale = 0.f;

  void validate(const KernelSupport& support = {}) const;
  float scale() const;
  int group_size() const { return q_heads / kv_heads; }
  std::int64_t total_context() const;
  std::int64_t pool_elems() const { return std::int64_t(num_pages) * kv_heads * page_size * head_dim; }
  // Element offset of (page, head, slot, 0) in the pool; 64-bit: a pool can pass 4 GiB.
  std::int64_t pool_offset(std::int64_t page, int head, int slot) const {
    return ((page * kv_heads + head) * page_size + slot) * std::int64_t(head_dim);
  }
  // 4 * group * head_dim per key per KV head (QK and PV), over the keys each query sees.
  double flops() const;
  // K + V bytes of the keys each sequence sees, plus Q and O once (the decode family's count).
  double min_bytes() const;
  int first_visible_key(int seq) const;  // window start for sequence seq
  KeyRange visible_keys(int seq) const { return {first_visible_key(seq), context_lens.at(seq)}; }
};

// A decode problem whose block table is a random permutation of the pool's pages
// (non-contiguous, as a real paged cache is). Extra pages beyond the needed ones stay in
// the pool unused when spare_pages > 0.
DecodeProblem make_decode_problem(int batch, int q_heads, int kv_heads, int head_dim, int page_size,
                                  std::vector<int> context_lens, DType kv_dtype, std::uint64_t seed,
                                  int spare_pages = 0, int window = kNoWindow);

// Structural checks first (InvalidProblem propagates: the experiment itself is wrong),
// then the kernel's limits (UnsupportedProblem: the harness skips with the reason).
template <class Problem>
void require_support(const Problem& p, const KernelSupport& support) {
  p.validate();
  try {
    p.validate(support);
  } catch (const InvalidProblem& e) {
    throw UnsupportedProblem(e.what());
  }
}

}  // namespace schedlab
