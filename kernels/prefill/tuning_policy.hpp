// Tile-shape and build-flag candidates of the flash prefill kernel, timed side by side by
// bench_prefill_tuning (not an experiment: it picks the PrefillPolicy defaults).
// The *_ftz variants are the same policies instantiated in a translation unit built with
// -ftz=true (tuning_ftz.cu), so exp2f compiles to a bare MUFU.EX2 without denormal fix-up.
#pragma once
#include "kernels/prefill/prefill_policy.hpp"

namespace schedlab::experiments::prefill_tuning {

struct w8_n64 : kernels::PrefillPolicy {};
struct w4_n64 : kernels::PrefillPolicy {
  /* Warps = */ static constexpr int kWarps = 4;
};
struct w8_n64_ftz : kernels::PrefillPolicy {};
struct w4_n64_ftz : kernels::PrefillPolicy {
  /* Warps = */ static constexpr int kWarps = 4;
};

}  // namespace schedlab::experiments::prefill_tuning
