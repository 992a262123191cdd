// A persistent grid (one CTA per SM walking the output tiles, the heaviest causal query
// blocks of each head first) against one CTA per output tile; the depth of the K/V rings
// (2 or 3 stages) as a second knob. Seed 004 and FlashAttention-3's tile scheduler.
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::prefill_persistent {

using kernels::attention::TileSchedule;
// The question is the schedule itself: one CTA per tile at every length (the family default
// runs short launches on persistent CTAs, short_keys).
struct one_per_tile : kernels::HopperPrefillPolicy {
  /* Schedule = */ static constexpr TileSchedule kSchedule = TileSchedule::OnePerTile;
  static constexpr int short_keys(bool) { return 0; }
};
// The static walks keep every tile whole (the family's short kernels split the last wave's
// tiles by keys: kSplitTailFill), so that the schedules are compared as such.
struct persistent : kernels::HopperPrefillPolicy {
  /* Schedule = */ static constexpr TileSchedule kSchedule = TileSchedule::Persistent;
  /* SplitTailFill = */ static constexpr float kSplitTailFill = 0.f;
};
// One CTA per SM drawing each next tile from a global counter (FA3's dynamic persistent
// scheduler): the causal tiles' unequal lengths no longer decide which SM finishes last.
struct persistent_dynamic : kernels::HopperPrefillPolicy {
  /* Schedule = */ static constexpr TileSchedule kSchedule = TileSchedule::Dynamic;
};
// Three stages of 176-key K and V tiles do not fit 227 KiB at head dim 128: there the
// three-stage variant keeps the 128-key tiles of the causal shape, and beside those three
// stages O's staging rows do not fit either, so it writes O from its accumulators (the other
// variants stage it: set against them, its output path differs too).
struct persistent_3stages : kernels::HopperPrefillPolicy {
  /* Schedule = */ static constexpr TileSchedule kSchedule = TileSchedule::Persistent;
  /* Stages = */ static constexpr int kStages = 3;
  /* SplitTailFill = */ static constexpr float kSplitTailFill = 0.f;
  /* StagedOutput = */ static constexpr bool kStagedOutput = false;
  static constexpr kernels::HopperTile tile(int head_dim, bool causal) {
    return head_dim <= 64 ? HopperPrefillPolicy::tile(head_dim, causal) : HopperPrefillPolicy::tile(head_dim, true);
  }
};

}  // namespace schedlab::experiments::prefill_persistent
