// Index arithmetic of the prefill kernel's shared tiles, as constexpr functions so a CPU test
// (common/tests/test_mfma_layout.cpp) can check it: the XOR swizzle of a row's 16-byte chunks
// and the lane-contiguous copy that applies it on the global side.
#pragma once

namespace schedlab::kernels::prefill_layout {

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

}  // namespace schedlab::kernels::prefill_layout
