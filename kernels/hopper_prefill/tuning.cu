// Kernel instantiations of the Hopper prefill tuning candidates (tuning_policy.hpp), one per
// candidate:
//   template void launch_hopper_prefill<tuning::name>(const PrefillArgs&, gpu::api::stream_t);
//   template void require_hopper_prefill_fits<tuning::name>(const PrefillProblem&);
// with hopper_prefill.cuh and tuning_policy.hpp included and `namespace tuning =
// experiments::hopper_prefill_tuning;` inside namespace schedlab::kernels. None is open: the
// bench times the family default (`defaults`, whose kernels are the family library's).
