// The family default's kernels (HopperPrefillPolicy), compiled once. The experiment variants
// that are the default (prefill_pingpong's pingpong, prefill_intra_overlap's overlapped,
// prefill_kv_rings' separate) and the tuning bench's `defaults` are aliases of it and link
// this library rather than compiling the same kernels again (read by the static resource report
// under the family's name).
#include "kernels/hopper_prefill/hopper_prefill.cuh"

namespace schedlab::kernels {
template void launch_hopper_prefill<HopperPrefillPolicy>(const PrefillArgs&, gpu::api::stream_t);
template void require_hopper_prefill_fits<HopperPrefillPolicy>(const PrefillProblem&);
}  // namespace schedlab::kernels
