// The AMD prefill path's lane mappings, checked on the CPU (no AMD GPU exists here).
// A model of one v_mfma_f32_16x16x16 (the register layout written out independently of
// common/gpu/backend/hip/mfma_layout.hpp) runs the products the way the HIP warp tile
// (common/gpu/backend/hip/attention_tile.hpp) feeds them: S^T = K Q^T with K and Q read
// row-wise, P^T taken from S^T's accumulator registers as they are, O^T = V^T P^T with V read
// column-wise. The results must equal plain matrix products, every element must have one
// owner, and the lanes of a query row must be the ones the row reductions combine.
// Also the lane-contiguous copy of a swizzled shared tile (kernels/prefill/smem_tile_layout.hpp).
#include <gtest/gtest.h>

#include <array>
#include <set>
#include <vector>

#include "common/gpu/backend/hip/mfma_layout.hpp"
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
