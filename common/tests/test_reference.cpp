#include "common/reference/attention_ref.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "common/data.hpp"

namespace schedlab {
namespace {

// A stored tensor: raw bytes of n elements of one dtype.
struct Buffer {
  DType type;
  std::vector<unsigned char> bytes;
  Buffer(DType t, std::size_t n) : type(t), bytes(n * dtype_bytes(t)) {}
  Buffer(DType t, std::size_t n, std::uint64_t seed) : Buffer(t, n) { fill_normal_host(t, bytes.data(), n, seed, 1.f); }
  void set(std::size_t i, float x) { store_from_float(type, bytes.data(), i, x); }
  float get(std::size_t i) const { return load_as_float(type, bytes.data(), i); }
  const void* data() const { return bytes.data(); }
};

struct PrefillData {
  PrefillProblem p;
  Buffer q, k, v;
  explicit PrefillData(const PrefillProblem& problem, std::uint64_t seed = 1)
      : p(problem),
        q(problem.dtype, std::size_t(problem.q_elems()), seed),
        k(problem.dtype, std::size_t(problem.kv_elems()), seed + 1),
        v(problem.dtype, std::size_t(problem.kv_elems()), seed + 2) {}
  std::size_t q_index(int b, int pos, int h, int d) const {
    return ((std::size_t(b) * p.q_len + pos) * p.q_heads + h) * p.head_dim + d;
  }
  std::size_t kv_index(int b, int j, int h, int d) const {
    return ((std::size_t(b) * p.kv_len + j) * p.kv_heads + h) * p.head_dim + d;
  }
  std::vector<double> run(const std::vector<QueryRow>& rows) const {
    return prefill_reference(p, q.data(), k.data(), v.data(), rows);
  }
};

struct DecodeData {
  DecodeProblem p;
  Buffer q, k, v;
  explicit DecodeData(const DecodeProblem& problem, std::uint64_t seed = 1)
      : p(problem),
        q(problem.q_dtype, std::size_t(problem.batch) * problem.q_heads * problem.head_dim, seed),
        k(problem.kv_dtype, std::size_t(problem.pool_elems()), seed + 1),
        v(problem.kv_dtype, std::size_t(problem.pool_elems()), seed + 2) {}
  // Element d of key j of sequence b, KV head h, in the pool.
  std::size_t kv_index(int b, int j, int h, int d) const {
    const int page = p.block_table[std::size_t(b) * p.max_pages_per_seq + j / p.page_size];
    return std::size_t(p.pool_offset(page, h, j % p.page_size) + d);
  }
  std::vector<double> run(const std::vector<QueryRow>& rows) const {
    return decode_reference(p, q.data(), k.data(), v.data(), rows);
  }
};

PrefillProblem small_prefill(int q_len, int kv_len, int head_dim = 8) {
  PrefillProblem p;
  p.batch = 1, p.q_heads = 1, p.kv_heads = 1, p.q_len = q_len, p.kv_len = kv_len, p.head_dim = head_dim;
  p.dtype = DType::f32;
  return p;
}

// Mean of V over keys [begin, end) of (batch 0, KV head 0), element d.
double mean_v(const PrefillData& x, int begin, int end, int d) {
  double sum = 0;
  for (int j = begin; j < end; ++j) sum += x.v.get(x.kv_index(0, j, 0, d));
  return sum / (end - begin);
}

// The textbook definition, element by element with the masks written out directly (not
// through visible_keys), to check the grouped GEMM implementation against.
std::vector<double> naive_prefill(const PrefillData& x, const std::vector<QueryRow>& rows) {
  const PrefillProblem& p = x.p;
  std::vector<double> out;
  for (const QueryRow& r : rows) {
    const int kv_head = r.head / (p.q_heads / p.kv_heads);
    const int diag = r.pos + p.kv_len - p.q_len;
    std::vector<double> score(p.kv_len, -INFINITY);
    double row_max = -INFINITY;
    for (int j = 0; j < p.kv_len; ++j) {
      if (p.causal && j > diag) continue;
      if (p.window > 0 && j <= diag - p.window) continue;
      double s = 0;
      for (int d = 0; d < p.head_dim; ++d) {
        s += double(x.q.get(x.q_index(r.batch, r.pos, r.head, d))) * x.k.get(x.kv_index(r.batch, j, kv_head, d));
      }
      score[j] = s * p.scale();
      row_max = std::max(row_max, score[j]);
    }
    double sum = 0;
    for (double& s : score) sum += (s = std::isinf(s) ? 0.0 : std::exp(s - row_max));
    for (int d = 0; d < p.head_dim; ++d) {
      double o = 0;
      for (int j = 0; j < p.kv_len; ++j) o += score[j] * x.v.get(x.kv_index(r.batch, j, kv_head, d));
      out.push_back(sum > 0 ? o / sum : 0.0);
    }
  }
  return out;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << "element " << i;
}

// ---- hand-computed cases ----------------------------------------------------------------

TEST(PrefillReference, OneKeyGivesItsValue) {
  PrefillData x(small_prefill(1, 1));
  const auto out = x.run(all_rows(x.p));
  for (int d = 0; d < x.p.head_dim; ++d) EXPECT_EQ(out[d], x.v.get(x.kv_index(0, 0, 0, d)));
}

TEST(PrefillReference, TwoKeysGiveTheSoftmaxWeights) {
  PrefillProblem p = small_prefill(1, 2);
  p.softmax_scale = 0.75f;
  PrefillData x(p);
  std::fill(x.q.bytes.begin(), x.q.bytes.end(), 0);
  std::fill(x.k.bytes.begin(), x.k.bytes.end(), 0);
  x.q.set(x.q_index(0, 0, 0, 0), 2.f);
  x.k.set(x.kv_index(0, 0, 0, 0), 1.f);  // score 0.75 * 2 * 1 = 1.5
  x.k.set(x.kv_index(0, 1, 0, 0), -1.f); // score -1.5
  const double w0 = std::exp(1.5) / (std::exp(1.5) + std::exp(-1.5));
  const auto out = x.run(all_rows(x.p));
  for (int d = 0; d < p.head_dim; ++d) {
    const double expected = w0 * x.v.get(x.kv_index(0, 0, 0, d)) + (1 - w0) * x.v.get(x.kv_index(0, 1, 0, d));
    EXPECT_NEAR(out[d], expected, 1e-14);
  }
}

// With Q = 0 every score is 0, so query row i must be the plain mean of V over the keys
// the test says it sees: a direct check of the masks. One batch and head, rows by position.
void expect_row_means(const PrefillProblem& p, const std::vector<KeyRange>& expected_keys) {
  ASSERT_EQ(expected_keys.size(), std::size_t(p.q_len));
  PrefillData x(p);
  std::fill(x.q.bytes.begin(), x.q.bytes.end(), 0);
  const auto out = x.run(all_rows(x.p));
  for (int i = 0; i < p.q_len; ++i) {
    for (int d = 0; d < p.head_dim; ++d) {
      EXPECT_NEAR(out[i * p.head_dim + d], mean_v(x, expected_keys[i].begin, expected_keys[i].end, d), 1e-14)
          << "query " << i;
    }
  }
}

TEST(PrefillReference, UniformScoresAverageV) { expect_row_means(small_prefill(1, 7), {{0, 7}}); }

TEST(PrefillReference, LargeScoresDoNotOverflow) {
  PrefillData x(small_prefill(1, 2));
  std::fill(x.q.bytes.begin(), x.q.bytes.end(), 0);
  std::fill(x.k.bytes.begin(), x.k.bytes.end(), 0);
  x.q.set(x.q_index(0, 0, 0, 0), 1e4f);
  x.k.set(x.kv_index(0, 0, 0, 0), 1.f);  // score ~3500: exp overflows without the max shift
  const auto out = x.run(all_rows(x.p));
  for (int d = 0; d < x.p.head_dim; ++d) EXPECT_NEAR(out[d], x.v.get(x.kv_index(0, 0, 0, d)), 1e-12);
}

TEST(PrefillReference, CausalMasksFutureKeys) {
  PrefillProblem p = small_prefill(4, 4);
  p.causal = true;
  expect_row_means(p, {{0, 1}, {0, 2}, {0, 3}, {0, 4}});
}

TEST(PrefillReference, CausalIsBottomRightAligned) {
  PrefillProblem p = small_prefill(2, 5);
  p.causal = true;
  expect_row_means(p, {{0, 4}, {0, 5}});  // query 0 sits at key 3, query 1 at key 4
}

TEST(PrefillReference, SlidingWindow) {
  PrefillProblem p = small_prefill(5, 5);
  p.causal = true, p.window = 2;
  expect_row_means(p, {{0, 1}, {0, 2}, {1, 3}, {2, 4}, {3, 5}});
  // Without causal the window only cuts the past: query i sees keys i-1 .. end.
  p.causal = false;
  expect_row_means(p, {{0, 5}, {0, 5}, {1, 5}, {2, 5}, {3, 5}});
}

TEST(PrefillReference, FullyMaskedRowsAreZero) {
  PrefillProblem p = small_prefill(3, 1);  // causal, offset -2: queries 0 and 1 see nothing
  p.causal = true;
  PrefillData x(p);
  const auto out = x.run(all_rows(x.p));
  for (int d = 0; d < p.head_dim; ++d) {
    EXPECT_EQ(out[d], 0.0);
    EXPECT_EQ(out[p.head_dim + d], 0.0);
    EXPECT_EQ(out[2 * p.head_dim + d], x.v.get(x.kv_index(0, 0, 0, d)));
  }
}

TEST(PrefillReference, GqaHeadsReadTheirGroupsKvHead) {
  PrefillProblem p = small_prefill(1, 1);
  p.q_heads = 6, p.kv_heads = 3;  // heads 0,1 -> kv 0; 2,3 -> kv 1; 4,5 -> kv 2
  PrefillData x(p);
  const auto out = x.run(all_rows(x.p));
  for (int h = 0; h < 6; ++h)
    for (int d = 0; d < p.head_dim; ++d) EXPECT_EQ(out[h * p.head_dim + d], x.v.get(x.kv_index(0, 0, h / 2, d)));
}

TEST(PrefillReference, ReadsStoredDtypes) {
  PrefillProblem p = small_prefill(1, 1);
  p.dtype = DType::bf16;
  PrefillData x(p);
  x.v.set(x.kv_index(0, 0, 0, 0), 1.00390625f);  // 1 + 2^-8: stored as bf16 1.0
  const auto out = x.run(all_rows(x.p));
  EXPECT_EQ(out[0], 1.0);
}

// fp8 inputs with per-head scales: the same as the f32 inputs byte * scale.
TEST(PrefillReference, Fp8DequantizesWithPerHeadScales) {
  PrefillProblem p;
  p.batch = 1, p.q_heads = 4, p.kv_heads = 2, p.q_len = 9, p.kv_len = 13, p.head_dim = 16, p.causal = true;
  p.dtype = DType::fp8_e4m3;
  PrefillData x(p, 3);
  const QkvScales scales{{0.5, 1.0, 2.0, 0.25}, {0.75, 1.5}, {3.0, 0.125}};
  PrefillProblem pf = p;
  pf.dtype = DType::f32;
  PrefillData y(pf);
  for (int pos = 0; pos < p.q_len; ++pos)
    for (int h = 0; h < p.q_heads; ++h)
      for (int d = 0; d < p.head_dim; ++d)
        y.q.set(y.q_index(0, pos, h, d), float(x.q.get(x.q_index(0, pos, h, d)) * scales.q[h]));
  for (int j = 0; j < p.kv_len; ++j)
    for (int h = 0; h < p.kv_heads; ++h)
      for (int d = 0; d < p.head_dim; ++d) {
        y.k.set(y.kv_index(0, j, h, d), float(x.k.get(x.kv_index(0, j, h, d)) * scales.k[h]));
        y.v.set(y.kv_index(0, j, h, d), float(x.v.get(x.kv_index(0, j, h, d)) * scales.v[h]));
      }
  const auto rows = all_rows(p);
  expect_near_all(prefill_reference(p, x.q.data(), x.k.data(), x.v.data(), rows, scales), y.run(rows), 1e-12);
  EXPECT_THROW(prefill_reference(p, x.q.data(), x.k.data(), x.v.data(), rows, QkvScales{{1.0}, {}, {}}),
               std::invalid_argument);
}

// ---- against the textbook definition ----------------------------------------------------

struct MaskCase {
  int q_len, kv_len;
  bool causal;
  int window;
};

class PrefillMatchesNaive : public ::testing::TestWithParam<MaskCase> {};

TEST_P(PrefillMatchesNaive, OnAllRows) {
  const MaskCase c = GetParam();
  PrefillProblem p;
  // 80 query rows per (batch, KV head) group: more than one GEMM chunk of rows.
  p.batch = 2, p.q_heads = 4, p.kv_heads = 2, p.q_len = c.q_len, p.kv_len = c.kv_len, p.head_dim = 16;
  p.causal = c.causal, p.window = c.window, p.dtype = DType::bf16;
  PrefillData x(p, 11);
  const auto rows = all_rows(p);
  expect_near_all(x.run(rows), naive_prefill(x, rows), 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Masks, PrefillMatchesNaive,
                         ::testing::Values(MaskCase{40, 40, false, 0}, MaskCase{40, 40, true, 0},
                                           MaskCase{40, 70, true, 0}, MaskCase{45, 30, true, 0},
                                           MaskCase{40, 70, true, 9}, MaskCase{40, 70, false, 9},
                                           MaskCase{1, 33, true, 5}));

TEST(PrefillReference, SampledRowsMatchTheirRowsOfTheFullOutput) {
  PrefillProblem p;
  p.batch = 2, p.q_heads = 4, p.kv_heads = 1, p.q_len = 50, p.kv_len = 60, p.head_dim = 32, p.causal = true;
  PrefillData x(p, 5);
  const auto all = all_rows(p);
  const auto full = x.run(all);
  const auto rows = sample_rows(p, 37, 9);
  const auto sampled = x.run(rows);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::size_t flat = (std::size_t(rows[r].batch) * p.q_len + rows[r].pos) * p.q_heads + rows[r].head;
    for (int d = 0; d < p.head_dim; ++d) ASSERT_EQ(sampled[r * p.head_dim + d], full[flat * p.head_dim + d]);
  }
}

// A ragged batch is its sequences side by side: each sequence's rows equal those of a uniform
// batch of one holding that sequence's slice of the packed buffers.
TEST(PrefillReference, RaggedSequencesAreTheirOwnUniformProblems) {
  for (bool causal : {false, true}) {
    const PrefillProblem p = make_ragged_prefill({5, 33, 1, 17}, 4, 2, 16, causal, DType::bf16);
    PrefillData x(p, 21);
    const auto ragged = x.run(all_rows(p));
    std::size_t at = 0;
    for (int b = 0; b < p.batch; ++b) {
      PrefillProblem one = p;
      one.lengths.clear();
      one.batch = 1;
      one.q_len = one.kv_len = p.lengths[std::size_t(b)];
      const std::size_t q0 = std::size_t(p.q_start(b)) * p.q_heads * p.head_dim * 2;  // bf16 bytes
      const std::size_t kv0 = std::size_t(p.kv_start(b)) * p.kv_heads * p.head_dim * 2;
      const std::size_t q_bytes = std::size_t(one.q_elems()) * 2, kv_bytes = std::size_t(one.kv_elems()) * 2;
      const std::vector<double> alone =
          prefill_reference(one, x.q.bytes.data() + q0, x.k.bytes.data() + kv0, x.v.bytes.data() + kv0, all_rows(one));
      ASSERT_LE(q0 + q_bytes, x.q.bytes.size());
      ASSERT_LE(kv0 + kv_bytes, x.k.bytes.size());
      for (std::size_t i = 0; i < alone.size(); ++i) ASSERT_EQ(ragged[at + i], alone[i]) << "sequence " << b;
      at += alone.size();
    }
    EXPECT_EQ(at, ragged.size());
  }
}

TEST(PrefillReference, SampledRaggedRowsHoldEverySequencesEnds) {
  const PrefillProblem p = make_ragged_prefill({300, 1, 77, 1000, 2}, 8, 8, 16, true, DType::bf16);
  const auto rows = sample_rows(p, 64, 3);
  EXPECT_EQ(rows.size(), 64u);
  for (int b = 0; b < p.batch; ++b) {
    for (int pos : {0, p.lengths[std::size_t(b)] - 1}) {
      EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [&](const QueryRow& r) { return r.batch == b && r.pos == pos; }))
          << "sequence " << b << " row " << pos;
    }
  }
  for (const QueryRow& r : rows) EXPECT_LT(r.pos, p.lengths[std::size_t(r.batch)]);
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end(), [&](const QueryRow& a, const QueryRow& b) {
    return std::tie(a.batch, a.pos, a.head) < std::tie(b.batch, b.pos, b.head);
  }));
}

TEST(PrefillReference, RejectsRowsOutsideTheProblem) {
  PrefillData x(small_prefill(2, 2));
  EXPECT_THROW(x.run({{0, 0, 2}}), std::out_of_range);
  EXPECT_THROW(x.run({{0, 1, 0}}), std::out_of_range);
  EXPECT_THROW(x.run({{1, 0, 0}}), std::out_of_range);
  EXPECT_THROW(x.run({{-1, 0, 0}}), std::out_of_range);
}

// ---- decode -----------------------------------------------------------------------------

TEST(DecodeReference, EqualsPrefillWithOneQueryOnContiguousKv) {
  for (int window : {kNoWindow, 20}) {
    const DecodeProblem dp =
        make_decode_problem(3, 8, 2, 32, 16, {1, 37, 64}, DType::bf16, /*seed=*/4, /*spare=*/3, window);
    DecodeData x(dp, 21);
    const auto out = x.run(all_rows(dp));
    for (int b = 0; b < dp.batch; ++b) {
      PrefillProblem pp;
      pp.batch = 1, pp.q_heads = dp.q_heads, pp.kv_heads = dp.kv_heads, pp.head_dim = dp.head_dim;
      pp.q_len = 1, pp.kv_len = dp.context_lens[b], pp.causal = true, pp.window = window, pp.dtype = DType::bf16;
      PrefillData y(pp);
      for (int h = 0; h < dp.q_heads; ++h)
        for (int d = 0; d < dp.head_dim; ++d)
          y.q.set(y.q_index(0, 0, h, d), x.q.get((std::size_t(b) * dp.q_heads + h) * dp.head_dim + d));
      for (int j = 0; j < pp.kv_len; ++j)
        for (int h = 0; h < dp.kv_heads; ++h)
          for (int d = 0; d < dp.head_dim; ++d) {
            y.k.set(y.kv_index(0, j, h, d), x.k.get(x.kv_index(b, j, h, d)));
            y.v.set(y.kv_index(0, j, h, d), x.v.get(x.kv_index(b, j, h, d)));
          }
      const auto ref = y.run(all_rows(pp));
      const std::vector<double> got(out.begin() + std::ptrdiff_t(b) * dp.q_heads * dp.head_dim,
                                    out.begin() + std::ptrdiff_t(b + 1) * dp.q_heads * dp.head_dim);
      expect_near_all(got, ref, 1e-12);
    }
  }
}

TEST(DecodeReference, PermutingPagesLeavesTheOutputUnchanged) {
  const DecodeProblem dp = make_decode_problem(2, 4, 2, 16, 4, {13, 9}, DType::f16, 8, /*spare=*/2);
  DecodeData x(dp, 3);
  // Move every page to a new id (reverse order) and rewrite the table to match.
  DecodeData moved = x;
  const std::size_t page_elems = std::size_t(dp.kv_heads) * dp.page_size * dp.head_dim;
  const std::size_t page_bytes = page_elems * dtype_bytes(dp.kv_dtype);
  auto new_id = [&](int page) { return dp.num_pages - 1 - page; };
  for (int page = 0; page < dp.num_pages; ++page) {
    std::copy_n(x.k.bytes.begin() + std::ptrdiff_t(page * page_bytes), page_bytes,
                moved.k.bytes.begin() + std::ptrdiff_t(new_id(page) * page_bytes));
    std::copy_n(x.v.bytes.begin() + std::ptrdiff_t(page * page_bytes), page_bytes,
                moved.v.bytes.begin() + std::ptrdiff_t(new_id(page) * page_bytes));
  }
  for (int& page : moved.p.block_table) page = new_id(page);
  ASSERT_NE(moved.p.block_table, x.p.block_table);
  EXPECT_EQ(moved.run(all_rows(dp)), x.run(all_rows(dp)));
}

TEST(DecodeReference, Fp8IsDequantizedWithItsHeadsScales) {
  DecodeProblem dp = make_decode_problem(1, 2, 2, 8, 16, {2}, DType::fp8_e4m3, 1);
  dp.k_scale = {0.5f, 1.5f};
  dp.v_scale = {3.f, 0.25f};
  dp.softmax_scale = 1.f;
  DecodeData x(dp);
  std::fill(x.q.bytes.begin(), x.q.bytes.end(), 0);
  std::fill(x.k.bytes.begin(), x.k.bytes.end(), 0);
  std::fill(x.v.bytes.begin(), x.v.bytes.end(), 0);
  for (int h = 0; h < 2; ++h) {
    x.q.set((std::size_t(h)) * dp.head_dim, 2.f);
    x.k.set(x.kv_index(0, 0, h, 0), 1.f);  // key 0 of head h: score 2 * k_scale[h]; key 1: 0
    x.v.set(x.kv_index(0, 0, h, 0), 1.f);  // V element 0: key 0 -> v_scale[h], key 1 -> 0
    x.v.set(x.kv_index(0, 1, h, 1), 1.f);  // V element 1: key 0 -> 0, key 1 -> v_scale[h]
  }
  const auto out = x.run(all_rows(dp));
  for (int h = 0; h < 2; ++h) {
    const double s0 = 2.0 * dp.k_scale[h];
    const double w0 = std::exp(s0) / (std::exp(s0) + 1.0);
    EXPECT_NEAR(out[h * dp.head_dim + 0], w0 * dp.v_scale[h], 1e-14) << h;
    EXPECT_NEAR(out[h * dp.head_dim + 1], (1 - w0) * dp.v_scale[h], 1e-14) << h;
  }
}

TEST(DecodeReference, ReadsOnlyTheSequencesPages) {
  // A pool whose unused pages hold NaN: a reference that touched them would return NaN.
  const DecodeProblem dp = make_decode_problem(2, 4, 4, 8, 4, {5, 7}, DType::bf16, 2, /*spare=*/4);
  DecodeData x(dp);
  std::set<int> used;
  for (int b = 0; b < dp.batch; ++b)
    for (int i = 0; i * dp.page_size < dp.context_lens[b]; ++i) used.insert(dp.block_table[b * dp.max_pages_per_seq + i]);
  const std::size_t page_elems = std::size_t(dp.kv_heads) * dp.page_size * dp.head_dim;
  for (int page = 0; page < dp.num_pages; ++page) {
    if (used.count(page)) continue;
    for (std::size_t e = 0; e < page_elems; ++e) {
      x.k.set(page * page_elems + e, NAN);
      x.v.set(page * page_elems + e, NAN);
    }
  }
  for (double o : x.run(all_rows(dp))) EXPECT_TRUE(std::isfinite(o));
}

// ---- row sampling -----------------------------------------------------------------------

template <typename Problem>
void expect_valid_sample(const Problem& p, const std::vector<QueryRow>& rows, std::size_t max_rows) {
  const auto all = all_rows(p);
  EXPECT_LE(rows.size(), max_rows);
  EXPECT_EQ(rows.size(), std::min(max_rows, all.size()));
  auto key = [](const QueryRow& r) { return std::tuple(r.batch, r.pos, r.head); };
  std::set<std::tuple<int, int, int>> seen;
  for (const QueryRow& r : rows) EXPECT_TRUE(seen.insert(key(r)).second) << "duplicate row";
  EXPECT_TRUE(seen.count(key(all.front()))) << "first row missing";
  if (max_rows >= 2) {
    EXPECT_TRUE(seen.count(key(all.back()))) << "last row missing";
  }
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end(), [&](const QueryRow& a, const QueryRow& b) {
    return key(a) < key(b);
  }));
}

TEST(SampleRows, PrefillSampleIsBoundedDeterministicAndCoversTheEdges) {
  PrefillProblem p;
  p.batch = 2, p.q_heads = 8, p.kv_heads = 2, p.q_len = 300, p.kv_len = 200, p.causal = true, p.window = 50;
  const auto rows = sample_rows(p, 64, 5);
  expect_valid_sample(p, rows, 64);
  const auto same = sample_rows(p, 64, 5), other = sample_rows(p, 64, 6);
  auto flat = [&](const std::vector<QueryRow>& rs) {
    std::vector<int> f;
    for (const auto& r : rs) f.push_back((r.batch * p.q_len + r.pos) * p.q_heads + r.head);
    return f;
  };
  EXPECT_EQ(flat(rows), flat(same));
  EXPECT_NE(flat(rows), flat(other));
  // The diagonal starts at query q_len - kv_len = 100: the last empty row and the first two
  // that see keys are always checked.
  for (int pos : {99, 100, 101}) {
    EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [&](const QueryRow& r) { return r.pos == pos; })) << pos;
  }
}

TEST(SampleRows, SmallProblemsGetEveryRow) {
  PrefillProblem p;
  p.batch = 1, p.q_heads = 2, p.kv_heads = 1, p.q_len = 10, p.kv_len = 10;
  const auto rows = sample_rows(p, 20, 1);
  expect_valid_sample(p, rows, 20);
  EXPECT_EQ(rows.size(), 20u);
  const DecodeProblem dp = make_decode_problem(2, 4, 2, 64, 16, {3, 30}, DType::bf16, 1);
  EXPECT_EQ(sample_rows(dp, 100, 1).size(), 8u);
}

TEST(SampleRows, DecodeSampleIsBoundedAndCoversTheEdges) {
  const DecodeProblem dp = make_decode_problem(64, 32, 8, 64, 16, std::vector<int>(64, 20), DType::bf16, 1);
  const auto rows = sample_rows(dp, 50, 3);
  expect_valid_sample(dp, rows, 50);
  EXPECT_EQ(rows.back().pos, 19);  // decode rows carry the query position for readability
  // Nearly all rows: the sampler must still finish and pick distinct rows.
  expect_valid_sample(dp, sample_rows(dp, 64 * 32 - 1, 3), 64 * 32 - 1);
  expect_valid_sample(dp, sample_rows(dp, 1, 3), 1);
}

// Every sequence is checked however large the batch: the budget decides how many KV heads
// of each, never which sequences.
TEST(SampleRows, EverySequenceHasRowsWhateverTheBudget) {
  std::vector<int> lens(700);
  for (int i = 0; i < 700; ++i) lens[i] = 1 + (i * 37) % 300;
  lens[350] = 20000;
  const DecodeProblem dp = make_decode_problem(700, 32, 8, 128, 16, lens, DType::bf16, 1);
  std::int64_t keys = 0;
  for (int len : lens) keys += len;
  for (std::int64_t budget : {std::int64_t(1), keys * 3, keys * 8, keys * 100}) {
    const auto rows = rows_of_every_sequence(dp, budget, 5);
    const std::size_t heads = std::size_t(std::clamp<std::int64_t>(budget / keys, 1, 8));
    ASSERT_EQ(rows.size(), 700 * heads * 4) << budget;  // whole GQA groups of 4 query heads
    std::vector<int> per_seq(700, 0);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      ++per_seq.at(rows[i].batch);
      EXPECT_EQ(rows[i].pos, lens[rows[i].batch] - 1);
      if (i > 0) EXPECT_TRUE(std::pair(rows[i - 1].batch, rows[i - 1].head) < std::pair(rows[i].batch, rows[i].head));
    }
    for (int b = 0; b < 700; ++b) EXPECT_EQ(per_seq[b], int(heads * 4)) << "sequence " << b;
  }
  const auto a = rows_of_every_sequence(dp, 1, 5), b = rows_of_every_sequence(dp, 1, 5);  // deterministic
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].head, b[i].head);
}

TEST(ParallelFor, RunsEveryIndexOnceAndRethrows) {
  std::vector<std::atomic<int>> hits(1000);
  parallel_for(hits.size(), [&](std::size_t i) { ++hits[i]; });
  for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
  EXPECT_THROW(parallel_for(10, [](std::size_t i) { if (i == 7) throw std::runtime_error("x"); }), std::runtime_error);
}

}  // namespace
}  // namespace schedlab
