// The probe's kernels: every variant of policy.hpp and the GPU tests' faults, in fp8 e4m3 and
// bf16 (one launch function per policy dispatches on the problem's dtype).
#include "experiments/hopper_unit_overlap/unit_overlap.cuh"

namespace schedlab::experiments::hopper_unit_overlap {

#define SCHEDLAB_UNIT_OVERLAP(Policy) \
  template void launch_unit_overlap<Policy>(const UnitOverlapArgs&, gpu::api::stream_t);
SCHEDLAB_UNIT_OVERLAP(gemm)
SCHEDLAB_UNIT_OVERLAP(gemm_rs)
SCHEDLAB_UNIT_OVERLAP(exp2)
SCHEDLAB_UNIT_OVERLAP(ffma)
SCHEDLAB_UNIT_OVERLAP(ffma_imm)
SCHEDLAB_UNIT_OVERLAP(fmnmx)
SCHEDLAB_UNIT_OVERLAP(gemm_and_exp2)
SCHEDLAB_UNIT_OVERLAP(gemm_rs_and_exp2)
SCHEDLAB_UNIT_OVERLAP(gemm_and_ffma)
SCHEDLAB_UNIT_OVERLAP(gemm_and_ffma_imm)
SCHEDLAB_UNIT_OVERLAP(gemm_and_fmnmx)
SCHEDLAB_UNIT_OVERLAP(gemm_n256)
SCHEDLAB_UNIT_OVERLAP(gemm_n256_and_exp2)
SCHEDLAB_UNIT_OVERLAP(gemm_n256_and_ffma)
SCHEDLAB_UNIT_OVERLAP(gemm_n64)
SCHEDLAB_UNIT_OVERLAP(gemm_n64_and_exp2)
SCHEDLAB_UNIT_OVERLAP(gemm_n64_and_ffma)
SCHEDLAB_UNIT_OVERLAP(gemm_and_mbarrier_wait)
SCHEDLAB_UNIT_OVERLAP(fadd)
SCHEDLAB_UNIT_OVERLAP(fmul)
SCHEDLAB_UNIT_OVERLAP(gemm_and_fadd)
SCHEDLAB_UNIT_OVERLAP(gemm_and_fmul)
SCHEDLAB_UNIT_OVERLAP(softmax_ffma)
SCHEDLAB_UNIT_OVERLAP(softmax_fmul_fadd)
SCHEDLAB_UNIT_OVERLAP(gemm_and_softmax_ffma)
SCHEDLAB_UNIT_OVERLAP(gemm_and_softmax_fmul_fadd)
SCHEDLAB_UNIT_OVERLAP(gemm_then_exp2)
SCHEDLAB_UNIT_OVERLAP(faulty_gemm)
SCHEDLAB_UNIT_OVERLAP(faulty_exp2)
#undef SCHEDLAB_UNIT_OVERLAP

}  // namespace schedlab::experiments::hopper_unit_overlap
