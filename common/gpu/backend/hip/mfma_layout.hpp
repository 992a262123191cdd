// Lane layouts of the CDNA3/CDNA4 16x16x16 matrix instructions (v_mfma_f32_16x16x16bf16_1k,
// v_mfma_f32_16x16x16f16) on a wave64, as plain constexpr functions: the HIP warp tile
// (attention_tile.hpp) addresses its fragments with them, and a CPU test
// (common/tests/test_mfma_layout.cpp) composes the attention products with them.
// Source: the register-layout tables of AMD's matrix instruction calculator
// (ROCm/amd_matrix_instruction_calculator, v_mfma_f32_16x16x16f16; the bf16_1k form has the
// same layout): lane l, element i (0..3) of the 4-element operand registers
//   A (M x K = 16 x 16): A[l % 16][4 * (l / 16) + i]
//   B (K x N = 16 x 16): B[4 * (l / 16) + i][l % 16]
//   D (M x N = 16 x 16): D[4 * (l / 16) + i][l % 16]   (f32, 4 registers)
// No vendor header: constexpr functions are host and device code under clang's HIP.
#pragma once

namespace schedlab::gpu::mfma16 {

inline constexpr int kLanes = 64;     // one wave64 computes one 16x16x16 product
inline constexpr int kDim = 16;       // M = N = K
inline constexpr int kPerLane = 4;    // elements of each operand per lane

constexpr int a_row(int lane) { return lane % kDim; }
constexpr int a_k(int lane, int i) { return kPerLane * (lane / kDim) + i; }
constexpr int b_k(int lane, int i) { return kPerLane * (lane / kDim) + i; }
constexpr int b_col(int lane) { return lane % kDim; }
constexpr int d_row(int lane, int i) { return kPerLane * (lane / kDim) + i; }
constexpr int d_col(int lane) { return lane % kDim; }

// The lanes holding one column of D (or of B): l % 16 fixed, l / 16 = 0..3. A reduction over
// a column is in-lane over i, then across these four lanes: XOR 16 and XOR 32.
inline constexpr int kColumnXorMasks[2] = {16, 32};

// The decode warp tile's permuted head dims (attention_tile.hpp, WarpTileWideReads), for a
// tile whose K and V elements are kv_bytes wide. Element i of lane l's K (and Q^T) fragment
// of k16 step kk: the lane reads chunk 4 (kk / s) + l / 16 of its K row once for s = 16 /
// (4 kv_bytes) steps, 4 elements a step.
constexpr int wide_qk_dim(int lane, int kk, int i, int kv_bytes) {
  const int steps_per_chunk = 16 / (kPerLane * kv_bytes);
  const int chunk = kPerLane * (kk / steps_per_chunk) + lane / kDim;
  return chunk * (16 / kv_bytes) + kPerLane * (kk % steps_per_chunk) + i;
}
// The head dim of row m of O^T's tile n (of o_tiles): a lane's A fragment of V^T (row
// a_row(l)) covers o_tiles consecutive dims over the tiles, one read per key.
constexpr int wide_o_dim(int m, int n, int o_tiles) { return o_tiles * m + n; }

}  // namespace schedlab::gpu::mfma16
