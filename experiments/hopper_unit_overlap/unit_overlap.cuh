// The unit-overlap probe's kernel (sm_90a): two warpgroups, each keeping one unit busy in the
// role its policy names (policy.hpp), on the work unit_overlap.hpp sizes. Its time alone and
// beside another role says whether the two units run at once.
#pragma once
#include <cstdint>

#include "common/gpu/device.hpp"
#include "common/gpu/launch.hpp"
#include "common/gpu/runtime.hpp"
#include "common/gpu/warp_mma.hpp"
#include "common/gpu/warpgroup.hpp"
#include "experiments/hopper_unit_overlap/unit_overlap.hpp"

namespace schedlab::experiments::hopper_unit_overlap {
namespace detail {

namespace wgmma = gpu::wgmma;

inline constexpr int kRowBytes = 128;    // a swizzled row of the tile layout
inline constexpr int kAtomBytes = 1024;  // 8 swizzled rows: the descriptors' stride offset
inline constexpr int kStepBytes = 32;    // one wgmma's k: 16 bf16 or 32 e4m3 values
inline constexpr int kStepsPerRow = kRowBytes / kStepBytes;

template <DType kT>
struct Operand;
template <>
struct Operand<DType::fp8_e4m3> {
  using Op = wgmma::E4m3;
  static constexpr int kBytes = 1;
  static constexpr std::uint32_t kOnes = 0x38383838u;  // four e4m3 1.0
};
template <>
struct Operand<DType::bf16> {
  using Op = gpu::mma::Bf16;
  static constexpr int kBytes = 2;
  static constexpr std::uint32_t kOnes = 0x3F803F80u;  // two bf16 1.0
};

template <DType kT>
inline constexpr int kTileBytes = kDepth * Operand<kT>::kBytes;  // a row of A or B
template <DType kT>
inline constexpr int kSteps = kTileBytes<kT> / kStepBytes;  // wgmma k steps over kDepth

// A row-major `rows` x kDepth matrix into shared memory as a bulk copy leaves a tile: blocks of
// 128-byte rows (each block rows x 128 bytes, 1024-byte aligned), a row's 16-byte chunks
// XORed with its index mod 8 (the 128-byte swizzle the descriptors name).
template <DType kT>
__device__ void stage_swizzled(unsigned char* dst, const unsigned char* src, int rows) {
  constexpr int kChunks = kTileBytes<kT> / 16, kChunksPerRow = kRowBytes / 16;
  for (int i = threadIdx.x; i < rows * kChunks; i += blockDim.x) {
    const int r = i / kChunks, c = i % kChunks;
    const int block = c / kChunksPerRow, chunk = c % kChunksPerRow;
    *reinterpret_cast<uint4*>(dst + block * rows * kRowBytes + r * kRowBytes + ((chunk ^ (r % 8)) * 16)) =
        reinterpret_cast<const uint4*>(src)[i];
  }
}

// One pass's GEMM, one group: kSweepsNow sweeps of wgmma m64nN over A B^T, the first step
// overwriting D where `fresh` (UnitOverlapArgs::fresh_d). A from shared memory (kFromRegisters
// false) or all ones from registers.
template <DType kT, bool kFromRegisters, int kSweepsNow, int kN>
__device__ __forceinline__ void issue_pass(float (&d)[kN / 2], std::uint64_t a0, std::uint64_t b0, bool fresh) {
  using Op = typename Operand<kT>::Op;
  constexpr std::uint32_t kOnes = Operand<kT>::kOnes;
  const std::uint32_t ones[4] = {kOnes, kOnes, kOnes, kOnes};
  wgmma::fence();
#pragma unroll
  for (int sweep = 0; sweep < kSweepsNow; ++sweep) {
#pragma unroll
    for (int kk = 0; kk < kSteps<kT>; ++kk) {
      const int block = kk / kStepsPerRow, in_row = (kk % kStepsPerRow) * kStepBytes;
      const std::uint64_t b = wgmma::advance(b0, block * kN * kRowBytes + in_row);
      const bool accumulate = sweep > 0 || kk > 0 || !fresh;
      if constexpr (kFromRegisters)
        wgmma::mma_rs<kN, Op, false>(d, ones, b, accumulate);
      else
        wgmma::mma_ss<kN, Op>(d, wgmma::advance(a0, block * kRows * kRowBytes + in_row), b, accumulate);
    }
  }
  wgmma::commit();
}

// One pass's exponentials: 4 steps of x <- 2^-x on each chain (MUFU.EX2 with a negated
// operand), then each chain's value added to its sum.
__device__ __forceinline__ void exp2_pass(float (&x)[kChains], float (&sum)[kChains]) {
#pragma unroll
  for (int s = 0; s < kExp2Steps; ++s)
#pragma unroll
    for (int i = 0; i < kChains; ++i) x[i] = gpu::mma::fast_exp2(-x[i]);
#pragma unroll
  for (int i = 0; i < kChains; ++i) sum[i] += x[i];
}

// One pass's FFMAs: 32 steps of x <- x / 2 + b on each chain, then the sums.
__device__ __forceinline__ void ffma_pass(float (&x)[kChains], const float (&b)[kChains], float (&sum)[kChains]) {
#pragma unroll
  for (int s = 0; s < kFfmaSteps; ++s)
#pragma unroll
    for (int i = 0; i < kChains; ++i) x[i] = __fmaf_rn(x[i], 0.5f, b[i]);
#pragma unroll
  for (int i = 0; i < kChains; ++i) sum[i] += x[i];
}

// One pass's FFMAs with immediates: x <- x / 2 + 0.25, one register read each.
__device__ __forceinline__ void ffma_imm_pass(float (&x)[kChains], float (&sum)[kChains]) {
#pragma unroll
  for (int s = 0; s < kFfmaSteps; ++s)
#pragma unroll
    for (int i = 0; i < kChains; ++i) x[i] = __fmaf_rn(x[i], 0.5f, kFfmaImm);
#pragma unroll
  for (int i = 0; i < kChains; ++i) sum[i] += x[i];
}

// One pass's FMNMXs: each chain takes the larger of itself and the next chain (two register
// reads, as a row maximum's step), so the largest start spreads to every chain.
__device__ __forceinline__ void fmnmx_pass(float (&x)[kChains], float (&sum)[kChains]) {
#pragma unroll
  for (int s = 0; s < kFmnmxSteps; ++s)
#pragma unroll
    for (int i = 0; i < kChains; ++i) x[i] = fmaxf(x[i], x[(i + 1) % kChains]);
#pragma unroll
  for (int i = 0; i < kChains; ++i) sum[i] += x[i];
}

// One pass's FADDs (x <- x + b) or FMULs (x <- x * c), 32 steps a chain like ffma_pass.
template <Role kRole>
__device__ __forceinline__ void add_or_mul_pass(float (&x)[kChains], const float (&operand)[kChains],
                                                float (&sum)[kChains]) {
#pragma unroll
  for (int s = 0; s < kFfmaSteps; ++s)
#pragma unroll
    for (int i = 0; i < kChains; ++i) x[i] = kRole == Role::fadd ? __fadd_rn(x[i], operand[i]) : __fmul_rn(x[i], operand[i]);
#pragma unroll
  for (int i = 0; i < kChains; ++i) sum[i] += x[i];
}

// One pass of a softmax's mix (Role::softmax_ffma or softmax_fmul_fadd) on 64 scores in two
// rows; the row sums into l. Outputs: l, then the first scores.
template <Role kRole>
__device__ __forceinline__ void softmax_pass(float (&s)[kSoftmaxScores], float scale, float (&l)[2]) {
  float m[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {  // the rows' maxima: two chains a row, folded
    float a = s[r * kSoftmaxRow], b = s[r * kSoftmaxRow + 1];
#pragma unroll
    for (int k = 2; k < kSoftmaxRow; k += 2) {
      a = fmaxf(a, s[r * kSoftmaxRow + k]);
      b = fmaxf(b, s[r * kSoftmaxRow + k + 1]);
    }
    m[r] = fmaxf(a, b) * scale;
  }
  if constexpr (kRole == Role::softmax_ffma) {
#pragma unroll
    for (int k = 0; k < kSoftmaxScores; ++k) {
      s[k] = gpu::mma::fast_exp2(fmaf(s[k], scale, -m[k / kSoftmaxRow]));
      l[k / kSoftmaxRow] += s[k];
    }
  } else {
#pragma unroll
    for (int k = 0; k < kSoftmaxScores; ++k)
      s[k] = gpu::mma::fast_exp2(__fadd_rn(__fmul_rn(s[k], scale), -m[k / kSoftmaxRow]));
#pragma unroll
    for (int k = 0; k < kSoftmaxScores; ++k) l[k / kSoftmaxRow] += s[k];
  }
}

// D to the CTA's output, rows of kMaxN: thread (warp w, lane g * 4 + q) holds rows 16w + g and
// 16w + g + 8 of each 8-column block, columns 2q and 2q + 1 (the m16n8 C layout).
template <int kN>
__device__ __forceinline__ void store_d(const float (&d)[kN / 2], float* out) {
  const int t = threadIdx.x % gpu::kWarpGroupThreads, w = t / 32, g = (t % 32) / 4, q = t % 4;
#pragma unroll
  for (int j = 0; j < kN / 8; ++j) {
    const int row = 16 * w + g, col = 8 * j + 2 * q;
    out[row * kMaxN + col] = d[4 * j];
    out[row * kMaxN + col + 1] = d[4 * j + 1];
    out[(row + 8) * kMaxN + col] = d[4 * j + 2];
    out[(row + 8) * kMaxN + col + 1] = d[4 * j + 3];
  }
}

template <Role kRole, Fault kFault, DType kT, int kN>
__device__ void run_role(const UnitOverlapArgs& args, const unsigned char* a_tile, const unsigned char* b_tile,
                         float* out, std::uint64_t* gemm_done) {
  if constexpr (kRole == Role::idle) {
    return;
  } else if constexpr (kRole == Role::mbarrier_wait) {
    gpu::mbarrier_wait(gemm_done, 0);  // each lane retries, as the prefill's pipeline waits do
  } else {
    const int passes = args.passes;
    float x[kChains], b[kChains], sum[kChains];
#pragma unroll
    for (int i = 0; i < kChains; ++i) {
      x[i] = b[i] = args.chain_init[threadIdx.x * kChains + i];
      sum[i] = 0.f;
    }
    if constexpr (writes_d(kRole)) {
      constexpr bool kRs = kRole == Role::gemm_rs;
      const std::uint64_t a0 = wgmma::descriptor(a_tile, 16, kAtomBytes), b0 = wgmma::descriptor(b_tile, 16, kAtomBytes);
      constexpr int kPassSweeps = sweeps_at(kN);
      float d[kN / 2];
      for (int p = 0; p < passes; ++p) {
        // The injected fault: the last pass's GEMM one sweep short.
        if (kFault == Fault::gemm_pass && p == passes - 1)
          issue_pass<kT, kRs, kPassSweeps - 1, kN>(d, a0, b0, args.fresh_d);
        else
          issue_pass<kT, kRs, kPassSweeps, kN>(d, a0, b0, args.fresh_d);
        if constexpr (kRole == Role::gemm_then_exp2) exp2_pass(x, sum);
        wgmma::wait<1>();  // the pass before this one is done; this one runs under the next issue
      }
      wgmma::wait<0>();
      wgmma::fence_operands(d);
      if (threadIdx.x == 0) gpu::mbarrier_arrive(gemm_done);  // releases a waiting warpgroup
      store_d<kN>(d, out);
    } else {
      if constexpr (kRole == Role::fadd || kRole == Role::fmul)
#pragma unroll
        for (int i = 0; i < kChains; ++i) {
          b[i] = kRole == Role::fadd ? fadd_step(x[i]) : (x[i] > 2.f ? 2.f : 1.f);  // fmul: 1
          if (kRole == Role::fadd) x[i] = 0.f;
        }
      if constexpr (is_softmax(kRole)) {
        float scores[kSoftmaxScores], l[2] = {0.f, 0.f};
        const float* init = args.chain_init + threadIdx.x * kChains;
#pragma unroll
        for (int k = 0; k < kSoftmaxScores; ++k) scores[k] = softmax_start(init, k);
        const float scale = init[0] > 2.f ? 2.f : 1.f;  // 1, unknown to the compiler
        for (int p = 0; p < passes; ++p) softmax_pass<kRole>(scores, scale, l);
        sum[0] = l[0];
        sum[1] = l[1];
#pragma unroll
        for (int i = 2; i < kChains; ++i) sum[i] = scores[i - 2];
      }
      const int summed = is_softmax(kRole) ? 0 : kFault == Fault::exp2_pass ? passes - 1 : passes;  // the injected fault: a pass short
      for (int p = 0; p < summed; ++p) {
        if constexpr (kRole == Role::exp2) exp2_pass(x, sum);
        else if constexpr (kRole == Role::ffma) ffma_pass(x, b, sum);
        else if constexpr (kRole == Role::ffma_imm) ffma_imm_pass(x, sum);
        else if constexpr (kRole == Role::fadd || kRole == Role::fmul) add_or_mul_pass<kRole>(x, b, sum);
        else fmnmx_pass(x, sum);
      }
    }
    if constexpr (writes_chains(kRole)) {
#pragma unroll
      for (int i = 0; i < kChains; ++i) out[kDFloats + threadIdx.x * kChains + i] = sum[i];
    }
  }
}

template <class Policy, DType kT>
__global__ void __launch_bounds__(kThreads, 1) unit_overlap_kernel(const UnitOverlapArgs args) {
  static_assert(!writes_d(Policy::kWarpgroup1), "D has one slot: only warpgroup 0 runs a GEMM");
  static_assert(Policy::kGemmN <= kMaxN && sweeps_at(Policy::kGemmN) * Policy::kGemmN == kSweeps * kCols,
                "a pass's multiply-adds in whole sweeps");
  static_assert(Policy::kFault != Fault::gemm_pass || sweeps_at(Policy::kGemmN) > 1, "a sweep short leaves one");
  static_assert(Policy::kWarpgroup1 != Role::mbarrier_wait || writes_d(Policy::kWarpgroup0),
                "a waiting warpgroup needs a GEMM to release it");
  extern __shared__ unsigned char smem_raw[];
  unsigned char* a_tile = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + kAtomBytes - 1) / kAtomBytes * kAtomBytes);
  unsigned char* b_tile = a_tile + kRows * kTileBytes<kT>;
  // One arrival: warpgroup 0's GEMM is done. In the dynamic block, which takes all a block may
  // have (a static one would not fit beside it).
  auto* gemm_done = reinterpret_cast<std::uint64_t*>(b_tile + kMaxN * kTileBytes<kT>);
  if (threadIdx.x == 0) gpu::mbarrier_init(gemm_done, 1);
  stage_swizzled<kT>(a_tile, static_cast<const unsigned char*>(args.a), kRows);
  stage_swizzled<kT>(b_tile, static_cast<const unsigned char*>(args.b), Policy::kGemmN);
  gpu::fence_proxy_async_smem();  // the generic stores above before wgmma's async-proxy reads
  __syncthreads();
  float* out = args.out + std::size_t(blockIdx.x) * kOutFloats;
  const std::uint64_t cycles0 = gpu::cycle_counter(), ns0 = gpu::global_ns();
  const int wg = threadIdx.x / gpu::kWarpGroupThreads;
  if (wg == 0)
    run_role<Policy::kWarpgroup0, Policy::kFault, kT, Policy::kGemmN>(args, a_tile, b_tile, out, gemm_done);
  else
    run_role<Policy::kWarpgroup1, Policy::kFault, kT, Policy::kGemmN>(args, a_tile, b_tile, out, gemm_done);
  unsigned long long* clocks = args.clocks + std::size_t(blockIdx.x) * kClockSlots;
  if (threadIdx.x % gpu::kWarpGroupThreads == 0) clocks[2 + wg] = gpu::global_ns() - ns0;  // its first warp's end
  __syncthreads();  // both roles done (an idle one returns at once and waits here)
  if (threadIdx.x == 0) {
    clocks[0] = gpu::cycle_counter() - cycles0;
    clocks[1] = gpu::global_ns() - ns0;
  }
}

// Shared memory asked for: all a block may have, so that one CTA runs on each SM.
inline std::size_t launch_smem() {
  static const std::size_t bytes = std::size_t(gpu::device_info().smem_per_block_optin);
  return bytes;
}

template <class Policy, DType kT>
void launch_typed(const UnitOverlapArgs& args, gpu::api::stream_t stream) {
  constexpr std::size_t kNeeded = kAtomBytes + (kRows + kMaxN) * kTileBytes<kT> + sizeof(std::uint64_t);
  const std::size_t bytes = launch_smem();
  if (bytes < kNeeded)
    throw std::runtime_error("unit overlap: " + std::to_string(kNeeded) + " bytes of shared memory needed, " +
                             std::to_string(bytes) + " per block");
  static const bool raised = (gpu::set_max_dynamic_smem(unit_overlap_kernel<Policy, kT>, bytes), true);
  (void)raised;
  gpu::launch("unit_overlap_kernel", unit_overlap_kernel<Policy, kT>,
              gpu::LaunchConfig{dim3(args.ctas), dim3(kThreads), bytes, stream}, args);
}

}  // namespace detail

template <class Policy>
void launch_unit_overlap(const UnitOverlapArgs& args, gpu::api::stream_t stream) {
  if (args.dtype == DType::fp8_e4m3)
    detail::launch_typed<Policy, DType::fp8_e4m3>(args, stream);
  else if constexpr (Policy::kGemmN <= 192)  // the widest 16-bit wgmma wrapper
    detail::launch_typed<Policy, DType::bf16>(args, stream);
  else
    throw UnsupportedProblem("a 16-bit wgmma of n " + std::to_string(Policy::kGemmN) + " has no wrapper here");
}

}  // namespace schedlab::experiments::hopper_unit_overlap
