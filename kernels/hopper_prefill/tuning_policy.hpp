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

// fp8 on cuDNN's fp8 loop: 256 keys a tile (S of all of them from one m64n256 GEMM), each
// consumer's GEMMs waited for where issued (the serial loop), issued without ping-pong's turns,
// and the two consumers' exponentials alternating (kExpMeetFp8). Then the same loop without the
// meeting, to tell its part. 16-bit launches change too (the serial loop, no turns): read fp8.
struct fp8_n256_free : Base {
  /* IntraOverlap = */ static constexpr bool kIntraOverlap = false;
  /* PingPong = */ static constexpr bool kPingPong = false;
  static constexpr kernels::HopperTile fp8_tile(bool /*causal*/) { return {2, 256, 240, 1}; }
};
struct fp8_n256_meet : fp8_n256_free {
  /* ExpMeetFp8 = */ static constexpr bool kExpMeetFp8 = true;
};
// cuDNN's fp8 loop with P's packing inside consumer 0's run of exponentials.
struct fp8_n256_meet_packed : fp8_n256_meet {
  /* ExpMeetAfterPackFp8 = */ static constexpr bool kExpMeetAfterPackFp8 = true;
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
