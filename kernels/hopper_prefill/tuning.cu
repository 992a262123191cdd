// Kernel instantiations of the Hopper prefill tuning candidates (tuning_policy.hpp); the bench's
// `defaults` is the family default, whose kernels are the family library's (hopper_prefill.cu).
#include "kernels/hopper_prefill/hopper_prefill.cuh"
#include "kernels/hopper_prefill/tuning_policy.hpp"

namespace schedlab::kernels {
namespace tuning = experiments::hopper_prefill_tuning;
#define SCHEDLAB_TUNING_CANDIDATE(name)                                                  \
  template void launch_hopper_prefill<tuning::name>(const PrefillArgs&, gpu::api::stream_t); \
  template void require_hopper_prefill_fits<tuning::name>(const PrefillProblem&);
SCHEDLAB_TUNING_CANDIDATE(whole_tail)
SCHEDLAB_TUNING_CANDIDATE(whole_last)
}  // namespace schedlab::kernels
