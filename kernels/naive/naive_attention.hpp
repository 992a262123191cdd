// The simplest correct forward attention: one block per query row, scores recomputed in
// two passes (max, then exp-sum and P*V in chunks). Speed is not its purpose; it is the
// end-to-end check of the harness and a second opinion for the fast kernels.
#pragma once
#include "kernels/prefill/prefill_case.hpp"

namespace schedlab::kernels {

void launch_naive_attention(const PrefillArgs& args, gpu::api::stream_t stream);
KernelSupport naive_attention_support();

}  // namespace schedlab::kernels
