// Ragged decode batches: the split grid cuts every sequence into the same number of splits,
// chosen from the batch size, so one long sequence among short ones is read by a handful of
// CTAs while the rest of the GPU idles. Against it: chunks of about the same number of tiles
// planned from the lengths (token_balanced), and the persistent grid whose warps move on to
// unfinished sequences.
#pragma once
#include "kernels/decode/decode_policy.hpp"

namespace schedlab::experiments::decode_work_partition {

using kernels::TileSchedule;

struct split : kernels::DecodePolicy {
  /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::split;
};
struct token_balanced : kernels::DecodePolicy {
  /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::token_balanced;
};
struct persistent : kernels::DecodePolicy {
  /* TileSchedule = */ static constexpr TileSchedule kTileSchedule = TileSchedule::persistent;
};

}  // namespace schedlab::experiments::decode_work_partition
