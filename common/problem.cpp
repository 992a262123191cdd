// Validation names the member a malformed problem gets wrong, so that a benchmark can
// report "skipped: head_dim ..." instead of launching a kernel on nonsense. Checks run in
// dependency order: sizes first, since later checks index with them.
#include "common/problem.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>

namespace schedlab {
namespace {

// Tensor cores and 16-byte vector loads need head_dim in whole 8-element chunks
// (16 bytes of bf16/f16), whatever a kernel's own list says.
constexpr int kHeadDimMultiple = 8;

void require_positive(int value, const char* field) {
  if (value <= 0) throw InvalidProblem(field, "must be positive, got " + std::to_string(value));
}

template <typename T>
bool supported(const std::vector<T>& accepted, const T& value) {
  return accepted.empty() || std::find(accepted.begin(), accepted.end(), value) != accepted.end();
}

void check_heads(int q_heads, int kv_heads) {
  require_positive(q_heads, "q_heads");
  require_positive(kv_heads, "kv_heads");
  if (q_heads % kv_heads != 0) {
    throw InvalidProblem("q_heads", std::to_string(q_heads) + " is not a multiple of kv_heads " +
                                        std::to_string(kv_heads));
  }
}

void check_head_dim(int head_dim, const KernelSupport& support) {
  require_positive(head_dim, "head_dim");
  if (head_dim % kHeadDimMultiple != 0) {
    throw InvalidProblem("head_dim", std::to_string(head_dim) + " is not a multiple of " +
                                         std::to_string(kHeadDimMultiple));
  }
  if (!supported(support.head_dims, head_dim)) {
    throw InvalidProblem("head_dim", std::to_string(head_dim) + " is not supported by this kernel");
  }
}

void check_dtype(DType t, const KernelSupport& support, const char* field) {
  if (!supported(support.dtypes, t)) {
    throw InvalidProblem(field, std::string(dtype_name(t)) + " is not supported by this kernel");
  }
}

void check_window(int window, const KernelSupport& support) {
  if (window < 0) throw InvalidProblem("window", "must be >= 0 (0: no window), got " + std::to_string(window));
  if (window > 0 && !support.sliding_window) {
    throw InvalidProblem("window", "this kernel has no sliding window");
  }
}

void check_softmax_scale(float softmax_scale) {
  if (!std::isfinite(softmax_scale) || softmax_scale < 0.f) {
    throw InvalidProblem("softmax_scale", "must be finite and >= 0 (0: 1/sqrt(head_dim)), got " +
                                              std::to_string(softmax_scale));
  }
}

float effective_scale(float softmax_scale, int head_dim) {
  return softmax_scale > 0.f ? softmax_scale : 1.f / std::sqrt(float(head_dim));
}

int pages_for(int context_len, int page_size) { return (context_len + page_size - 1) / page_size; }

void check_context_lens(const std::vector<int>& context_lens, int batch) {
  if (context_lens.size() != std::size_t(batch)) {
    throw InvalidProblem("context_lens", "has " + std::to_string(context_lens.size()) +
                                             " entries for batch " + std::to_string(batch));
  }
  for (std::size_t s = 0; s < context_lens.size(); ++s) {
    if (context_lens[s] < 1) {
      throw InvalidProblem("context_lens", "sequence " + std::to_string(s) + " has length " +
                                               std::to_string(context_lens[s]) + " (must be >= 1)");
    }
  }
}

void check_scales(const std::vector<float>& scales, DType kv_dtype, int kv_heads, const char* field) {
  if (kv_dtype != DType::fp8_e4m3) {
    if (!scales.empty()) {
      throw InvalidProblem(field, "given for " + std::string(dtype_name(kv_dtype)) +
                                      " KV; scales apply to fp8 only");
    }
    return;
  }
  if (scales.size() != std::size_t(kv_heads)) {
    throw InvalidProblem(field, "fp8 KV needs one scale per KV head (" + std::to_string(kv_heads) +
                                    "), got " + std::to_string(scales.size()));
  }
  for (std::size_t h = 0; h < scales.size(); ++h) {
    if (!std::isfinite(scales[h]) || scales[h] <= 0.f) {
      throw InvalidProblem(field, "scale of KV head " + std::to_string(h) + " is " +
                                      std::to_string(scales[h]) + " (must be finite and > 0)");
    }
  }
}

// The lengths of a ragged prefill batch: one per sequence, each >= 1, the longest being
// q_len and kv_len (what a kernel that sizes its grid by the longest reads).
void check_ragged(const PrefillProblem& p, const KernelSupport& support) {
  if (p.lengths.size() != std::size_t(p.batch))
    throw InvalidProblem("lengths", "has " + std::to_string(p.lengths.size()) + " entries for batch " +
                                        std::to_string(p.batch));
  int longest = 0;
  for (std::size_t s = 0; s < p.lengths.size(); ++s) {
    if (p.lengths[s] < 1)
      throw InvalidProblem("lengths", "sequence " + std::to_string(s) + " has length " + std::to_string(p.lengths[s]) +
                                          " (must be >= 1)");
    longest = std::max(longest, p.lengths[s]);
  }
  if (p.q_len != longest || p.kv_len != longest)
    throw InvalidProblem("lengths", "the longest is " + std::to_string(longest) + " but q_len, kv_len are " +
                                        std::to_string(p.q_len) + ", " + std::to_string(p.kv_len) +
                                        " (make_ragged_prefill sets them)");
  if (!support.ragged) throw InvalidProblem("lengths", "this kernel takes no ragged batch");
}

// Deterministic uniform double in [0, 1) from the top 53 bits (std::uniform_real_distribution
// is implementation-defined, so its values would differ between standard libraries).
double uniform01(std::mt19937_64& rng) {
  constexpr int kDoubleMantBits = 53;
  return double(rng() >> (64 - kDoubleMantBits)) * std::ldexp(1.0, -kDoubleMantBits);
}

}  // namespace

// ---- prefill ----------------------------------------------------------------------------

void PrefillProblem::validate(const KernelSupport& support) const {
  require_positive(batch, "batch");
  check_heads(q_heads, kv_heads);
  require_positive(q_len, "q_len");
  require_positive(kv_len, "kv_len");
  if (ragged()) check_ragged(*this, support);
  check_head_dim(head_dim, support);
  check_dtype(dtype, support, "dtype");
  check_window(window, support);
  if (causal && !support.causal) throw InvalidProblem("causal", "this kernel has no causal mask");
  check_softmax_scale(softmax_scale);
}

std::int64_t PrefillProblem::q_start(int seq) const {
  if (!ragged()) return std::int64_t(seq) * q_len;
  return std::accumulate(lengths.begin(), lengths.begin() + seq, std::int64_t(0));
}

std::int64_t PrefillProblem::kv_start(int seq) const {
  return ragged() ? q_start(seq) : std::int64_t(seq) * kv_len;  // ragged: as many keys as queries
}

PrefillProblem make_ragged_prefill(std::vector<int> lengths, int q_heads, int kv_heads, int head_dim, bool causal,
                                   DType dtype) {
  PrefillProblem p;
  p.batch = int(lengths.size());
  p.q_len = p.kv_len = lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
  p.lengths = std::move(lengths);
  p.q_heads = q_heads;
  p.kv_heads = kv_heads;
  p.head_dim = head_dim;
  p.causal = causal;
  p.dtype = dtype;
  p.validate();
  return p;
}

float PrefillProblem::scale() const { return effective_scale(softmax_scale, head_dim); }

KeyRange PrefillProblem::visible_keys(int q_pos, int seq) const {
  // Bottom-right alignment: the last query sits at the last key.
  const int keys = seq_kv_len(seq);
  const int diag = q_pos + (keys - seq_q_len(seq));
  KeyRange r{0, keys};
  if (causal) r.end = std::min(keys, diag + 1);
  if (window > 0) r.begin = std::max(0, diag - window + 1);
  return r;
}

double PrefillProblem::flops() const {
  // Exact visible (query, key) pairs, one query position at a time: O(q_len), and it stays
  // right for any mix of causal, window and q_len != kv_len without case analysis.
  // A uniform batch counts one sequence and multiplies.
  std::int64_t pairs = 0;
  for (int b = 0; b < (ragged() ? batch : 1); ++b)
    for (int i = 0; i < seq_q_len(b); ++i) pairs += visible_keys(i, b).size();
  constexpr double kFlopsPerPairPerDim = 4.0;  // 2 for S = Q K^T, 2 for O += P V
  return kFlopsPerPairPerDim * double(pairs) * head_dim * q_heads * (ragged() ? 1 : batch);
}

double PrefillProblem::min_bytes() const {
  // Q read and O written (q_elems each), K and V read (kv_elems each), all in dtype; fp8
  // inputs write O in bf16.
  const double out_bytes = double(dtype_bytes(dtype == DType::fp8_e4m3 ? DType::bf16 : dtype));
  return double(q_elems() + 2 * kv_elems()) * double(dtype_bytes(dtype)) + double(q_elems()) * out_bytes;
}

// ---- decode -----------------------------------------------------------------------------

void DecodeProblem::validate(const KernelSupport& support) const {
  require_positive(batch, "batch");
  check_heads(q_heads, kv_heads);
  check_head_dim(head_dim, support);
  require_positive(page_size, "page_size");
  if (!supported(support.page_sizes, page_size)) {
    throw InvalidProblem("page_size", std::to_string(page_size) + " is not supported by this kernel");
  }
  require_positive(num_pages, "num_pages");
  require_positive(max_pages_per_seq, "max_pages_per_seq");
  check_context_lens(context_lens, batch);
  for (int s = 0; s < batch; ++s) {
    if (pages_for(context_lens[s], page_size) > max_pages_per_seq) {
      throw InvalidProblem("context_lens", "sequence " + std::to_string(s) + " of length " +
                                               std::to_string(context_lens[s]) + " needs more than max_pages_per_seq " +
                                               std::to_string(max_pages_per_seq) + " pages of " +
                                               std::to_string(page_size));
    }
  }
  const std::int64_t table_size = std::int64_t(batch) * max_pages_per_seq;
  if (std::int64_t(block_table.size()) != table_size) {
    throw InvalidProblem("block_table", "has " + std::to_string(block_table.size()) +
                                            " entries, batch * max_pages_per_seq is " + std::to_string(table_size));
  }
  // Every entry, used or not: a kernel may prefetch a row's tail, so all must be real pages.
  for (std::size_t i = 0; i < block_table.size(); ++i) {
    if (block_table[i] < 0 || block_table[i] >= num_pages) {
      throw InvalidProblem("block_table", "entry " + std::to_string(i) + " (sequence " +
                                              std::to_string(i / max_pages_per_seq) + ", page slot " +
                                              std::to_string(i % max_pages_per_seq) + ") is page " +
                                              std::to_string(block_table[i]) + ", outside [0, " +
                                              std::to_string(num_pages) + ")");
    }
  }
  if (q_dtype != DType::bf16 && q_dtype != DType::f16) {
    throw InvalidProblem("q_dtype", std::string(dtype_name(q_dtype)) + " is not bf16 or f16");
  }
  check_dtype(kv_dtype, support, "kv_dtype");
  check_scales(k_scale, kv_dtype, kv_heads, "k_scale");
  check_scales(v_scale, kv_dtype, kv_heads, "v_scale");
  check_window(window, support);
  check_softmax_scale(softmax_scale);
}

float DecodeProblem::scale() const { return effective_scale(softmax_scale, head_dim); }

std::int64_t DecodeProblem::total_context() const {
  std::int64_t total = 0;
  for (int len : context_lens) total += len;
  return total;
}

int DecodeProblem::first_visible_key(int seq) const {
  // The query sits at position len - 1 and sees keys j > len - 1 - window.
  const int len = context_lens.at(seq);
  return window > 0 ? std::max(0, len - window) : 0;
}

namespace {
std::int64_t visible_key_count(const DecodeProblem& p) {
  std::int64_t keys = 0;
  for (int s = 0; s < p.batch; ++s) keys += p.visible_keys(s).size();
  return keys;
}
}  // namespace

double DecodeProblem::flops() const {
  constexpr double kFlopsPerKeyPerDim = 4.0;  // 2 for q.k, 2 for p*v, per query head
  return kFlopsPerKeyPerDim * double(visible_key_count(*this)) * head_dim * q_heads;
}

double DecodeProblem::min_bytes() const {
  const double kv = 2.0 * double(visible_key_count(*this)) * kv_heads * head_dim * double(dtype_bytes(kv_dtype));
  const double q_and_o = 2.0 * double(batch) * q_heads * head_dim * double(dtype_bytes(q_dtype));
  return kv + q_and_o;
}

DecodeProblem make_decode_problem(int batch, int q_heads, int kv_heads, int head_dim, int page_size,
                                  std::vector<int> context_lens, DType kv_dtype, std::uint64_t seed,
                                  int spare_pages, int window) {
  // The page count below divides by page_size and reads every length: check those first so a
  // bad argument is named rather than turned into a division by zero.
  require_positive(batch, "batch");
  require_positive(page_size, "page_size");
  check_context_lens(context_lens, batch);
  if (spare_pages < 0) throw InvalidProblem("num_pages", "spare_pages must be >= 0");

  DecodeProblem p;
  p.batch = batch;
  p.q_heads = q_heads;
  p.kv_heads = kv_heads;
  p.head_dim = head_dim;
  p.page_size = page_size;
  p.kv_dtype = kv_dtype;
  p.window = window;
  p.context_lens = std::move(context_lens);

  std::vector<int> pages_needed(batch);
  int total_pages = 0;
  for (int s = 0; s < batch; ++s) {
    pages_needed[s] = pages_for(p.context_lens[s], page_size);
    total_pages += pages_needed[s];
    p.max_pages_per_seq = std::max(p.max_pages_per_seq, pages_needed[s]);
  }
  p.num_pages = total_pages + spare_pages;

  // Fisher-Yates with mt19937_64's raw output, not std::shuffle (whose algorithm is the
  // standard library's choice): the same seed gives the same table everywhere.
  std::mt19937_64 rng(seed);
  std::vector<int> order(p.num_pages);
  for (int i = 0; i < p.num_pages; ++i) order[i] = i;
  for (int i = p.num_pages - 1; i > 0; --i) std::swap(order[i], order[rng() % std::uint64_t(i + 1)]);

  // Unused tail entries stay 0: a real page id, so a kernel that reads past a row's last
  // page still reads valid memory.
  p.block_table.assign(std::size_t(batch) * p.max_pages_per_seq, 0);
  int next = 0;
  for (int s = 0; s < batch; ++s) {
    for (int i = 0; i < pages_needed[s]; ++i) p.block_table[std::size_t(s) * p.max_pages_per_seq + i] = order[next++];
  }

  if (kv_dtype == DType::fp8_e4m3) {
    // Per-head scales in [0.5, 2): not powers of two, so a kernel that forgets or misplaces
    // a scale changes the result rather than an exponent the test cannot see.
    constexpr double kMinScale = 0.5;
    constexpr double kScaleOctaves = 2.0;  // [0.5, 0.5 * 2^2)
    for (int h = 0; h < kv_heads; ++h) {
      p.k_scale.push_back(float(kMinScale * std::exp2(kScaleOctaves * uniform01(rng))));
      p.v_scale.push_back(float(kMinScale * std::exp2(kScaleOctaves * uniform01(rng))));
    }
  }
  p.validate();
  return p;
}

}  // namespace schedlab
