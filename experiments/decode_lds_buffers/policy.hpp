// Seed 000 kept one K/V LDS buffer to preserve occupancy. One buffer per warp against two,
// both filled by async global->shared copies.
#pragma once
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_lds_buffers {

struct single : kernels::DecodePolicy {
  /* KvBuffers = */ static constexpr int kKvBuffers = 1;
};
struct double_buffer : kernels::DecodePolicy {
  /* KvBuffers = */ static constexpr int kKvBuffers = 2;
};

}  // namespace schedlab::experiments::decode_lds_buffers
