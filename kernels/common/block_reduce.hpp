// Block-wide reductions on the portability layer (any warp size).
#pragma once
#include "common/gpu/device.hpp"

namespace schedlab::kernels {

struct MaxOp {
  __device__ float operator()(float a, float b) const { return a > b ? a : b; }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

template <class Op>
__device__ float warp_reduce(float v, Op op) {
  for (int m = gpu::kWarpSize / 2; m > 0; m /= 2) v = op(v, gpu::shfl_xor(v, m));
  return v;
}

// `scratch` holds one float per warp; every thread gets the result.
template <class Op>
__device__ float block_reduce(float v, Op op, float* scratch) {
  const int warps = (blockDim.x + gpu::kWarpSize - 1) / gpu::kWarpSize;
  v = warp_reduce(v, op);
  if (gpu::lane_id() == 0) scratch[gpu::warp_id()] = v;
  gpu::block_sync();
  float r = scratch[0];
  for (int w = 1; w < warps; ++w) r = op(r, scratch[w]);
  gpu::block_sync();  // scratch may be reused right after
  return r;
}

}  // namespace schedlab::kernels
