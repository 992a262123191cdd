// Seed 003 (gfx950 fp8 forward kernel): K and V register tiles in one union, so the V
// fragments are loaded into the K storage only after the QK matrix ops finish, against
// separate registers, which let V's first fragments load before the last QK matrix ops
// (there: 515.7 -> 497.5 us with the K load pinned too; .vgpr_count 172 -> 172).
#pragma once
#include "kernels/prefill/prefill_policy.hpp"

namespace schedlab::experiments::prefill_kv_tiles {

struct kv_union : kernels::PrefillPolicy {
  /* KvFragments = */ static constexpr kernels::KvFragments kKvFragments = kernels::KvFragments::Union;
};
struct kv_separate : kernels::PrefillPolicy {
  /* KvFragments = */ static constexpr kernels::KvFragments kKvFragments = kernels::KvFragments::Separate;
};

}  // namespace schedlab::experiments::prefill_kv_tiles
