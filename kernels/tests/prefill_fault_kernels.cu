// The flash prefill kernel with each PrefillFault, at head dim 128 (kernels/tests/fault_kernels.hpp);
// PrefillFault::none is the family default, the faults' control.
#include <stdexcept>

#include "kernels/prefill/flash_prefill.cuh"
#include "kernels/tests/fault_kernels.hpp"

namespace schedlab::kernels {
namespace {

template <PrefillFault kF>
struct Faulty : PrefillPolicy {
  /* Fault = */ static constexpr PrefillFault kFault = kF;
};

template <class Policy>
void launch_at_128(const PrefillArgs& args, gpu::api::stream_t stream) {
  require_support(args.problem, flash_prefill_support());
  if (args.problem.head_dim != 128) throw std::invalid_argument("fault kernels run at head dim 128");
  const PrefillPlan plan = plan_prefill_on_device<Policy>(args.problem);  // gfx942: the cut key tile
  if (args.problem.dtype == DType::bf16) prefill_detail::launch_on_arch<Policy, DType::bf16, 128>(plan, args, stream);
  else if (args.problem.dtype == DType::f16) prefill_detail::launch_on_arch<Policy, DType::f16, 128>(plan, args, stream);
  else prefill_detail::launch_on_arch<Policy, DType::fp8_e4m3, 128>(plan, args, stream);
}

}  // namespace

PrefillLaunch prefill_fault_launch(PrefillFault fault) {
  switch (fault) {
    case PrefillFault::drop_tile: return launch_at_128<Faulty<PrefillFault::drop_tile>>;
    case PrefillFault::stale_tile: return launch_at_128<Faulty<PrefillFault::stale_tile>>;
    case PrefillFault::skip_mask: return launch_at_128<Faulty<PrefillFault::skip_mask>>;
    case PrefillFault::none: return launch_at_128<Faulty<PrefillFault::none>>;  // the family default
  }
  throw std::invalid_argument("prefill_fault_launch: unknown fault");
}

}  // namespace schedlab::kernels
