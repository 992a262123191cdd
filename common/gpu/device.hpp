// Device-side portability layer: lane / warp ids, barriers, scheduling hints, async
// copies and the cycle counter. The one place that picks a vendor backend for device code.
#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#include "common/gpu/backend/hip/device.hpp"
#else
#include "common/gpu/backend/cuda/device.hpp"
#endif
