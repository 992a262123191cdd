// Seed 001 (flashinfer ROCm port PR 212): K/V tiles staged through shared memory by async
// global->shared copies. One K and one V buffer (FA2's split waits: K(j+1) loads during
// softmax and PV(j), V(j+1) during QK(j+1)) against two of each (tile j+1 loads during all
// of tile j), and the XOR-swizzled layout against rows padded by 16 bytes.
#pragma once
#include "kernels/prefill/prefill_policy.hpp"

namespace schedlab::experiments::prefill_lds_buffers {

struct single : kernels::PrefillPolicy {
  /* KvBuffers = */ static constexpr int kKvBuffers = 1;
};
struct double_buffer : kernels::PrefillPolicy {
  /* KvBuffers = */ static constexpr int kKvBuffers = 2;
};
struct double_padded : kernels::PrefillPolicy {
  /* KvBuffers = */ static constexpr int kKvBuffers = 2;
  /* Layout = */ static constexpr kernels::SmemLayout kLayout = kernels::SmemLayout::Padded;
};

}  // namespace schedlab::experiments::prefill_lds_buffers
