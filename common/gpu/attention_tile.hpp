// The attention warp tile: fragment types, shared->register loads, the two matrix products
// (S = Q K^T, O += P V), each accumulator element's (row, col), row reductions, P
// conversion and O write-out, per architecture. The flash prefill kernel is written against
// it (kernels/prefill/flash_prefill.cuh). Separate from warp_mma.hpp because the decode kernel
// stays on the m16n8k16 names there (emulated on AMD); this layer is native on both.
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#include "common/gpu/backend/hip/attention_tile.hpp"
#else
#include "common/gpu/backend/cuda/attention_tile.hpp"
#endif
