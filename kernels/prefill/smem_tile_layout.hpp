// Index arithmetic of the prefill kernel's shared tiles, as constexpr functions so a CPU test
// (common/tests/test_mfma_layout.cpp) can check it: the XOR swizzle of a row's 16-byte chunks
// and the lane-contiguous copy that applies it on the global side.
#pragma once

namespace schedlab::kernels::prefill_layout {

// Swizzled tiles store 16-byte chunk c of row r at chunk c ^ (r % 8): the 8 rows an
// ldmatrix (or 8 lanes of a ds_read) touch land in 8 different bank groups.
constexpr int swizzled_chunk(int row, int chunk) { return chunk ^ (row % 8); }

// A copy whose destination is lane-contiguous (AMD global_load_lds: lane i of a wave writes
// base + 16 * i) fills stored chunk `slot` of row `row`; the XOR is its own inverse, so
// the chunk it must read from global memory is the swizzle of the slot.
constexpr int lane_copy_source_chunk(int row, int slot) { return swizzled_chunk(row, slot); }

}  // namespace schedlab::kernels::prefill_layout
