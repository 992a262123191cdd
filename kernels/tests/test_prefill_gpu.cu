// The register-tile prefill family's own GPU tests on the H200 (each experiment's variants are
// checked by its experiments/<name>/test_gpu.cpp, built into this binary): the tuning
// candidates on the shared problems (kernels/tests/prefill_gpu_checks.hpp); the gates' power:
// every injected fault (PrefillFault) fails them, at short and long context, in bf16, f16 and
// fp8, where the family default passes; and the shared online softmax
// (kernels/attention/online_softmax.hpp) alone, on one warp, against a float simulation of its
// max, sum and rescale rules. Label: gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/gpu/attention_tile.hpp"
#include "common/gpu/launch.hpp"
#include "kernels/attention/online_softmax.hpp"
#include "kernels/attention/write_o.hpp"
#if SCHEDLAB_PREFILL_TUNING
#include "kernels/prefill/tuning_policy.hpp"
#endif
#include "kernels/tests/fault_kernels.hpp"
#include "kernels/tests/prefill_gpu_checks.hpp"

namespace schedlab::kernels::prefill_test {
namespace {

#if SCHEDLAB_PREFILL_TUNING
namespace tuning = experiments::prefill_tuning;
using TuningCandidates = ::testing::Types<
    tuning::w8_n64, tuning::w4_n128_single_ftz, tuning::w4_r32_union_ftz, tuning::w4_r32_union_u2_ftz,
    tuning::w4_r32_union_u2_thr_ftz, tuning::w4_r32_union_u8_thr_ftz, tuning::w4_r32_n48_u2_thr_ftz,
    tuning::w4_r32_n48_u8_thr_ftz, tuning::w4_r32_union_u2_thr, tuning::w4_r32_n48_u8_thr>;
INSTANTIATE_TYPED_TEST_SUITE_P(prefill_tuning, PrefillGpu, TuningCandidates);
#endif

// ---- injected faults ----------------------------------------------------------------------

// Causal, GQA 2, head dim 128, short and long: the family default (PrefillFault::none) passes on
// the same inputs, every fault fails.
TEST(PrefillFaults, EveryFaultFailsTheGate) {
  const struct {
    const char* name;
    PrefillLaunch launch;
  } faults[] = {{"drop_tile", prefill_fault_launch(PrefillFault::drop_tile)},
                {"stale_tile", prefill_fault_launch(PrefillFault::stale_tile)},
                {"skip_mask", prefill_fault_launch(PrefillFault::skip_mask)}};
  std::uint64_t seed = test_seed();
  for (int len : {300, 8192})
    for (DType t : {DType::bf16, DType::f16, DType::fp8_e4m3}) {
      PrefillProblem p;
      p.batch = 1;
      p.q_heads = 4;
      p.kv_heads = 2;
      p.q_len = p.kv_len = len;
      p.head_dim = 128;
      p.causal = true;
      p.dtype = t;
      const std::string where = std::string(dtype_name(t)) + ", length " + std::to_string(len);
      const AccuracyReport control = run_prefill(p, prefill_fault_launch(PrefillFault::none), ++seed);
      EXPECT_TRUE(control.passed) << where << ", no fault: " << control.message;
      std::printf("%s, no fault: %s\n", where.c_str(), control.message.c_str());
      for (const auto& f : faults) {
        const AccuracyReport acc = run_prefill(p, f.launch, seed);
        EXPECT_FALSE(acc.passed) << where << ", " << f.name << ": " << acc.message;
        std::printf("%s, %s: %s\n", where.c_str(), f.name, acc.message.c_str());
      }
    }
}


// ---- the shared online softmax, one warp ---------------------------------------------------

// What the warp tile reads of a configuration for its softmax, P packing and O store.
struct SoftmaxTileCfg {
  static constexpr int kMTiles = 2;
  static constexpr int kBlockN = 32;
  static constexpr int kHeadDim = 16;
};
using SoftmaxTile = gpu::attn::WarpTile<SoftmaxTileCfg>;
constexpr int kSoftmaxRows = SoftmaxTileCfg::kMTiles * SoftmaxTile::kMmaRows;

struct SoftmaxMaskArgs {  // the fields the shared online softmax's mask reads
  int q_len, kv_len;
  bool causal;
};

// Scores s[row][key] (row-major, n_keys = the padded key count) through the online softmax
// tile by tile. After tile 0, O is set to 1, so the rescales leave 2^(m after tile 0 - m) in
// it; write_o then stores that times 1 / l. m and the full row sum l come out per row.
template <class Rescale>
__global__ void online_softmax_kernel(const float* s_in, int n_keys, SoftmaxMaskArgs args, float scale_log2,
                                      float* m_out, float* l_out, std::uint16_t* o_out) {
  using T = SoftmaxTile;
  constexpr int kMTiles = SoftmaxTileCfg::kMTiles, kBlockN = SoftmaxTileCfg::kBlockN;
  attention::RowState<T, kMTiles> st;
  for (int key0 = 0; key0 < n_keys; key0 += kBlockN) {
    float s[kMTiles][T::kSTiles][4];
    for (int mt = 0; mt < kMTiles; ++mt)
      for (int n = 0; n < T::kSTiles; ++n)
        for (int i = 0; i < 4; ++i) s[mt][n][i] = s_in[T::row(mt * T::kMmaRows, i) * n_keys + T::col(key0, n, i)];
    std::uint32_t pa[kMTiles][kBlockN / 16][T::kPWords];
    attention::online_softmax<T, gpu::mma::Bf16, Rescale, true>(s, st, pa, args, scale_log2, key0, 0);
    if (key0 == 0)
      for (int mt = 0; mt < kMTiles; ++mt)
        for (int n = 0; n < T::kOTiles; ++n)
          for (int i = 0; i < 4; ++i) st.o[mt][n][i] = 1.f;
  }
  for (int mt = 0; mt < kMTiles; ++mt)
    for (int r = 0; r < T::kRowSlots; ++r) {
      const int row = T::row(mt * T::kMmaRows, r * T::kPerSlot);
      m_out[row] = st.m[mt][r];
      l_out[row] = T::row_sum(st.l[mt][r]);
    }
  attention::write_o<T, gpu::mma::Bf16>(st, o_out, kSoftmaxRows, 1.f, SoftmaxTileCfg::kHeadDim, 0);
}

template <class Rescale>
class OnlineSoftmaxGpu : public ::testing::Test {};
using RescalePolicies = ::testing::Types<attention::RescalePolicy<0.f, false>, attention::RescalePolicy<8.f, false>,
                                         attention::RescalePolicy<0.f, true>>;
TYPED_TEST_SUITE(OnlineSoftmaxGpu, RescalePolicies);

// Causal rows (bottom-right aligned, every row sees a key of tile 0), a key end inside the
// last tile, and scores that grow tile by tile so that maxima move, by more than the
// threshold too.
TYPED_TEST(OnlineSoftmaxGpu, MatchesAFloatSimulation) {
  using Rescale = TypeParam;
  constexpr int kBlockN = SoftmaxTileCfg::kBlockN, kTiles = 4, kKeys = kTiles * kBlockN;
  const SoftmaxMaskArgs args{kSoftmaxRows, kKeys - 17, true};
  const float scale_log2 = 0.5f;
  std::mt19937_64 rng(test_seed());
  std::normal_distribution<float> normal(0.f, 4.f);
  std::vector<float> s(kSoftmaxRows * kKeys);
  for (int r = 0; r < kSoftmaxRows; ++r)
    for (int k = 0; k < kKeys; ++k) s[r * kKeys + k] = normal(rng) + 12.f * (k / kBlockN);
  gpu::DeviceBuffer<float> d_s(s.size()), d_m(kSoftmaxRows), d_l(kSoftmaxRows);
  gpu::DeviceBuffer<std::uint16_t> d_o(kSoftmaxRows * SoftmaxTileCfg::kHeadDim);
  d_s.upload(s);
  gpu::launch("online_softmax_kernel", online_softmax_kernel<Rescale>,
              gpu::LaunchConfig{dim3(1), dim3(gpu::kWarpSize), 0, nullptr}, d_s.data(), kKeys, args, scale_log2, d_m.data(),
              d_l.data(), d_o.data());
  SCHEDLAB_GPU_CHECK(gpu::api::device_synchronize());
  const std::vector<float> m = d_m.download(), l = d_l.download();
  const std::vector<std::uint16_t> o = d_o.download();
  for (int r = 0; r < kSoftmaxRows; ++r) {
    auto visible = [&](int k) { return k < args.kv_len && (!args.causal || k <= r + args.kv_len - args.q_len); };
    // The kernel's rule for m, in the same float operations; the sum in double from scratch.
    float m_ref = -INFINITY, m_first = 0.f;
    double sum = 0.0;
    for (int t = 0; t < kTiles; ++t) {
      float tile_max = -INFINITY;
      for (int k = t * kBlockN; k < (t + 1) * kBlockN; ++k)
        if (visible(k)) tile_max = std::max(tile_max, s[r * kKeys + k]);
      float m_new = std::max(m_ref, tile_max * scale_log2);
      if (Rescale::kRescaleThreshold > 0.f) m_new = m_new > m_ref + Rescale::kRescaleThreshold ? m_new : m_ref;
      m_ref = m_new;
      if (t == 0) m_first = m_ref;
    }
    for (int k = 0; k < kKeys; ++k)
      if (visible(k)) sum += std::exp2(double(s[r * kKeys + k]) * scale_log2 - m_ref);
    EXPECT_EQ(m[r], m_ref) << "row " << r;
    EXPECT_NEAR(l[r] / sum, 1.0, 1e-5) << "row " << r;
    const double o_ref = std::exp2(double(m_first) - m_ref) / sum;
    for (int d = 0; d < SoftmaxTileCfg::kHeadDim; ++d)
      EXPECT_NEAR(bf16_to_float(o[r * SoftmaxTileCfg::kHeadDim + d]) / o_ref, 1.0, 1e-2) << "row " << r << " dim " << d;
  }
}

}  // namespace
}  // namespace schedlab::kernels::prefill_test
