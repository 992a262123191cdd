// The unit-overlap probe on the host: its problem (the GEMM's dtype, passes a launch), the
// launch, and the harness Case and Family that time it like any experiment's kernel.
//
// One CTA a SM (it asks for all the shared memory a block may have), two warpgroups, each in
// the role its variant names (policy.hpp). A pass is one consumer warpgroup's work on a 128-key
// tile of head dim 128: the GEMM 2 x (64 x 128 x 128) multiply-adds (S = Q K^T and O += P V
// have one such product each), as two sweeps of wgmma m64n128 over A B^T; the exponentials one
// a score, 64 a thread, as 16 chains of 4 (x <- 2^-x). In fp8 both take 512 cycles an SMSP on
// the H200's datasheet rates (4096 e4m3 multiply-adds a cycle an SM; MUFU 16 lanes a cycle an
// SM); in bf16 the GEMM takes twice that, as in a bf16 attention kernel.
//
// Outputs, for the accuracy gate: D = 2 A B^T (each GEMM role; A all ones where it is read from
// registers) and each chain's sum over passes of its value after the pass. Inputs are in
// {-1, 0, 1}, so D is exact in any accumulator; the sums are checked to 1e-4 (a pass left out
// moves them by 1 / passes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/dtype.hpp"
#include "common/numeric.hpp"  // SCHEDLAB_HD: the start values, on the host and in the kernel
#include "common/gpu/runtime.hpp"
#include "common/harness/axes.hpp"
#include "common/harness/bench.hpp"
#include "common/harness/experiment.hpp"
#include "experiments/hopper_unit_overlap/policy.hpp"

namespace schedlab::experiments::hopper_unit_overlap {

inline constexpr int kRows = 64;        // a consumer warpgroup's query rows (wgmma's m)
inline constexpr int kCols = 128;       // keys of a tile, the GEMM's n by default
inline constexpr int kMaxN = 256;       // the widest wgmma n a variant asks for
inline constexpr int kDepth = 128;      // head dim, the GEMM's k
inline constexpr int kSweeps = 2;       // QK and PV: two products of this size a pass
// Sweeps of an n-wide GEMM over A B^T (B: n x kDepth) a pass: the same multiply-adds at any n.
constexpr int sweeps_at(int n) { return kSweeps * kCols / n; }
inline constexpr int kChains = 16;      // independent chains a thread (hides MUFU's latency)
inline constexpr int kExp2Steps = 4;    // 16 x 4 = 64 exponentials a thread a pass: 64 x 128 scores
inline constexpr int kFfmaSteps = 32;   // 16 x 32 = 512 FFMAs a thread a pass: one a cycle, 512 cycles
inline constexpr int kFmnmxSteps = 16;  // 16 x 16 = 256 FMNMXs a thread a pass: the ALU pipe takes two cycles each
inline constexpr float kFfmaImm = 0.25f;  // ffma_imm's addend
// fadd's and fmul's operands from a chain's start (in [0.25, 1)), at run time so that nothing
// folds: fadd adds a whole number (1 to 3) from 0, exact in f32; fmul multiplies by 1.
SCHEDLAB_HD inline float fadd_step(float init) { return float(int(init * 4.f)); }
// The softmax roles' scores: 64 a thread (two rows of 32, a warp's share of a 64 x 128 tile),
// score k starting at init[k % 16] (1 + k / 64); each pass replaces them by their
// exponentials, 2^(s - m) with m their row's maximum (scale 1, given at run time).
inline constexpr int kSoftmaxScores = 64, kSoftmaxRow = 32;
SCHEDLAB_HD inline float softmax_start(const float* inits, int k) {
  return inits[k % kChains] * (1.f + float(k) / kSoftmaxScores);
}
constexpr bool is_softmax(Role r) { return r == Role::softmax_ffma || r == Role::softmax_fmul_fadd; }
inline constexpr int kThreads = 256;    // two warpgroups
inline constexpr int kChainFloats = kThreads * kChains;
inline constexpr int kDFloats = kRows * kMaxN;  // D's slot, rows of kMaxN
inline constexpr int kOutFloats = kDFloats + kChainFloats;  // a CTA's outputs: D, then the chains
inline constexpr int kClockSlots = 4;

struct UnitOverlapProblem {
  DType dtype = DType::fp8_e4m3;  // the GEMM's operands
  int passes = 2048;
  void validate() const {
    if (dtype != DType::fp8_e4m3 && dtype != DType::bf16)
      throw InvalidProblem("dtype", std::string(dtype_name(dtype)) + ": the probe's GEMM takes fp8_e4m3 or bf16");
    if (passes < 2 || passes > (1 << 20))
      throw InvalidProblem("passes", std::to_string(passes) + ": 2 to 1048576");
  }
};

struct UnitOverlapArgs {
  const void* a;            // kRows x kDepth, row-major, dtype
  const void* b;            // kMaxN x kDepth, row-major, dtype (an n-wide GEMM reads n rows)
  const float* chain_init;  // kThreads x kChains: each chain's start (FFMA: also its addend)
  float* out;               // ctas x kOutFloats
  unsigned long long* clocks;  // ctas x kClockSlots: the SM's cycles and the shared clock's ns over the
                               // CTA, then the ns at which each warpgroup's role ended
  int passes = 0, ctas = 0;
  DType dtype = DType::fp8_e4m3;
  // Each pass's first wgmma overwrites D where this is true (always). From a kernel argument:
  // with a constant, ptxas drops every pass whose D the next one overwrites.
  bool fresh_d = true;
};

// Checked launch on `stream`; `ctas` CTAs of kThreads threads (one a SM).
template <class Policy>
void launch_unit_overlap(const UnitOverlapArgs& args, gpu::api::stream_t stream);
using UnitOverlapLaunch = void (*)(const UnitOverlapArgs&, gpu::api::stream_t);

// What a role writes, for the gate.
constexpr bool writes_d(Role r) { return r == Role::gemm || r == Role::gemm_rs || r == Role::gemm_then_exp2; }
constexpr bool writes_chains(Role r) {
  return !writes_d(r) ? r != Role::idle && r != Role::mbarrier_wait : r == Role::gemm_then_exp2;
}
constexpr bool runs_exp2(Role r) { return r == Role::exp2 || r == Role::gemm_then_exp2; }

struct RolePair {
  Role wg[2];
  int gemm_n = kCols;
  template <class Policy>
  static RolePair of() {
    return {{Policy::kWarpgroup0, Policy::kWarpgroup1}, Policy::kGemmN};
  }
};

// The double reference of a thread's chains (inits: its kChains starts): each chain's sum over
// passes of its value after the pass.
std::vector<double> chain_reference(Role role, const float* inits, int passes);

class UnitOverlapCase final : public harness::Case {
 public:
  UnitOverlapCase(const UnitOverlapProblem& p, RolePair roles, UnitOverlapLaunch launch);
  void prepare(std::uint64_t seed, int sets) override;
  void poison_output() override;
  void launch(int set) override;
  void synchronize() override;
  std::vector<double> reference(int set) override;
  std::vector<float> output() override;
  Tolerance tolerance() const override { return {1e-4, 1e-4, 1e-4, 0.0}; }
  std::size_t row_length() const override { return kCols; }
  harness::Work work() const override;
  std::size_t input_set_bytes() const override;
  std::size_t device_bytes(int sets) const override;
  std::map<std::string, double> axes() const override { return {{"passes", double(p_.passes)}}; }
  // Over the last launch, means over CTAs: the SMs' clock (GHz; a pair that draws more power may
  // run at a lower clock, which its time would not tell from a collision) and when each
  // warpgroup's role ended (us from the CTA's start: which of a colliding pair yields).
  std::map<std::string, double> extra_counters() const override;

 private:
  struct Set {
    gpu::DeviceBuffer<unsigned char> a, b;
    gpu::DeviceBuffer<float> init;
    std::vector<float> a_host, b_host, init_host;
  };
  bool any_d() const { return writes_d(roles_.wg[0]); }
  UnitOverlapProblem p_;
  RolePair roles_;
  UnitOverlapLaunch launch_;
  int ctas_ = 0;
  std::vector<Set> sets_;
  gpu::DeviceBuffer<float> out_;
  gpu::DeviceBuffer<unsigned long long> clocks_;
};

// The harness's view: shapes from the tier or --schedlab_axes (dtype, passes), one
// registration per variant and shape.
struct UnitOverlapFamily {
  static const harness::FamilyAxes& axes();
  static const harness::TierAxes& tiers();
  static std::vector<UnitOverlapProblem> shapes(const harness::ShapeSelection& selection);
  static std::string shape_name(const UnitOverlapProblem& p);
  template <class Policy>
  static void add(harness::Registry& r, const harness::VariantNames& v, const UnitOverlapProblem& p) {
    r.add<UnitOverlapProblem>(v.experiment + "/" + v.variant + "/" + shape_name(p),
                              harness::record_label("hopper_unit_overlap", v, dtype_name(p.dtype)), p,
                              [](const UnitOverlapProblem& q) {
                                if (Policy::kGemmN > 192 && q.dtype != DType::fp8_e4m3)
                                  throw UnsupportedProblem("a 16-bit wgmma of n " + std::to_string(Policy::kGemmN) +
                                                           " has no wrapper here (192 at most)");
                                return std::make_unique<UnitOverlapCase>(q, RolePair::of<Policy>(),
                                                                         &launch_unit_overlap<Policy>);
                              });
  }
};

}  // namespace schedlab::experiments::hopper_unit_overlap
