// The attention warp tile: fragment types, shared->register loads, the two matrix products
// (S = Q K^T, O += P V), each accumulator element's (row, col), row reductions, P
// conversion and O write-out, per architecture. The flash prefill kernel is written against
// it (kernels/prefill/flash_prefill.cuh), and so is the decode kernel on AMD
// (kernels/decode/paged_decode_warp_tile.cuh: WarpTileWideReads, WarpTileKvFp8). Separate
// from warp_mma.hpp because the decode kernel stays on the m16n8k16 names there on NVIDIA
// (they are emulated on AMD); this layer is native on both.
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#include "common/gpu/backend/hip/attention_tile.hpp"
#else
#include "common/gpu/backend/cuda/attention_tile.hpp"
#endif
