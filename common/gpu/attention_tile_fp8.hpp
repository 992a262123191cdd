// The attention warp tile for OCP fp8 e4m3 Q, K, V (8-bit matrix ops, P in e4m3), per
// architecture; the flash prefill kernel picks it for fp8 inputs (kernels/prefill/flash_prefill.cuh).
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#include "common/gpu/backend/hip/attention_tile_fp8.hpp"
#else
#include "common/gpu/backend/cuda/attention_tile_fp8.hpp"
#endif
