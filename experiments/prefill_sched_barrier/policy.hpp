// Seed 003: the first K shared->register load of a tile left to the compiler, against
// pinned between the PV and QK matrix groups by sched_barrier, and (AMD) a
// sched_group_barrier interleaving of matrix ops with shared reads inside the QK gemm.
// On NVIDIA every hint is a no-op (gpu::kSchedHintsHonored == false).
#pragma once
#include "kernels/prefill/prefill_policy.hpp"

namespace schedlab::experiments::prefill_sched_barrier {

struct compiler : kernels::PrefillPolicy {
  /* KLoad = */ static constexpr kernels::KLoadSchedule kKLoad = kernels::KLoadSchedule::Compiler;
};
struct pinned : kernels::PrefillPolicy {
  /* KLoad = */ static constexpr kernels::KLoadSchedule kKLoad = kernels::KLoadSchedule::Pinned;
};
struct interleaved : kernels::PrefillPolicy {
  /* KLoad = */ static constexpr kernels::KLoadSchedule kKLoad = kernels::KLoadSchedule::Interleaved;
};

}  // namespace schedlab::experiments::prefill_sched_barrier
