// Seed 000 kept one K/V LDS buffer to preserve occupancy. One buffer per warp against two,
// both filled by async global->shared copies.
#pragma once
#include "common/harness/variant_list.hpp"
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_lds_buffers {

struct single : kernels::SplitWarps {
  static constexpr const char* kName = "single";
  struct Warp : kernels::SplitWarps::Warp {
    /* KvBuffers = */ static constexpr int kKvBuffers = 1;
  };
};
struct double_buffer : kernels::SplitWarps {
  static constexpr const char* kName = "double_buffer";
  struct Warp : kernels::SplitWarps::Warp {
    /* KvBuffers = */ static constexpr int kKvBuffers = 2;
  };
};
// The other side of the trade: a third stage per warp (more bytes in flight, same two CTAs
// per SM for 16-bit KV), and two stages with a third CTA per SM (more warps, fewer registers).
struct triple_buffer : kernels::SplitWarps {
  static constexpr const char* kName = "triple_buffer";
  struct Warp : kernels::SplitWarps::Warp {
    /* KvBuffers = */ static constexpr int kKvBuffers = 3;
  };
};
struct double_3ctas : kernels::SplitWarps {
  static constexpr const char* kName = "double_3ctas";
  struct Warp : kernels::SplitWarps::Warp {
    /* KvBuffers = */ static constexpr int kKvBuffers = 2;
    /* MinCtasPerSm = */ static constexpr int kMinCtasPerSm = 3;
  };
};
// The same two stages filled by bulk tensor copies (sm_90's TMA unit, one mbarrier per stage)
// instead of 16-byte per-lane async copies; fp8 keeps the per-lane copies.
struct double_bulk : kernels::SplitWarps {
  static constexpr const char* kName = "double_bulk";
  struct Warp : kernels::SplitWarps::Warp {
    /* KvBuffers = */ static constexpr int kKvBuffers = 2;
    /* BulkCopy = */ static constexpr bool kBulkCopy = true;
  };
};

using Variants = harness::VariantList<single, double_buffer, triple_buffer, double_3ctas, double_bulk>;

}  // namespace schedlab::experiments::decode_lds_buffers
