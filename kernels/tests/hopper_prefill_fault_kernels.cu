// The Hopper prefill kernel with each HopperFault, fp8 e4m3 at head dim 128 (declared in
// kernels/tests/test_hopper_prefill_gpu.cu, its one user).
#include <stdexcept>

#include "experiments/prefill_pingpong/policy.hpp"
#include "kernels/hopper_prefill/hopper_prefill.cuh"

namespace schedlab::kernels {

PrefillLaunch hopper_prefill_fault_launch(HopperFault fault);

namespace {

template <HopperFault kF>
struct Faulty : experiments::prefill_pingpong::pingpong {
  /* Fault = */ static constexpr HopperFault kFault = kF;
};

template <class Policy>
void launch_fp8_at_128(const PrefillArgs& args, gpu::api::stream_t stream) {
  require_support(args.problem, hopper_prefill_support());
  if (args.problem.dtype != DType::fp8_e4m3 || args.problem.head_dim != 128)
    throw std::invalid_argument("hopper fault kernels run fp8 at head dim 128");
  if (args.problem.causal) hopper_detail::launch_for<Policy, DType::fp8_e4m3, 128, true>(args, stream);
  else hopper_detail::launch_for<Policy, DType::fp8_e4m3, 128, false>(args, stream);
}

}  // namespace

PrefillLaunch hopper_prefill_fault_launch(HopperFault fault) {
  switch (fault) {
    case HopperFault::vt_key_order: return launch_fp8_at_128<Faulty<HopperFault::vt_key_order>>;
    case HopperFault::none: break;
  }
  throw std::invalid_argument("hopper_prefill_fault_launch: no fault named");
}

}  // namespace schedlab::kernels
