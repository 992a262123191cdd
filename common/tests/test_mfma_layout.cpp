// The AMD prefill path's lane mappings, checked on the CPU (no AMD GPU exists here).
// A model of one v_mfma_f32_16x16x16 (the register layout written out independently of
// common/gpu/backend/hip/mfma_layout.hpp) runs the products the way the HIP warp tile
// (common/gpu/backend/hip/attention_tile.hpp) feeds them: S^T = K Q^T with K and Q read
// row-wise, P^T taken from S^T's accumulator registers as they are, O^T = V^T P^T with V read
// column-wise. The results must equal plain matrix products, every element must have one
// owner, and the lanes of a query row must be the ones the row reductions combine.
// The same for the decode kernel's tile (WarpTileWideReads: K read a chunk at a time with Q's
// and K's head dims permuted alike, V^T gathered from row reads with O's dims permuted), and
// its fp8 KV operands (backend/hip/e4m3_to_f16.hpp) against the reference conversion.
// Also the lane-contiguous copy of a swizzled shared tile (kernels/prefill/smem_tile_layout.hpp).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <string>
#include <set>
#include <vector>

#include "common/gpu/backend/hip/e4m3_to_f16.hpp"
#include "common/gpu/backend/hip/mfma_layout.hpp"
#include "common/numeric.hpp"
#include "kernels/prefill/smem_tile_layout.hpp"

namespace {

namespace m16 = schedlab::gpu::mfma16;
using Regs = std::array<std::array<float, 4>, 64>;  // [lane][element]
using Matrix = std::vector<std::vector<float>>;

// The hardware, as the AMD matrix instruction calculator tables state it for 16x16x16: A
// element (m, k) sits in lane m + 16 * (k / 4), register element k % 4; B element (k, n) in
// lane n + 16 * (k / 4), element k % 4; D element (m, n) in lane n + 16 * (m / 4), element m % 4.
void mfma_model(const Regs& a, const Regs& b, Regs& d) {
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 16; ++n) {
      float acc = d[n + 16 * (m / 4)][m % 4];
      for (int k = 0; k < 16; ++k) acc += a[m + 16 * (k / 4)][k % 4] * b[n + 16 * (k / 4)][k % 4];
      d[n + 16 * (m / 4)][m % 4] = acc;
    }
}

Matrix filled(int rows, int cols, int seed) {
  Matrix x(rows, std::vector<float>(cols));
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) x[r][c] = float((r * 7 + c * 3 + seed) % 11) - 5.f;  // exact in fp32
  return x;
}

constexpr int kQueries = 16, kKeys = 32, kHeadDim = 32;  // one m16 tile, two key blocks, two k16 steps

TEST(MfmaLayout, AttentionProductsComposeAsPlainProducts) {
  const Matrix q = filled(kQueries, kHeadDim, 1), k = filled(kKeys, kHeadDim, 2), v = filled(kKeys, kHeadDim, 3);
  // STAGE 1 as the tile does it: per key block kb, S^T += K Q^T over the k16 steps.
  std::vector<Regs> s(kKeys / 16, Regs{});
  for (int kb = 0; kb < kKeys / 16; ++kb)
    for (int kk = 0; kk < kHeadDim / 16; ++kk) {
      Regs a{}, b{};
      for (int l = 0; l < m16::kLanes; ++l)
        for (int i = 0; i < 4; ++i) {
          a[l][i] = k[kb * 16 + m16::a_row(l)][kk * 16 + m16::a_k(l, i)];  // K row l%16, dims 4(l/16)+i
          b[l][i] = q[m16::a_row(l)][kk * 16 + m16::a_k(l, i)];            // Q row-wise, the same read
        }
      mfma_model(a, b, s[kb]);
    }
  // S^T's elements where the tile says they are (query d_col, key 16kb + d_row), each once.
  std::set<std::pair<int, int>> seen;
  for (int kb = 0; kb < kKeys / 16; ++kb)
    for (int l = 0; l < m16::kLanes; ++l)
      for (int i = 0; i < 4; ++i) {
        const int query = m16::d_col(l), key = kb * 16 + m16::d_row(l, i);
        float ref = 0.f;
        for (int d = 0; d < kHeadDim; ++d) ref += q[query][d] * k[key][d];
        EXPECT_EQ(s[kb][l][i], ref) << "lane " << l << " element " << i;
        EXPECT_TRUE(seen.insert({query, key}).second);
      }
  EXPECT_EQ(seen.size(), std::size_t(kQueries * kKeys));

  // STAGE 3: O^T += V^T P^T, P^T = S^T's registers unchanged (here P = S, no softmax).
  std::vector<Regs> o(kHeadDim / 16, Regs{});
  for (int db = 0; db < kHeadDim / 16; ++db)
    for (int kk = 0; kk < kKeys / 16; ++kk) {
      Regs a{};
      for (int l = 0; l < m16::kLanes; ++l)
        for (int i = 0; i < 4; ++i) a[l][i] = v[kk * 16 + m16::a_k(l, i)][db * 16 + m16::a_row(l)];  // column read
      mfma_model(a, s[kk], o[db]);
    }
  std::set<std::pair<int, int>> written;
  for (int db = 0; db < kHeadDim / 16; ++db)
    for (int l = 0; l < m16::kLanes; ++l)
      for (int i = 0; i < 4; ++i) {
        // The write-out: the lane's query row, dims d_row(l, 0)..+3 of the block, contiguous.
        const int query = m16::d_col(l), dim = db * 16 + m16::d_row(l, 0) + i;
        EXPECT_EQ(m16::d_row(l, i), m16::d_row(l, 0) + i);
        float ref = 0.f;
        for (int key = 0; key < kKeys; ++key) {
          float sk = 0.f;
          for (int d = 0; d < kHeadDim; ++d) sk += q[query][d] * k[key][d];
          ref += sk * v[key][dim];
        }
        EXPECT_EQ(o[db][l][i], ref) << "lane " << l << " element " << i;
        EXPECT_TRUE(written.insert({query, dim}).second);
      }
  EXPECT_EQ(written.size(), std::size_t(kQueries * kHeadDim));
}

// The decode tile at both element widths and head dims: S^T = K Q^T with the permuted dims,
// then O^T = V^T P^T with V^T gathered from rows; O's elements land where o_col says, once.
void check_wide_reads(int head_dim, int kv_bytes) {
  constexpr int kTokens = 16;  // one tile, one 16-key step
  const int o_tiles = head_dim / 16;
  const Matrix q = filled(kQueries, head_dim, 4), k = filled(kTokens, head_dim, 5), v = filled(kTokens, head_dim, 6);
  Regs s{};
  std::set<int> dims_of_step;
  for (int kk = 0; kk < head_dim / 16; ++kk) {
    Regs a{}, b{};
    for (int l = 0; l < m16::kLanes; ++l)
      for (int i = 0; i < 4; ++i) {
        const int dim = m16::wide_qk_dim(l, kk, i, kv_bytes);
        ASSERT_LT(dim, head_dim);
        if (m16::a_row(l) == 0) EXPECT_TRUE(dims_of_step.insert(dim).second);
        a[l][i] = k[m16::a_row(l)][dim];  // K row l % 16
        b[l][i] = q[m16::b_col(l)][dim];  // Q^T column l % 16, the same dims
      }
    mfma_model(a, b, s);
  }
  EXPECT_EQ(dims_of_step.size(), std::size_t(head_dim)) << "every head dim in exactly one step and lane";
  for (int l = 0; l < m16::kLanes; ++l)
    for (int i = 0; i < 4; ++i) {
      float ref = 0.f;
      for (int d = 0; d < head_dim; ++d) ref += q[m16::d_col(l)][d] * k[m16::d_row(l, i)][d];
      EXPECT_EQ(s[l][i], ref) << "S^T, lane " << l << " element " << i;
    }
  std::set<std::pair<int, int>> written;
  for (int n = 0; n < o_tiles; ++n) {
    Regs a{}, o{};
    for (int l = 0; l < m16::kLanes; ++l)
      for (int i = 0; i < 4; ++i) a[l][i] = v[m16::a_k(l, i)][m16::wide_o_dim(m16::a_row(l), n, o_tiles)];
    mfma_model(a, s, o);
    for (int l = 0; l < m16::kLanes; ++l)
      for (int i = 0; i < 4; ++i) {
        const int query = m16::d_col(l), dim = m16::wide_o_dim(m16::d_row(l, i), n, o_tiles);
        float ref = 0.f;
        for (int key = 0; key < kTokens; ++key) ref += s[key / 4 * 16 + query][key % 4] * v[key][dim];
        EXPECT_EQ(o[l][i], ref) << "O^T tile " << n << ", lane " << l << " element " << i;
        EXPECT_TRUE(written.insert({query, dim}).second);
      }
  }
  EXPECT_EQ(written.size(), std::size_t(kQueries * head_dim));
  // A lane's V^T fragment of every tile is one run of o_tiles dims x kv_bytes in one 16-byte chunk.
  for (int m = 0; m < 16; ++m) {
    const int first = m16::wide_o_dim(m, 0, o_tiles) * kv_bytes, last = m16::wide_o_dim(m, o_tiles - 1, o_tiles) * kv_bytes;
    EXPECT_EQ(last - first, (o_tiles - 1) * kv_bytes);
    EXPECT_EQ(first / 16, (last + kv_bytes - 1) / 16) << "row " << m;
  }
}

TEST(MfmaLayout, DecodeWideReadsComposeAsPlainProducts) {
  for (int head_dim : {64, 128})
    for (int kv_bytes : {2, 1}) {
      SCOPED_TRACE("head dim " + std::to_string(head_dim) + ", " + std::to_string(kv_bytes) + "-byte KV");
      check_wide_reads(head_dim, kv_bytes);
    }
}

// v_perm_b32 as the ISA states it for the selector values used: byte k of the result is byte
// sel_k of {hi, lo} (0-3 lo, 4-7 hi), or zero for 0x0C.
std::uint32_t perm_model(std::uint32_t hi, std::uint32_t lo, std::uint32_t sel) {
  const std::uint64_t both = (std::uint64_t(hi) << 32) | lo;
  std::uint32_t out = 0;
  for (int k = 0; k < 4; ++k) {
    const std::uint32_t s = (sel >> (8 * k)) & 0xFF;
    const std::uint32_t byte = s < 8 ? std::uint32_t(both >> (8 * s)) & 0xFF : 0u;
    EXPECT_TRUE(s < 8 || s == 0x0C) << "selector byte " << s;
    out |= byte << (8 * k);
  }
  return out;
}

TEST(E4m3ToF16, EveryFiniteByteIsExactTimesTwoToTheMinus8) {
  namespace e4m3 = schedlab::gpu::e4m3;
  namespace numeric = schedlab::numeric;
  for (std::uint32_t b = 0; b < 256; ++b) {
    if ((b & 0x7F) == 0x7F) continue;  // NaN: inputs are finite
    const float ref = numeric::fp8_e4m3_bits_to_float(static_cast<std::uint8_t>(b));
    const std::uint32_t as_low = e4m3::pair_as_f16x2(b, 0), as_high = e4m3::pair_as_f16x2(0x38, b);  // 0x38: 1.0
    EXPECT_EQ(numeric::f16_bits_to_float(static_cast<std::uint16_t>(as_low & 0xFFFF)) * e4m3::kE4m3AsF16Scale, ref) << b;
    EXPECT_EQ(numeric::f16_bits_to_float(static_cast<std::uint16_t>(as_high >> 16)) * e4m3::kE4m3AsF16Scale, ref) << b;
    EXPECT_EQ(std::signbit(numeric::f16_bits_to_float(static_cast<std::uint16_t>(as_low))), (b & 0x80) != 0) << b;
  }
  // The device form: a byte permute of two words, then f16x2_from_high_bytes.
  const std::uint32_t lo = 0x8440C1B7u, hi = 0x3A7E0102u;
  for (int j_lo = 0; j_lo < 4; ++j_lo)
    for (int j_hi = 0; j_hi < 4; ++j_hi)
      EXPECT_EQ(e4m3::f16x2_from_high_bytes(perm_model(hi, lo, e4m3::byte_pair_selector(j_lo, j_hi))),
                e4m3::pair_as_f16x2((lo >> (8 * j_lo)) & 0xFF, (hi >> (8 * j_hi)) & 0xFF))
          << j_lo << " " << j_hi;
}

TEST(MfmaLayout, RowReductionLanesAreTheLanesOfTheQuery) {
  for (int l = 0; l < m16::kLanes; ++l) {
    std::set<int> reached = {l};
    for (int mask : m16::kColumnXorMasks) {
      std::set<int> next = reached;
      for (int x : reached) next.insert(x ^ mask);
      reached = next;
    }
    std::set<int> owners;
    for (int x = 0; x < m16::kLanes; ++x)
      if (m16::d_col(x) == m16::d_col(l)) owners.insert(x);
    EXPECT_EQ(reached, owners) << "lane " << l;
  }
}

// Every (row, chunk) of the source is copied exactly once, into the slot the swizzled layout
// keeps it in, when thread t fills stored slot t % kChunks of row t / kChunks (+ kRowStep i).
void check_lane_copy(int rows, int chunks, int threads) {
  const int row_step = threads / chunks;
  std::vector<int> copies(rows * chunks, 0);
  for (int t = 0; t < threads; ++t)
    for (int i = 0; i < rows / row_step; ++i) {
      const int row = t / chunks + i * row_step, slot = t % chunks;
      const int source = schedlab::kernels::prefill_layout::lane_copy_source_chunk(row, slot);
      ASSERT_GE(source, 0);
      ASSERT_LT(source, chunks);
      EXPECT_EQ(schedlab::kernels::prefill_layout::swizzled_chunk(row, source), slot);
      ++copies[row * chunks + source];
    }
  for (int c : copies) EXPECT_EQ(c, 1);
}

// Rows of 4 chunks (fp8 at head dim 64): 8 consecutive rows' chunk c (what one ldmatrix reads)
// land in 8 different 16-byte slots of the 128-byte lines, and each row's chunks stay a
// permutation of its own chunks.
TEST(SmemTileLayout, FourChunkRowsSwizzleWithoutConflicts) {
  for (int c = 0; c < 4; ++c)
    for (int row0 = 0; row0 < 32; row0 += 8) {
      std::set<int> slots;
      for (int r = row0; r < row0 + 8; ++r)
        slots.insert((r * 4 + schedlab::kernels::prefill_layout::swizzled_chunk(r, c, 4)) % 8);
      EXPECT_EQ(slots.size(), 8u) << "chunk " << c << ", rows from " << row0;
    }
  for (int r = 0; r < 16; ++r) {
    std::set<int> chunks;
    for (int c = 0; c < 4; ++c) chunks.insert(schedlab::kernels::prefill_layout::swizzled_chunk(r, c, 4));
    EXPECT_EQ(chunks, (std::set<int>{0, 1, 2, 3})) << "row " << r;
  }
}

TEST(SmemTileLayout, LaneContiguousCopyCoversTheSwizzledTileOnce) {
  for (int threads : {256, 512})
    for (int chunks : {8, 16})  // head dim 64, 128
      for (int rows : {64, 96, 128})
        if (rows % (threads / chunks) == 0) check_lane_copy(rows, chunks, threads);  // else produce_tile's static_assert
}

}  // namespace
