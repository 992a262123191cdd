// Index arithmetic of shared-memory tiles (smem_tile.hpp), as constexpr functions with no
// device code, so that host code (policies, plans) and a CPU test
// (common/tests/test_mfma_layout.cpp) can use it: the XOR swizzle of a row's 16-byte chunks
// and the lane-contiguous copy that applies it on the global side.
#pragma once

namespace schedlab::kernels::attention {

// Shared-memory layout of a tile of rows (head_dim values of 16 or 8 bits each).
enum class SmemLayout {
  Swizzled,  // 16-byte chunk c of row r stored at chunk c ^ (r % 8): no padding, no conflicts
  Padded,    // each row padded by one 16-byte chunk: the 8 rows one ldmatrix reads hit 8 bank groups
};

// Swizzled tiles store 16-byte chunk c of row r at chunk c ^ (r % 8) (rows of 8 or more
// chunks): the 8 rows an ldmatrix (or 8 lanes of a ds_read) touch land in 8 different bank
// groups. Rows of 4 chunks (64 bytes: fp8 at head dim 64) share a 128-byte line in pairs, so
// the pair index picks the XOR: c ^ ((r / 2) % 4) puts 8 consecutive rows' chunk c in 8
// different 16-byte slots of the line. Both repeat every 8 rows.
constexpr int swizzled_chunk(int row, int chunk, int chunks_per_row = 8) {
  return chunks_per_row >= 8 ? chunk ^ (row % 8) : chunk ^ ((row / (8 / chunks_per_row)) % chunks_per_row);
}

// A copy whose destination is lane-contiguous (AMD global_load_lds: lane i of a wave writes
// base + 16 * i) fills stored chunk `slot` of row `row`; the XOR is its own inverse, so
// the chunk it must read from global memory is the swizzle of the slot.
constexpr int lane_copy_source_chunk(int row, int slot, int chunks_per_row = 8) {
  return swizzled_chunk(row, slot, chunks_per_row);
}

}  // namespace schedlab::kernels::attention
