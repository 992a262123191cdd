// Work is grouped by (batch, KV head): every query row of a group reads the same K and V, so
// up to kRowChunk rows share each decoded key block and go through GEMMs (S = Q K^T,
// O = P V) instead of one dot product per key. Decode reads only the pages a sequence's
// visible keys live on, never the whole pool (a pool can be many GiB).
#include "common/reference/attention_ref.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "common/numeric.hpp"

namespace schedlab {

void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        body(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::min<std::size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

namespace {

using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Rows per GEMM: bounds the score matrix to kRowChunk x keys doubles (64 x 128k keys is
// 64 MiB) while keeping the GEMMs wide enough to be fast.
constexpr std::size_t kRowChunk = 64;

template <typename Raw, typename ToFloat>
void decode_run_as(const void* base, std::int64_t offset, int count, double scale, double* dst, ToFloat to_float) {
  const auto* src = static_cast<const unsigned char*>(base) + std::size_t(offset) * sizeof(Raw);
  for (int i = 0; i < count; ++i) {
    Raw raw;
    std::memcpy(&raw, src + std::size_t(i) * sizeof(Raw), sizeof(Raw));
    dst[i] = scale * double(to_float(raw));
  }
}

// Decodes `count` stored elements starting at element `offset` into dst, times scale. The
// dtype is dispatched once per run and the inline conversions of numeric.hpp (the ones
// load_as_float uses) are used directly: decoding K/V dominates the reference's time.
void decode_run(DType t, const void* base, std::int64_t offset, int count, double scale, double* dst) {
  switch (t) {
    case DType::f32: return decode_run_as<float>(base, offset, count, scale, dst, [](float x) { return x; });
    case DType::f16: return decode_run_as<std::uint16_t>(base, offset, count, scale, dst, numeric::f16_bits_to_float);
    case DType::bf16: return decode_run_as<std::uint16_t>(base, offset, count, scale, dst, numeric::bf16_bits_to_float);
    case DType::fp8_e4m3:
      return decode_run_as<std::uint8_t>(base, offset, count, scale, dst, numeric::fp8_e4m3_bits_to_float);
  }
  throw std::invalid_argument("decode_run: unknown DType value " + std::to_string(int(t)));
}

// Keys decoded per block: 256 keys x 128 dims of double is 256 KiB, so K and V stream
// through cache instead of being materialized whole (a long decode context would be GiBs).
constexpr int kKeyBlock = 256;

// What differs between prefill and decode: where each row's query and each key live, which
// keys a row sees, and the dequantization scale of each KV head.
struct Layout {
  int batch, q_heads, kv_heads, head_dim;
  DType q_dtype, kv_dtype;
  double softmax_scale;
  // Set after the sizes above; "= {}" lets Layout{sizes...} leave them out without warnings.
  std::function<bool(const QueryRow&)> row_in_problem = {};
  std::function<KeyRange(const QueryRow&)> keys_of = {};
  std::function<std::int64_t(const QueryRow&)> q_offset = {};
  std::function<std::int64_t(int batch, int kv_head, int key)> kv_offset = {};  // element d = 0
  std::vector<double> k_scale = {}, v_scale = {};                                // per KV head
  std::vector<double> q_scale = {};  // per query head; empty: 1
};

// Decodes keys [begin, end) of one (batch, KV head) of `tensor` into the rows of dst.
void load_keys(const Layout& l, const void* tensor, double scale, int batch, int kv_head, int begin, int end,
               Matrix& dst) {
  dst.resize(end - begin, l.head_dim);
  for (int j = begin; j < end; ++j) {
    decode_run(l.kv_dtype, tensor, l.kv_offset(batch, kv_head, j), l.head_dim, scale, dst.row(j - begin).data());
  }
}

// The rows (indices into `rows`) of one (batch, KV head) group, kRowChunk at a time: two
// passes over the chunk's keys in blocks, S = Q K^T, then O = P V after the softmax.
void attend_group(const Layout& l, const void* q, const void* k, const void* v, const std::vector<QueryRow>& rows,
                  const std::vector<std::size_t>& group, int batch, int kv_head, std::vector<double>& out) {
  const int dim = l.head_dim;
  Matrix block;
  for (std::size_t c0 = 0; c0 < group.size(); c0 += kRowChunk) {
    const std::size_t count = std::min(kRowChunk, group.size() - c0);
    Matrix q_chunk(count, dim);
    std::vector<KeyRange> keys(count);
    KeyRange span{std::numeric_limits<int>::max(), 0};  // union of the chunk's visible keys
    for (std::size_t r = 0; r < count; ++r) {
      const QueryRow& row = rows[group[c0 + r]];
      decode_run(l.q_dtype, q, l.q_offset(row), dim, l.q_scale.empty() ? 1.0 : l.q_scale.at(row.head),
                 q_chunk.row(r).data());
      keys[r] = l.keys_of(row);
      if (keys[r].size() > 0) span = {std::min(span.begin, keys[r].begin), std::max(span.end, keys[r].end)};
    }
    if (span.size() == 0) continue;  // no row of the chunk sees a key: outputs stay zero

    // S = Q K^T, one key block at a time
    Matrix p(count, span.size());
    for (int b0 = span.begin; b0 < span.end; b0 += kKeyBlock) {
      const int b1 = std::min(span.end, b0 + kKeyBlock);
      load_keys(l, k, l.k_scale[kv_head], batch, kv_head, b0, b1, block);
      p.middleCols(b0 - span.begin, b1 - b0).noalias() = l.softmax_scale * (q_chunk * block.transpose());
    }
    // numerically stable softmax of each row over its own visible keys; masked keys get 0
    for (std::size_t r = 0; r < count; ++r) {
      auto row = p.row(r);
      if (keys[r].size() == 0) {
        row.setZero();
        continue;
      }
      auto visible = row.segment(keys[r].begin - span.begin, keys[r].size());
      const double row_max = visible.maxCoeff();
      visible = (visible.array() - row_max).exp().matrix();
      visible /= visible.sum();
      row.head(keys[r].begin - span.begin).setZero();
      row.tail(span.end - keys[r].end).setZero();
    }
    // O = P V, one key block at a time
    Matrix o = Matrix::Zero(count, dim);
    for (int b0 = span.begin; b0 < span.end; b0 += kKeyBlock) {
      const int b1 = std::min(span.end, b0 + kKeyBlock);
      load_keys(l, v, l.v_scale[kv_head], batch, kv_head, b0, b1, block);
      o.noalias() += p.middleCols(b0 - span.begin, b1 - b0) * block;
    }
    for (std::size_t r = 0; r < count; ++r) {
      std::copy_n(o.row(r).data(), dim, out.begin() + std::ptrdiff_t(group[c0 + r] * dim));
    }
  }
}

// Groups the rows by (batch, KV head) so each group's keys are decoded once per chunk.
std::vector<double> reference(const Layout& l, const void* q, const void* k, const void* v,
                              const std::vector<QueryRow>& rows) {
  std::vector<std::vector<std::size_t>> groups(std::size_t(l.batch) * l.kv_heads);
  const int group_size = l.q_heads / l.kv_heads;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const QueryRow& r = rows[i];
    if (!l.row_in_problem(r)) {
      throw std::out_of_range("query row " + std::to_string(i) + " (batch " + std::to_string(r.batch) + ", head " +
                              std::to_string(r.head) + ", pos " + std::to_string(r.pos) +
                              ") is outside the problem");
    }
    groups[std::size_t(r.batch) * l.kv_heads + r.head / group_size].push_back(i);
  }
  std::vector<double> out(rows.size() * l.head_dim, 0.0);
  std::vector<std::size_t> busy;
  for (std::size_t g = 0; g < groups.size(); ++g)
    if (!groups[g].empty()) busy.push_back(g);
  // Groups write disjoint rows of out.
  parallel_for(busy.size(), [&](std::size_t i) {
    const std::size_t g = busy[i];
    attend_group(l, q, k, v, rows, groups[g], int(g / l.kv_heads), int(g % l.kv_heads), out);
  });
  return out;
}

// Picks at most max_rows distinct indices of [0, total): `must` first (in its priority
// order), then uniform ones, returned sorted. A sparse partial Fisher-Yates draws distinct
// indices in O(1) each however close max_rows is to total.
std::vector<std::int64_t> sample_indices(std::int64_t total, const std::vector<std::int64_t>& must,
                                         std::size_t max_rows, std::uint64_t seed) {
  std::vector<std::int64_t> picked;
  if (std::uint64_t(total) <= max_rows) {
    for (std::int64_t i = 0; i < total; ++i) picked.push_back(i);
    return picked;
  }
  std::unordered_set<std::int64_t> seen;
  auto add = [&](std::int64_t i) {
    if (picked.size() < max_rows && seen.insert(i).second) picked.push_back(i);
  };
  for (std::int64_t i : must) {
    if (i >= 0 && i < total) add(i);
  }
  std::mt19937_64 rng(seed);
  std::unordered_map<std::int64_t, std::int64_t> swapped;  // virtual array [0, total), sparse
  auto at = [&](std::int64_t i) {
    auto it = swapped.find(i);
    return it == swapped.end() ? i : it->second;
  };
  for (std::int64_t n = 0; picked.size() < max_rows && n < total; ++n) {
    const std::int64_t j = n + std::int64_t(rng() % std::uint64_t(total - n));
    const std::int64_t drawn = at(j);
    swapped[j] = at(n);
    add(drawn);
  }
  std::sort(picked.begin(), picked.end());
  return picked;
}

}  // namespace

// ---- prefill ----------------------------------------------------------------------------

std::vector<double> prefill_reference(const PrefillProblem& p, const void* q, const void* k, const void* v,
                                      const std::vector<QueryRow>& rows, const QkvScales& scales) {
  p.validate();
  Layout l{p.batch, p.q_heads, p.kv_heads, p.head_dim, p.dtype, p.dtype, p.scale()};
  // Row starts once: a ragged problem's q_start / kv_start sum the lengths before.
  std::vector<std::int64_t> q_start(std::size_t(p.batch) + 1), kv_start(std::size_t(p.batch) + 1);
  for (int b = 0; b <= p.batch; ++b) {
    q_start[std::size_t(b)] = p.q_start(b);
    kv_start[std::size_t(b)] = p.kv_start(b);
  }
  l.row_in_problem = [&](const QueryRow& r) {
    return r.batch >= 0 && r.batch < p.batch && r.head >= 0 && r.head < p.q_heads && r.pos >= 0 &&
           r.pos < p.seq_q_len(r.batch);
  };
  l.keys_of = [&](const QueryRow& r) { return p.visible_keys(r.pos, r.batch); };
  l.q_offset = [&](const QueryRow& r) {
    return ((q_start[std::size_t(r.batch)] + r.pos) * p.q_heads + r.head) * p.head_dim;
  };
  l.kv_offset = [&](int b, int kv_head, int j) {
    return ((kv_start[std::size_t(b)] + j) * p.kv_heads + kv_head) * p.head_dim;
  };
  auto per_head = [](const std::vector<double>& given, int heads, const char* name) {
    if (given.empty()) return std::vector<double>(heads, 1.0);
    if (given.size() != std::size_t(heads))
      throw std::invalid_argument(std::string("prefill_reference: ") + name + " scales: " + std::to_string(given.size()) +
                                  " for " + std::to_string(heads) + " heads");
    return given;
  };
  l.q_scale = per_head(scales.q, p.q_heads, "q");
  l.k_scale = per_head(scales.k, p.kv_heads, "k");
  l.v_scale = per_head(scales.v, p.kv_heads, "v");
  return reference(l, q, k, v, rows);
}

std::vector<QueryRow> all_rows(const PrefillProblem& p) {
  std::vector<QueryRow> rows;
  rows.reserve(std::size_t(p.q_start(p.batch)) * p.q_heads);
  for (int b = 0; b < p.batch; ++b)
    for (int pos = 0; pos < p.seq_q_len(b); ++pos)
      for (int h = 0; h < p.q_heads; ++h) rows.push_back({b, h, pos});
  return rows;
}

std::vector<QueryRow> sample_rows(const PrefillProblem& p, std::size_t max_rows, std::uint64_t seed) {
  // Flat index = position in the Q layout [tokens, q_heads] (tokens: the sequences packed).
  std::vector<std::int64_t> starts(std::size_t(p.batch) + 1);
  for (int b = 0; b <= p.batch; ++b) starts[std::size_t(b)] = p.q_start(b);
  const std::int64_t total = starts.back() * p.q_heads;
  auto flat = [&](int b, int pos, int h) { return (starts[std::size_t(b)] + pos) * p.q_heads + h; };
  std::vector<std::int64_t> must{0, total - 1};
  // Around the first query the causal diagonal reaches (the row before sees no key when
  // q_len > kv_len) and around the first query whose window no longer starts at key 0, in
  // the first and the last sequence; a ragged batch adds every sequence's first and last
  // rows (where a kernel's packing or its masks at a sequence's end go wrong).
  for (int b : {0, p.batch - 1}) {
    const int q_len = p.seq_q_len(b), kv_len = p.seq_kv_len(b);
    std::vector<int> boundaries{q_len - kv_len};
    if (p.window > 0) boundaries.push_back(p.window - (kv_len - q_len));
    for (int start : boundaries) {
      for (int pos : {start - 1, start, start + 1}) {
        if (pos < 0 || pos >= q_len) continue;
        must.push_back(flat(b, pos, b == 0 ? 0 : p.q_heads - 1));
      }
    }
  }
  if (p.ragged()) {
    for (int b = 0; b < p.batch; ++b) {
      must.push_back(flat(b, 0, b % p.q_heads));
      must.push_back(flat(b, p.seq_q_len(b) - 1, (b + 1) % p.q_heads));
    }
  }
  std::vector<QueryRow> rows;
  for (std::int64_t i : sample_indices(total, must, max_rows, seed)) {
    const int h = int(i % p.q_heads);
    const std::int64_t token = i / p.q_heads;
    const int b = int(std::upper_bound(starts.begin(), starts.end(), token) - starts.begin()) - 1;
    rows.push_back({b, h, int(token - starts[std::size_t(b)])});
  }
  return rows;
}

// ---- decode -----------------------------------------------------------------------------

std::vector<double> decode_reference(const DecodeProblem& p, const void* q, const void* k_pool, const void* v_pool,
                                     const std::vector<QueryRow>& rows) {
  p.validate();
  Layout l{p.batch, p.q_heads, p.kv_heads, p.head_dim, p.q_dtype, p.kv_dtype, p.scale()};
  l.row_in_problem = [&](const QueryRow& r) {
    return r.batch >= 0 && r.batch < p.batch && r.head >= 0 && r.head < p.q_heads;
  };
  l.keys_of = [&](const QueryRow& r) { return p.visible_keys(r.batch); };
  l.q_offset = [&](const QueryRow& r) { return (std::int64_t(r.batch) * p.q_heads + r.head) * p.head_dim; };
  l.kv_offset = [&](int b, int kv_head, int j) {
    const int page = p.block_table[std::size_t(b) * p.max_pages_per_seq + j / p.page_size];
    return p.pool_offset(page, kv_head, j % p.page_size);
  };
  const bool fp8 = p.kv_dtype == DType::fp8_e4m3;
  l.k_scale = fp8 ? std::vector<double>(p.k_scale.begin(), p.k_scale.end()) : std::vector<double>(p.kv_heads, 1.0);
  l.v_scale = fp8 ? std::vector<double>(p.v_scale.begin(), p.v_scale.end()) : std::vector<double>(p.kv_heads, 1.0);
  return reference(l, q, k_pool, v_pool, rows);
}

std::vector<QueryRow> all_rows(const DecodeProblem& p) {
  std::vector<QueryRow> rows;
  rows.reserve(std::size_t(p.batch) * p.q_heads);
  for (int b = 0; b < p.batch; ++b)
    for (int h = 0; h < p.q_heads; ++h) rows.push_back({b, h, p.context_lens.at(b) - 1});
  return rows;
}

int checked_kv_heads(const DecodeProblem& p, std::int64_t max_keys) {
  std::int64_t keys = 0;
  for (int b = 0; b < p.batch; ++b) keys += p.visible_keys(b).size();
  return int(std::clamp<std::int64_t>(max_keys / std::max<std::int64_t>(keys, 1), 1, p.kv_heads));
}

std::vector<QueryRow> rows_of_every_sequence(const DecodeProblem& p, std::int64_t max_keys, std::uint64_t seed) {
  const int group = p.group_size();
  const int heads = checked_kv_heads(p, max_keys);
  std::mt19937_64 rng(seed);
  std::vector<QueryRow> rows;
  for (int b = 0; b < p.batch; ++b) {
    const int first = int(rng() % std::uint64_t(p.kv_heads));
    std::vector<int> picked;
    for (int i = 0; i < heads; ++i) picked.push_back((first + i) % p.kv_heads);
    std::sort(picked.begin(), picked.end());
    for (int kvh : picked)
      for (int h = kvh * group; h < (kvh + 1) * group; ++h) rows.push_back({b, h, p.context_lens.at(b) - 1});
  }
  return rows;
}

std::vector<QueryRow> sample_rows(const DecodeProblem& p, std::size_t max_rows, std::uint64_t seed) {
  // Flat index = position in the Q layout [batch, q_heads].
  const std::int64_t total = std::int64_t(p.batch) * p.q_heads;
  std::vector<QueryRow> rows;
  for (std::int64_t i : sample_indices(total, {0, total - 1}, max_rows, seed)) {
    const int b = int(i / p.q_heads);
    rows.push_back({b, int(i % p.q_heads), p.context_lens.at(b) - 1});
  }
  return rows;
}

}  // namespace schedlab
