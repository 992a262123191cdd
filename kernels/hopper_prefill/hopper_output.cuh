// The Hopper prefill kernel's output stage through shared memory (Policy::kStagedOutput): a
// consumer warp's 16 rows of O / l go to its 2 KiB of staging rows (hopper_config.cuh, OStage),
// 64 columns at a time, with stmatrix (fp8's paired columns: 8-byte stores), and from there to
// global memory in 16-byte stores, each warp instruction four whole 128-byte row segments. From
// the accumulators (attention::write_o) a lane holds two columns of a row per n8 tile, so a
// store is 4 bytes and a warp instruction eight 16-byte pieces of eight rows: 32 stores a thread
// at head dim 128, which fill the load/store queue (the samples of the output stage sat on its
// throttle; kernels/hopper_prefill/LOG.md, "O through shared memory").
#pragma once
#include <cstdint>

#include "kernels/hopper_prefill/hopper_config.cuh"

namespace schedlab::kernels::hopper_detail {

// A staged row's eight 16-byte pieces are stored at piece ^ (row % 8), so that neither the
// eight rows of an 8x8 matrix (stmatrix) nor the eight pieces of a row (a quarter warp's 16-byte
// loads) share a bank.
inline constexpr int kStageCols = kRowBytes / 2;  // 16-bit values of one staged row
__device__ __forceinline__ int stage_offset(int row, int piece) { return row * kRowBytes + ((piece ^ (row % 8)) * 16); }

// STAGE 4 through the warp's staging rows: O / l (o_scale / l) of the warp's rows row0.. to
// o_rows (row_stride values apart), rows at or past rows_left, or below zero under
// kRowsBelowZero, not written (write_o's contract). kPairedCols: the accumulators hold fp8's
// paired columns (hopper_config.cuh, M16n8RowsPairedCols), put back in order in the rows.
template <class T, class Op, bool kRowsBelowZero, int kHeadDim, bool kPairedCols>
__device__ __forceinline__ void write_o_staged(const attention::RowState<T, 1>& st, unsigned char* stage,
                                               std::uint16_t* o_rows, int rows_left, float o_scale,
                                               std::int64_t row_stride, int row0) {
  static_assert(T::kRowSlots == 2 && T::kPerSlot == 2 && kHeadDim % kStageCols == 0, "m16n8 C tiles, whole segments");
  const int lane = gpu::lane_id();
  const float inv[2] = {attention::row_normalizer(st, 0, 0, o_scale), attention::row_normalizer(st, 0, 1, o_scale)};
  // stmatrix: lane l addresses row l % 8 of matrix l / 8, matrix m being rows 8 (m % 2).. of
  // n8 tile m / 2 of the pair.
  const int st_row = (lane / 8 % 2) * 8 + lane % 8, st_half = lane / 16;
  const int g = lane / 4, t = lane % 4;
#pragma unroll
  for (int seg = 0; seg < kHeadDim / kStageCols; ++seg) {
    if (seg > 0) gpu::warp_sync();  // the previous segment's loads are done with the rows
#pragma unroll
    for (int pair = 0; pair < kStageCols / 16; ++pair) {
      const auto& c0 = st.o[0][seg * kStageCols / 8 + 2 * pair];
      const auto& c1 = st.o[0][seg * kStageCols / 8 + 2 * pair + 1];
      if constexpr (kPairedCols) {
        // fp8's paired columns (M16n8RowsPairedCols): lane (g, t) holds columns 4t..4t + 3 of
        // the pair's 16 for rows g and g + 8, in the order (c0, 0), (c1, 0), (c0, 1), (c1, 1):
        // one 8-byte store a row.
#pragma unroll
        for (int r = 0; r < 2; ++r)
          *reinterpret_cast<uint2*>(stage + stage_offset(g + 8 * r, 2 * pair + t / 2) + (t % 2) * 8) =
              make_uint2(gpu::mma::pack2<Op>(c0[2 * r] * inv[r], c1[2 * r] * inv[r]),
                         gpu::mma::pack2<Op>(c0[2 * r + 1] * inv[r], c1[2 * r + 1] * inv[r]));
      } else {
        const std::uint32_t r[4] = {gpu::mma::pack2<Op>(c0[0] * inv[0], c0[1] * inv[0]),
                                    gpu::mma::pack2<Op>(c0[2] * inv[1], c0[3] * inv[1]),
                                    gpu::mma::pack2<Op>(c1[0] * inv[0], c1[1] * inv[0]),
                                    gpu::mma::pack2<Op>(c1[2] * inv[1], c1[3] * inv[1])};
        gpu::stmatrix_x4(stage + stage_offset(st_row, 2 * pair + st_half), r);
      }
    }
    gpu::warp_sync();  // the segment is in the rows before other lanes read them
#pragma unroll
    for (int i = 0; i < kStageRows * 8 / kWarpSize; ++i) {
      const int row = i * (kWarpSize / 8) + lane / 8, piece = lane % 8;
      const uint4 v = *reinterpret_cast<const uint4*>(stage + stage_offset(row, piece));
      const int out_row = row0 + row;
      if (out_row < rows_left && (!kRowsBelowZero || out_row >= 0))
        *reinterpret_cast<uint4*>(o_rows + out_row * row_stride + seg * kStageCols + piece * 8) = v;
    }
  }
  gpu::warp_sync();  // the rows are free for the warp's next tile
}

}  // namespace schedlab::kernels::hopper_detail
