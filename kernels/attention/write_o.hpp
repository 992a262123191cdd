// The output stage of a warp that holds O in the accumulator fragments of the architecture's
// warp tile T (common/gpu/attention_tile.hpp): each row times its final normaliser
// (online_softmax.hpp), stored as 16-bit values by the tile's own row store.
#pragma once
#include <cstdint>

#include "kernels/attention/online_softmax.hpp"

namespace schedlab::kernels::attention {

// STAGE 4: O / l to the output rows. o_rows is the first row of the CTA's block (row_stride
// elements apart); rows at or past rows_left are padding and not written; o_scale is the
// normaliser's numerator (row_normalizer). row0 is the warp's first row in the block, passed
// by the caller (the warp's place among the warps that hold O, not its id in the CTA).
// The parameters come in the order the register-tile family computed them before this stage
// was shared, which keeps its AMD code as it was (gfx950 reorders the epilogue otherwise).
// kRowsBelowZero: row0 may be negative (blocks cut from the sequence's end); those rows are
// not the sequence's and are not written.
template <class T, class Op, bool kRowsBelowZero = false, int kMTiles>
__device__ __forceinline__ void write_o(const RowState<T, kMTiles>& st, std::uint16_t* o_rows, int rows_left,
                                        float o_scale, std::int64_t row_stride, int row0) {
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int r = 0; r < T::kRowSlots; ++r) {
      const float inv = row_normalizer(st, mt, r, o_scale);
      const int row = row0 + mt * T::kMmaRows + T::row(0, r * T::kPerSlot);
      if (row >= rows_left || (kRowsBelowZero && row < 0)) continue;
      T::template store_o_row<Op>(o_rows + row * row_stride, st.o[mt], r, inv);
    }
}

}  // namespace schedlab::kernels::attention
