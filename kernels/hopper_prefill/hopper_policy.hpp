// The scheduling knobs of the Hopper prefill family (FlashAttention-3's structure: Shah et
// al. 2024, arXiv 2407.08608, section 3). An experiment variant is this struct with some
// members changed; the kernel body is shared (kernels/hopper_prefill/hopper_prefill.cuh).
#pragma once
#include "kernels/attention/tile_scheduler.hpp"

namespace schedlab::kernels {

// The tile shape of one (head dim, causal) instantiation.
struct HopperTile {
  int consumers;      // consumer warpgroups, 64 query rows each
  int block_n;        // keys per K/V tile
  int consumer_regs;  // registers a consumer thread takes with setmaxnreg
  int row_chains;     // independent max / sum chains per row in the softmax
};

struct HopperPrefillPolicy {
  // A producer warpgroup issues every bulk copy and the consumer warpgroups only compute
  // (FA3 3.1). false: no producer; one consumer thread issues the copies between its tiles.
  /* WarpSpecialized = */ static constexpr bool kWarpSpecialized = true;
  // setmaxnreg: the producer gives registers back, the consumers take them (FA3: 24 / 240).
  /* RegisterRealloc = */ static constexpr bool kRegisterRealloc = true;
  /* ProducerRegs = */ static constexpr int kProducerRegs = 24;
  // The consumer warpgroups take turns issuing their matrix ops through named barriers, so
  // one's softmax runs while another's GEMMs do (FA3 3.1, "ping-pong").
  /* PingPong = */ static constexpr bool kPingPong = true;
  // Inside a warpgroup, S(j+1) = Q K(j+1)^T and O += P(j) V(j) are issued before the softmax
  // of tile j+1 (FA3 3.2, Algorithm 2).
  /* IntraOverlap = */ static constexpr bool kIntraOverlap = true;
  /* Schedule = */ static constexpr attention::TileSchedule kSchedule = attention::TileSchedule::OnePerTile;
  // Causal tiles longest first across every head (true) or within each head (false: the
  // CTAs of a wave then share a few heads' K/V in L2, which measured faster; README).
  /* LongestFirstAcrossHeads = */ static constexpr bool kLongestFirstAcrossHeads = false;
  // Dynamic schedule: tile ids a CTA may hold past the one it computes (dynamic_tile_scheduler.hpp).
  /* TileQueueSlots = */ static constexpr int kTileQueueSlots = 2;
  /* Stages = */ static constexpr int kStages = 2;  // K and V stages each in the shared ring
  // > 0: keep a stale running max until a row's max grows by more than this (log2 units) and
  // skip O *= corr when no row of the warp moved (FA4's conditional rescaling); P then
  // reaches 2^threshold at most, which bf16 / f16 and the f32 sums hold.
  /* RescaleThreshold = */ static constexpr float kRescaleThreshold = 8.f;
  // Tile shapes: FA3's (hopper/tile_size.h: 128 x 176 non-causal and 128 x 128 causal at head
  // dim 128, 192 query rows at 64), each confirmed on the H200 by the tuning bench
  // (kernels/hopper_prefill/README.md). 3 consumers fit 160 registers each beside a 24-register
  // producer (with one chain per row: four spill at 160 in the causal kernel); row chains
  // helped only the 128-key tiles of head dim 128.
  static constexpr HopperTile tile(int head_dim, bool causal) {
    if (head_dim <= 64) return {3, 128, 160, 1};
    return causal ? HopperTile{2, 128, 240, 4} : HopperTile{2, 176, 240, 1};
  }
};

}  // namespace schedlab::kernels
