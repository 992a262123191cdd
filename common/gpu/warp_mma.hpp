// Warp-level matrix primitives: the backend's matrix unit behind one set of names.
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#include "common/gpu/backend/hip/warp_mma.hpp"
#else
#include "common/gpu/backend/cuda/warp_mma.hpp"
#endif
