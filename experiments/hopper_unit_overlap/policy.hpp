// Which unit each of the probe's two warpgroups keeps busy. The question: on the H200, does one
// warpgroup's stream of exponentials (MUFU.EX2) run while another warpgroup's wgmma runs, as
// FlashAttention-3's ping-pong assumes (one consumer's softmax under the other's GEMMs), or do
// the two take turns? An fp8 attention kernel needs as much MUFU time as tensor-core time a key
// (head dim 128), so the answer bounds how far any schedule of its loop can go.
//
// A variant is a pair of roles; the kernel (unit_overlap.cuh) gives each role the work of one
// consumer warpgroup's 128-key tile a pass (unit_overlap.hpp, kPassWork): alone, the GEMM and the
// exponentials of a pass take about as long in fp8.
#pragma once
#include <string_view>

#include "common/harness/variant_list.hpp"

namespace schedlab::experiments::hopper_unit_overlap {

enum class Role {
  idle,            // exits at once
  gemm,            // wgmma, A and B from shared memory (S = Q K^T's form), one group a pass
  gemm_rs,         // wgmma, A from registers (O += P V's form)
  exp2,            // MUFU.EX2 on 16 independent chains a thread
  ffma,            // FFMA on 16 independent chains a thread, as many issue cycles as exp2's MUFU time
  ffma_imm,        // the same with one register operand (x / 2 + 0.25), two fewer register reads each
  fmnmx,           // FMNMX (the ALU pipe, the row maxima's instruction), as many pipe cycles
  fadd,            // FADD on 16 chains, as many as ffma's FFMAs (cuDNN's fp8 softmax subtracts
  fmul,            // FMUL   with an FADD after an FMUL where ours takes one FFMA)
  softmax_ffma,    // a softmax's instruction mix on 64 scores a thread a pass (two rows of 32):
                   // the rows' maxima (FMNMX), then each score's exponent as one FFMA, its
                   // exp2 and its row sum's FADD in turn, as the Hopper family's fp8 loop
  softmax_fmul_fadd,  // the same as cuDNN's fp8 loop: the exponent an FMUL and an FADD, the
                      // row sums after all the exponentials
  mbarrier_wait,   // waits on an mbarrier that warpgroup 0 completes when its GEMM is done, as a
                   // producer warp waits for a slot: its retries are all it issues
  gemm_then_exp2,  // one warpgroup issues a pass's GEMM, then its exponentials, then waits for
                   // the GEMM (the intra-warpgroup overlap's form)
};

// A fault the GPU tests inject to prove the accuracy gate sees a pass not done.
enum class Fault { none, gemm_pass, exp2_pass };

// kN: the GEMM's wgmma n (keys a matrix op covers; a pass's multiply-adds stay the same).
template <Role kWg0, Role kWg1, Fault kF = Fault::none, int kN = 128>
struct Roles {
  static constexpr Role kWarpgroup0 = kWg0, kWarpgroup1 = kWg1;
  static constexpr Fault kFault = kF;
  static constexpr int kGemmN = kN;
};

// Alone: the time of each unit's work by itself.
struct gemm : Roles<Role::gemm, Role::idle> {
  static constexpr std::string_view kName = "gemm";
};
struct gemm_rs : Roles<Role::gemm_rs, Role::idle> {
  static constexpr std::string_view kName = "gemm_rs";
};
struct exp2 : Roles<Role::idle, Role::exp2> {
  static constexpr std::string_view kName = "exp2";
};
struct ffma : Roles<Role::idle, Role::ffma> {
  static constexpr std::string_view kName = "ffma";
};
// Together, in two warpgroups: max(alone) if the units overlap, the sum if they take turns.
struct gemm_and_exp2 : Roles<Role::gemm, Role::exp2> {
  static constexpr std::string_view kName = "gemm_and_exp2";
};
struct gemm_rs_and_exp2 : Roles<Role::gemm_rs, Role::exp2> {
  static constexpr std::string_view kName = "gemm_rs_and_exp2";
};
// The control: another warpgroup as busy issuing, on the FMA pipe instead of MUFU.
struct gemm_and_ffma : Roles<Role::gemm, Role::ffma> {
  static constexpr std::string_view kName = "gemm_and_ffma";
};
struct ffma_imm : Roles<Role::idle, Role::ffma_imm> {
  static constexpr std::string_view kName = "ffma_imm";
};
struct fmnmx : Roles<Role::idle, Role::fmnmx> {
  static constexpr std::string_view kName = "fmnmx";
};
// Whether what another warpgroup's instructions cost the GEMM is their register reads or their
// issue: the FFMAs with immediates, and the ALU pipe's FMNMX.
struct gemm_and_ffma_imm : Roles<Role::gemm, Role::ffma_imm> {
  static constexpr std::string_view kName = "gemm_and_ffma_imm";
};
struct gemm_and_fmnmx : Roles<Role::gemm, Role::fmnmx> {
  static constexpr std::string_view kName = "gemm_and_fmnmx";
};
// The GEMM's n, as wide as cuDNN's fp8 QK (m64n256, fp8 only here) and as narrow as m64n64:
// whether a wider matrix op leaves more room beside it.
struct gemm_n256 : Roles<Role::gemm, Role::idle, Fault::none, 256> {
  static constexpr std::string_view kName = "gemm_n256";
};
struct gemm_n256_and_exp2 : Roles<Role::gemm, Role::exp2, Fault::none, 256> {
  static constexpr std::string_view kName = "gemm_n256_and_exp2";
};
struct gemm_n256_and_ffma : Roles<Role::gemm, Role::ffma, Fault::none, 256> {
  static constexpr std::string_view kName = "gemm_n256_and_ffma";
};
struct gemm_n64 : Roles<Role::gemm, Role::idle, Fault::none, 64> {
  static constexpr std::string_view kName = "gemm_n64";
};
struct gemm_n64_and_exp2 : Roles<Role::gemm, Role::exp2, Fault::none, 64> {
  static constexpr std::string_view kName = "gemm_n64_and_exp2";
};
struct gemm_n64_and_ffma : Roles<Role::gemm, Role::ffma, Fault::none, 64> {
  static constexpr std::string_view kName = "gemm_n64_and_ffma";
};
struct fadd : Roles<Role::idle, Role::fadd> {
  static constexpr std::string_view kName = "fadd";
};
struct fmul : Roles<Role::idle, Role::fmul> {
  static constexpr std::string_view kName = "fmul";
};
struct gemm_and_fadd : Roles<Role::gemm, Role::fadd> {
  static constexpr std::string_view kName = "gemm_and_fadd";
};
struct gemm_and_fmul : Roles<Role::gemm, Role::fmul> {
  static constexpr std::string_view kName = "gemm_and_fmul";
};
// A softmax's mix beside the GEMM, in the two forms: whether the form changes what it costs.
struct softmax_ffma : Roles<Role::idle, Role::softmax_ffma> {
  static constexpr std::string_view kName = "softmax_ffma";
};
struct softmax_fmul_fadd : Roles<Role::idle, Role::softmax_fmul_fadd> {
  static constexpr std::string_view kName = "softmax_fmul_fadd";
};
struct gemm_and_softmax_ffma : Roles<Role::gemm, Role::softmax_ffma> {
  static constexpr std::string_view kName = "gemm_and_softmax_ffma";
};
struct gemm_and_softmax_fmul_fadd : Roles<Role::gemm, Role::softmax_fmul_fadd> {
  static constexpr std::string_view kName = "gemm_and_softmax_fmul_fadd";
};
// Warps retrying an mbarrier wait beside the GEMM (no time alone: it waits for the GEMM).
struct gemm_and_mbarrier_wait : Roles<Role::gemm, Role::mbarrier_wait> {
  static constexpr std::string_view kName = "gemm_and_mbarrier_wait";
};
// Both kinds of work in one warpgroup (the other idle).
struct gemm_then_exp2 : Roles<Role::gemm_then_exp2, Role::idle> {
  static constexpr std::string_view kName = "gemm_then_exp2";
};

using Variants = harness::VariantList<gemm, gemm_rs, exp2, ffma, ffma_imm, fmnmx, gemm_and_exp2, gemm_rs_and_exp2,
                                      gemm_and_ffma, gemm_and_ffma_imm, gemm_and_fmnmx, gemm_n256, gemm_n256_and_exp2,
                                      gemm_n256_and_ffma, gemm_n64, gemm_n64_and_exp2, gemm_n64_and_ffma, gemm_and_mbarrier_wait,
                                      fadd, fmul, gemm_and_fadd, gemm_and_fmul, softmax_ffma, softmax_fmul_fadd,
                                      gemm_and_softmax_ffma, gemm_and_softmax_fmul_fadd, gemm_then_exp2>;

// The GPU tests' faults: the last pass's GEMM a sweep short; a chain's sum a pass short.
using faulty_gemm = Roles<Role::gemm, Role::exp2, Fault::gemm_pass>;
using faulty_exp2 = Roles<Role::gemm, Role::exp2, Fault::exp2_pass>;

}  // namespace schedlab::experiments::hopper_unit_overlap
