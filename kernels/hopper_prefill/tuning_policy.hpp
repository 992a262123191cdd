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
// Fp8Meet's loop under the mask too (256-key tiles, one CTA a tile; the ragged batches): faster,
// not adopted while it would take the question out of prefill_pingpong's and
// prefill_intra_overlap's fp8 causal rows (LOG.md, "Fp8Meet's meeting both ways").
using fp8_meet_all = kernels::Fp8Meet<Base>;
// Every launch on persistent CTAs drawing their tiles from a counter (the dynamic schedule; the
// copying thread draws at fp8): here for fp8 under the mask, whose default is one CTA a tile.
struct fp8_causal_dynamic : Base {
  /* Schedule = */ static constexpr kernels::attention::TileSchedule kSchedule = kernels::attention::TileSchedule::Dynamic;
};
// Both: Fp8Meet's loop under the mask on the dynamic schedule.
struct fp8_meet_dynamic : kernels::Fp8Meet<Base> {
  /* Schedule = */ static constexpr kernels::attention::TileSchedule kSchedule = kernels::attention::TileSchedule::Dynamic;
};

}  // namespace schedlab::experiments::hopper_prefill_tuning
