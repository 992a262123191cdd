// Seed 000 kept one K/V LDS buffer to preserve occupancy. One buffer per warp against two,
// both filled by async global->shared copies.
#pragma once
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_lds_buffers {

struct single : kernels::DecodePolicy {
  struct Warp : kernels::DecodePolicy::Warp {
    /* KvBuffers = */ static constexpr int kKvBuffers = 1;
  };
};
struct double_buffer : kernels::DecodePolicy {
  struct Warp : kernels::DecodePolicy::Warp {
    /* KvBuffers = */ static constexpr int kKvBuffers = 2;
  };
};
// The other side of the trade: a third stage per warp (more bytes in flight, same two CTAs
// per SM for 16-bit KV), and two stages with a third CTA per SM (more warps, fewer registers).
struct triple_buffer : kernels::DecodePolicy {
  struct Warp : kernels::DecodePolicy::Warp {
    /* KvBuffers = */ static constexpr int kKvBuffers = 3;
  };
};
struct double_3ctas : kernels::DecodePolicy {
  struct Warp : kernels::DecodePolicy::Warp {
    /* KvBuffers = */ static constexpr int kKvBuffers = 2;
    /* MinCtasPerSm = */ static constexpr int kMinCtasPerSm = 3;
  };
};
// The same two stages filled by bulk tensor copies (sm_90's TMA unit, one mbarrier per stage)
// instead of 16-byte per-lane async copies; fp8 keeps the per-lane copies.
struct double_bulk : kernels::DecodePolicy {
  struct Warp : kernels::DecodePolicy::Warp {
    /* KvBuffers = */ static constexpr int kKvBuffers = 2;
    /* BulkCopy = */ static constexpr bool kBulkCopy = true;
  };
};

}  // namespace schedlab::experiments::decode_lds_buffers
