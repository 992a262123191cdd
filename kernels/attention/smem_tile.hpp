// A shared-memory tile as a type: its shape and layout are template arguments, an object of
// it is the tile's storage (a member of a kernel's SharedStorage), and its static functions
// are the addressing the architecture's warp tile (common/gpu/attention_tile.hpp) and the
// copies use, so that two tiles of different shapes cannot be mixed up.
#pragma once
#include "common/gpu/device.hpp"
#include "kernels/attention/smem_layout.hpp"

namespace schedlab::kernels::attention {

// kRows rows of kDataBytes bytes (head_dim elements), in 16-byte chunks.
template <SmemLayout kLayout, int kRows, int kDataBytes>
struct SmemTile {
  static constexpr int kChunks = kDataBytes / 16;  // 16-byte chunks per row
  static constexpr bool kPadded = kLayout == SmemLayout::Padded;
  static constexpr int kRowBytes = kDataBytes + (kPadded ? 16 : 0);
  static constexpr int kBytes = kRows * kRowBytes;
  static_assert(kDataBytes % 16 == 0, "rows are whole 16-byte chunks (the copies' and ldmatrix's unit)");
  static_assert(kPadded || kChunks % 4 == 0, "the XOR swizzle permutes 4 or more chunks of a row");

  alignas(16) unsigned char bytes[kBytes];  // 16: the async copies' and ldmatrix's unit

  static __device__ __forceinline__ int offset(int row, int chunk) {
    if constexpr (kPadded) return row * kRowBytes + chunk * 16;
    else return row * kRowBytes + swizzled_chunk(row, chunk, kChunks) * 16;
  }
  // Fragment addressing: a lane reads chunk 2 * step + low (low 0 or 1) of row row0 + rows
  // (rows a multiple of 8). lane_offset() is the step-0 offset; at() is one XOR (swizzled:
  // 2 * step flips only chunk bits above bit 0, which are bits 5.. of the offset, so
  // XOR-ing the offset XORs the chunk) or one add (padded), plus an immediate. Written as
  // offset(row, 2 * step + low) the compiler hoists one register per (row, step) out of
  // the tile loop: about 30 registers at head dim 128.
  static __device__ __forceinline__ int lane_offset(int row0, int low) { return offset(row0, low); }
  static __device__ __forceinline__ const unsigned char* at(const unsigned char* tile, int lane_off, int step,
                                                            int rows) {
    return tile + ((kPadded ? lane_off + step * 32 : lane_off ^ (step * 32)) + rows * kRowBytes);
  }
};

}  // namespace schedlab::kernels::attention
