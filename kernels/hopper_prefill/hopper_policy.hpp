// The scheduling knobs of the Hopper prefill family (FlashAttention-3's structure: Shah et
// al. 2024, arXiv 2407.08608, section 3). An experiment variant is this struct with some
// members changed; the kernel body is shared (kernels/hopper_prefill/hopper_prefill.cuh).
#pragma once
#include "kernels/attention/tile_scheduler.hpp"

namespace schedlab::kernels {

struct HopperPrefillPolicy {
  // A producer warpgroup issues every bulk copy and the consumer warpgroups only compute
  // (FA3 3.1). false: no producer; one consumer thread issues the copies between its tiles.
  /* WarpSpecialized = */ static constexpr bool kWarpSpecialized = true;
  // setmaxnreg: the producer gives registers back, the consumers take them (FA3: 24 / 240).
  /* RegisterRealloc = */ static constexpr bool kRegisterRealloc = true;
  /* ProducerRegs = */ static constexpr int kProducerRegs = 24;
  /* ConsumerRegs = */ static constexpr int kConsumerRegs = 240;
  // Two consumer warpgroups take turns issuing their matrix ops through named barriers, so
  // one's softmax runs while the other's GEMMs do (FA3 3.1, "ping-pong").
  /* PingPong = */ static constexpr bool kPingPong = true;
  // Inside a warpgroup, S(j+1) = Q K(j+1)^T and O += P(j) V(j) are issued before the softmax
  // of tile j+1 (FA3 3.2, Algorithm 2).
  /* IntraOverlap = */ static constexpr bool kIntraOverlap = true;
  /* Schedule = */ static constexpr attention::TileSchedule kSchedule = attention::TileSchedule::OnePerTile;
  /* Stages = */ static constexpr int kStages = 2;   // K and V stages each in the shared ring
  /* BlockN = */ static constexpr int kBlockN = 128;  // keys per K/V tile
};

}  // namespace schedlab::kernels
