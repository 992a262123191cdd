// The tail of a memory-bound decode: every CTA of a fixed split grid gets the same tiles, yet
// on the H200 they end 6-7 us apart (kernels/decode/LOG.md). Fixed splits, against the last
// tiles of each (sequence, KV head) shared by its split CTAs through a counter, against a
// persistent grid whose warps move on to unfinished sequences when theirs run out.
#pragma once
#include "common/harness/variant_list.hpp"
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_tile_schedule {

using kernels::TileSchedule;

struct split : kernels::SplitWarps {
  static constexpr const char* kName = "split";
  struct Partition : kernels::SplitWarps::Partition {
    /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::split;
  };
};
struct shared_tail : kernels::SplitWarps {
  static constexpr const char* kName = "shared_tail";
  struct Partition : kernels::SplitWarps::Partition {
    /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::shared_tail;
  };
};
struct persistent : kernels::SplitWarps {
  static constexpr const char* kName = "persistent";
  struct Partition : kernels::SplitWarps::Partition {
    /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::persistent;
  };
};

// One CTA per (sequence, KV head), as wide as the split grid's CTAs on an SM together (8
// warps for 16-bit KV, 12 for fp8, one CTA per SM): no split partials and no combine kernel
// where batch x KV heads fills the SMs.
struct wide : kernels::SplitWarps {
  static constexpr const char* kName = "wide";
  struct Warp : kernels::SplitWarps::Warp {
    /* Warps = */ static constexpr int kWarps = 8;
    /* WarpsFp8 = */ static constexpr int kWarpsFp8 = 12;
    /* MinCtasPerSm = */ static constexpr int kMinCtasPerSm = 1;
    /* MinCtasPerSmFp8 = */ static constexpr int kMinCtasPerSmFp8 = 1;
  };
};

using Variants = harness::VariantList<split, shared_tail, persistent, wide>;

}  // namespace schedlab::experiments::decode_tile_schedule
