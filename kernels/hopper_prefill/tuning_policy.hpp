// Candidates of the Hopper prefill family's tile shape, schedule and softmax, timed side by side
// by bench_hopper_prefill_tuning (kernels/hopper_prefill/README.md has the table). Each is the
// family's default policy with the members its name says changed. Those whose verdict was no
// difference or slower on every shape left the bench; their lines stay in the frozen tuning
// table of kernels/hopper_prefill/LOG.md.
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::hopper_prefill_tuning {

using Base = kernels::HopperPrefillPolicy;
using defaults = Base;  // the family default: its kernels are the family's (hopper_prefill.cu)

// fp8 on cuDNN's shape of pass: 256 keys a tile, S of all of them from one m64n256 GEMM, without
// the intra-warpgroup overlap (a second S does not fit beside this one: with it ptxas spilled
// 288 to 384 bytes), the two consumers' ping-pong left to hide the softmax. Only the fp8 rows
// of this candidate ask the question: its 16-bit kernels run the serial loop too.
struct fp8_n256_serial : Base {
  /* IntraOverlap = */ static constexpr bool kIntraOverlap = false;
  static constexpr kernels::HopperTile fp8_tile(bool /*causal*/) { return {2, 256, 240, 1}; }
};
// The serial loop on the default fp8 tiles, to tell the tile's part from the loop's.
struct fp8_serial : Base {
  /* IntraOverlap = */ static constexpr bool kIntraOverlap = false;
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
