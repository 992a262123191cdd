// Candidates of the Hopper prefill family's tile shape and softmax, timed side by side by
// bench_hopper_prefill_tuning (kernels/hopper_prefill/README.md has the table). Each is the
// family's default policy with the members its name says changed.
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::hopper_prefill_tuning {

using kernels::HopperTile;
using Base = kernels::HopperPrefillPolicy;
struct defaults : Base {};
struct no_threshold : Base {
  /* RescaleThreshold = */ static constexpr float kRescaleThreshold = 0.f;
};
// 128-key tiles at head dim 128 whether causal or not.
struct n128 : Base {
  static constexpr HopperTile tile(int head_dim, bool causal) {
    return head_dim <= 64 ? Base::tile(head_dim, causal) : HopperTile{2, 128, 240, 4};
  }
};
// Two consumer warpgroups (128 query rows) at head dim 64.
struct d64_m128 : Base {
  static constexpr HopperTile tile(int head_dim, bool causal) {
    return head_dim <= 64 ? HopperTile{2, 128, 240, 4} : Base::tile(head_dim, causal);
  }
};
// Causal tiles longest first across every head (the longest-processing-time order), or
// within each head (the order before the sections).
struct lpt_across_heads : Base {
  /* CausalOrder = */ static constexpr auto kCausalOrder = kernels::attention::CausalOrder::AcrossHeads;
};
struct within_head : Base {
  /* CausalOrder = */ static constexpr auto kCausalOrder = kernels::attention::CausalOrder::WithinHead;
};
// One chain per row everywhere.
struct one_chain : Base {
  static constexpr HopperTile tile(int head_dim, bool causal) {
    HopperTile t = Base::tile(head_dim, causal);
    t.row_chains = 1;
    return t;
  }
};

// Causal head dim 128 on the non-causal key tiles (176 keys, one chain) or on 192-key tiles:
// fewer, longer tiles spread each tile's fixed cost (barriers, reductions, the hand-over) over
// more keys, at the price of more masked keys on the diagonal.
struct causal_n176 : Base {
  static constexpr HopperTile tile(int head_dim, bool causal) {
    return head_dim > 64 && causal ? HopperTile{2, 176, 240, 1} : Base::tile(head_dim, causal);
  }
};
struct causal_n192 : Base {
  static constexpr HopperTile tile(int head_dim, bool causal) {
    return head_dim > 64 && causal ? HopperTile{2, 192, 240, 1} : Base::tile(head_dim, causal);
  }
  // Its causal tile at every length (the family default's long causal kernel would run the
  // 176-key tile under this name).
  /* LongCausalFromKeys = */ static constexpr int kLongCausalFromKeys = 0;
};
// fp8: the word transpose of V (the family's first fp8 path: 56 producer registers, 224 per
// consumer, V^T's rows in column order) against the matrix transpose of the default.
struct fp8_words : Base {
  /* VTranspose = */ static constexpr auto kVTranspose = kernels::VTranspose::Words;
  /* ProducerRegsFp8 = */ static constexpr int kProducerRegsFp8 = 56;
  static constexpr HopperTile fp8_tile(bool causal) {
    return causal ? HopperTile{2, 128, 224, 4} : HopperTile{2, 192, 224, 1};
  }
};
// fp8 on longer key tiles: FA3's 224 keys without the mask (hopper/tile_size.h, 8-bit head dim
// 128); each tile's fixed cost (barriers, reductions, the hand-over) spreads over
// more keys, at the price of registers (S and P grow).
struct fp8_n224 : Base {
  static constexpr HopperTile fp8_tile(bool causal) { return causal ? Base::fp8_tile(true) : HopperTile{2, 224, 240, 1}; }
};
// fp8 without the mask on four softmax chains per row instead of one: the exp2s are half the
// tile's time in fp8, so a shorter max / sum dependence may matter there when it did not in 16-bit.
struct fp8_chains4 : Base {
  static constexpr HopperTile fp8_tile(bool causal) { return causal ? Base::fp8_tile(true) : HopperTile{2, 192, 240, 4}; }
};
// fp8 without the mask on three consumer warpgroups (192 query rows, 128-key tiles, 160
// registers each), as FA3 does at head dim 64: while one warpgroup's matrix ops run, two can
// be in their softmax, which fp8 makes as long as the matrix ops.
struct fp8_m192 : Base {
  static constexpr HopperTile fp8_tile(bool causal) { return causal ? Base::fp8_tile(true) : HopperTile{3, 128, 160, 1}; }
};
// fp8: the exp2s of every 4th / 3rd / 2nd 8-key block on the FMA pipe (a quarter, a third,
// half of them).
template <int kEvery>
struct fp8_exp2_fma : Base {
  /* Exp2OnFmaEveryFp8 = */ static constexpr int kExp2OnFmaEveryFp8 = kEvery;
};
using fp8_fma4 = fp8_exp2_fma<4>;
using fp8_fma3 = fp8_exp2_fma<3>;
using fp8_fma2 = fp8_exp2_fma<2>;
// fp8: a third V^T stage, so the producer may transpose a tile further ahead of the consumers.
struct fp8_vt3 : Base {
  /* VtStages = */ static constexpr int kVtStages = 3;
};
// fp8: S = Q K^T in two halves of the key tile, the first half's softmax under the second
// half's GEMM.
struct fp8_split_qk : Base {
  /* SplitQkFp8 = */ static constexpr bool kSplitQkFp8 = true;
};
// Persistent CTAs drawing tiles from a counter, holding two ids ahead (the experiment's
// persistent_dynamic) or one.
struct dynamic_two_ahead : Base {
  /* Schedule = */ static constexpr auto kSchedule = kernels::attention::TileSchedule::Dynamic;
};
struct dynamic_one_ahead : dynamic_two_ahead {
  /* TileQueueSlots = */ static constexpr int kTileQueueSlots = 1;
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
