// The tail of a memory-bound decode: every CTA of a fixed split grid gets the same tiles, yet
// on the H200 they end 6-7 us apart (kernels/decode/LOG.md). Fixed splits, against the last
// tiles of each (sequence, KV head) shared by its split CTAs through a counter, against a
// persistent grid whose warps move on to unfinished sequences when theirs run out.
#pragma once
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_tile_schedule {

using kernels::TileSchedule;

struct split : kernels::DecodePolicy {
  struct Partition : kernels::DecodePolicy::Partition {
    /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::split;
  };
};
struct shared_tail : kernels::DecodePolicy {
  struct Partition : kernels::DecodePolicy::Partition {
    /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::shared_tail;
  };
};
struct persistent : kernels::DecodePolicy {
  struct Partition : kernels::DecodePolicy::Partition {
    /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::persistent;
  };
};

// One CTA per (sequence, KV head), as wide as the split grid's CTAs on an SM together (8
// warps for 16-bit KV, 12 for fp8, one CTA per SM): no split partials and no combine kernel
// where batch x KV heads fills the SMs.
struct wide : kernels::DecodePolicy {
  struct Warp : kernels::DecodePolicy::Warp {
    /* Warps = */ static constexpr int kWarps = 8;
    /* WarpsFp8 = */ static constexpr int kWarpsFp8 = 12;
    /* MinCtasPerSm = */ static constexpr int kMinCtasPerSm = 1;
    /* MinCtasPerSmFp8 = */ static constexpr int kMinCtasPerSmFp8 = 1;
  };
};
}  // namespace schedlab::experiments::decode_tile_schedule
