// Warpgroup matrix operations (sm_90a wgmma, its descriptors and fences) where the backend
// has them. SCHEDLAB_GPU_HAS_WGMMA is 1 on the CUDA backend, whose hopper.hpp it includes, and
// 0 on AMD, which has no such unit: a portable kernel keeps its warpgroup code behind the macro
// and falls back to the warp-level tile elsewhere.
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#define SCHEDLAB_GPU_HAS_WGMMA 0
#else
#include "common/gpu/backend/cuda/hopper.hpp"
#define SCHEDLAB_GPU_HAS_WGMMA 1
#endif
