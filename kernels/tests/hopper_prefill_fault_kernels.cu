// The Hopper prefill kernel with each HopperFault, fp8 e4m3 at head dim 128 but where said (declared in
// kernels/tests/test_hopper_prefill_gpu.cpp, its one user); HopperFault::none is the family
// default, the fault's control. The narrow last tile's fault runs in kernels under the mask that
// have it: fp8's (Fp8MeetCausal<Policy>) and bf16's at head dim 64 of one CTA a tile. A split tile's fault runs in a kernel that splits tiles: the
// short kernel without the mask at head dim 128, bf16's (ShortSeq<Policy, false>) or fp8's
// (ShortSeq<Fp8Meet<Policy>, false>, whose whole tiles run a body of their own).
#include <stdexcept>

#include "kernels/hopper_prefill/hopper_prefill.cuh"

namespace schedlab::kernels {

PrefillLaunch hopper_prefill_fault_launch(HopperFault fault);

namespace {

template <HopperFault kF>
struct Faulty : HopperPrefillPolicy {
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

template <class Policy>
void launch_narrow_last(const PrefillArgs& args, gpu::api::stream_t stream) {
  const PrefillProblem& p = args.problem;
  require_support(p, hopper_prefill_support());
  const bool fp8 = p.dtype == DType::fp8_e4m3 && p.head_dim == 128, bf16 = p.dtype == DType::bf16 && p.head_dim == 64;
  if (!p.causal || !(fp8 || bf16))
    throw std::invalid_argument("the narrow last tile's fault kernels run under the mask, fp8 at head dim 128 or bf16 at 64");
  if (fp8) hopper_detail::launch_for<Fp8MeetCausal<Policy>, DType::fp8_e4m3, 128, true>(args, stream);
  else hopper_detail::launch_for<Policy, DType::bf16, 64, true>(args, stream);
}

template <class Policy>
void launch_open_short(const PrefillArgs& args, gpu::api::stream_t stream) {
  const PrefillProblem& p = args.problem;
  require_support(p, hopper_prefill_support());
  if (p.head_dim != 128 || p.causal || (p.dtype != DType::bf16 && p.dtype != DType::fp8_e4m3))
    throw std::invalid_argument("the split tile's fault kernels run bf16 or fp8 at head dim 128 without the mask");
  if (p.dtype == DType::bf16) hopper_detail::launch_for<ShortSeq<Policy, false>, DType::bf16, 128, false>(args, stream);
  else hopper_detail::launch_for<ShortSeq<Fp8Meet<Policy>, false>, DType::fp8_e4m3, 128, false>(args, stream);
}

}  // namespace

PrefillLaunch hopper_prefill_fault_launch(HopperFault fault) {
  switch (fault) {
    case HopperFault::vt_key_order: return launch_fp8_at_128<Faulty<HopperFault::vt_key_order>>;
    case HopperFault::ragged_longest_lens: return launch_fp8_at_128<Faulty<HopperFault::ragged_longest_lens>>;
    case HopperFault::split_pieces_unmerged: return launch_open_short<Faulty<HopperFault::split_pieces_unmerged>>;
    case HopperFault::narrow_last_short: return launch_narrow_last<Faulty<HopperFault::narrow_last_short>>;
    case HopperFault::none: return launch_fp8_at_128<Faulty<HopperFault::none>>;  // the family default
  }
  throw std::invalid_argument("hopper_prefill_fault_launch: unknown fault");
}

}  // namespace schedlab::kernels
