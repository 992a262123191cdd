// Candidates of the Hopper prefill family's tile shape, schedule and softmax, timed side by side
// by bench_hopper_prefill_tuning (kernels/hopper_prefill/README.md has the table). Each is the
// family's default policy with the members its name says changed. Those whose verdict was no
// difference or slower on every shape left the bench; their lines stay in the frozen tuning
// table of kernels/hopper_prefill/LOG.md.
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::hopper_prefill_tuning {

using Base = kernels::HopperPrefillPolicy;
struct defaults : Base {};
// Persistent CTAs on the static walk (one per SM): the next tile's Q and K/V load under this
// one's last GEMMs and output, as the 16-bit short kernels do without the mask up to 16384
// keys. fp8 has no short kernel, so its launches pay a CTA's prologue and epilogue every tile.
// (16-bit launches run this schedule at every length here, not the short kernels.)
struct fp8_persistent : Base {
  /* Schedule = */ static constexpr kernels::attention::TileSchedule kSchedule = kernels::attention::TileSchedule::Persistent;
};
// Three K and V stages: at 192 fp8 keys, with V^T's two, 227 KiB of shared memory (16-bit head
// dim 128 does not fit and is refused).
struct fp8_stages3 : Base {
  /* Stages = */ static constexpr int kStages = 3;
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
