// Seed 003 (a CK fp8 forward kernel on gfx950, head dim 128, seq 8192) held its K and V tiles
// in one union of registers to save registers; the union made K's next load wait for the
// P V matrix ops that read V, and separate registers took the time from 515.7 to 497.5 us and
// the memory-wait share from 31% to 19%. Here the tiles live in shared memory (wgmma reads its
// operands there): K and V of a step in one slot, V(j) copied in once S = Q K(j)^T has read
// K(j), against K and V in rings of their own (the family default).
#pragma once
#include "kernels/hopper_prefill/hopper_policy.hpp"

namespace schedlab::experiments::prefill_kv_rings {

// The family default, K and V in rings of their own (kKvUnion false); its kernels are the
// family's (kernels/hopper_prefill/hopper_prefill.cu).
using separate = kernels::HopperPrefillPolicy;
static_assert(!separate::kKvUnion);
struct union_slot : kernels::HopperPrefillPolicy {
  /* KvUnion = */ static constexpr bool kKvUnion = true;
};
// The union in the separate rings' shared memory: four slots, so K(j + 2) no longer waits for
// the readers of V(j) (they hold another slot), while V(j)'s copy still waits for QK(j). Its
// difference from union_slot is what the halved ring costs; what is left against separate is
// the wait for QK(j).
struct union_4slots : union_slot {
  /* Stages = */ static constexpr int kStages = 4;
};

}  // namespace schedlab::experiments::prefill_kv_rings
