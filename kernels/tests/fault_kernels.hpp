// Kernels with a fault injected on purpose (DecodeFault, PrefillFault), for the tests that
// show the accuracy gate fails them. Head dim 128 only, every dtype the family has: each is
// instantiated once, in its own file, to keep the test binaries small.
#pragma once
#include "kernels/decode/decode_case.hpp"
#include "kernels/prefill/prefill_case.hpp"
#include "kernels/prefill/prefill_policy.hpp"

namespace schedlab::kernels {

// kernels/tests/decode_fault_kernels.cu: SplitRows (the split grid) or TokenBalancedRows (the
// token-balanced work list) with the fault; DecodeFault::none gives the configuration itself,
// the control the family's tests run.
DecodeKernel decode_fault_kernel(DecodeFault fault, TileSchedule schedule = TileSchedule::split);
// kernels/tests/prefill_fault_kernels.cu: the family default with the fault (none: the control).
PrefillLaunch prefill_fault_launch(PrefillFault fault);

}  // namespace schedlab::kernels
