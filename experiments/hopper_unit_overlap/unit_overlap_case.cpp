// The unit-overlap probe's Case (inputs, poisoning, the gate's reference) and Family (its
// shapes and registrations); the kernel is unit_overlap.cuh.
#include "experiments/hopper_unit_overlap/unit_overlap.hpp"

#include <algorithm>
#include <cmath>

namespace schedlab::experiments::hopper_unit_overlap {
namespace {

// Values in {-1, 0, 1}: every product and sum of D is a small integer, exact in any accumulator.
std::vector<float> signs(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = float(pick(rng));
  return v;
}

gpu::DeviceBuffer<unsigned char> upload_as(DType t, const std::vector<float>& v) {
  std::vector<unsigned char> bytes(v.size() * dtype_bytes(t));
  for (std::size_t i = 0; i < v.size(); ++i) store_from_float(t, bytes.data(), i, v[i]);
  gpu::DeviceBuffer<unsigned char> d(bytes.size());
  d.upload(bytes);
  return d;
}

}  // namespace

std::vector<double> chain_reference(Role role, const float* inits, int passes) {
  if (is_softmax(role)) {  // l of each row over the passes, then the first scores after the last
    std::vector<double> sc(kSoftmaxScores);
    for (int k = 0; k < kSoftmaxScores; ++k) sc[k] = softmax_start(inits, k);
    double l[2] = {0, 0};
    for (int p = 0; p < passes; ++p)
      for (int r = 0; r < 2; ++r) {
        const double m = *std::max_element(sc.begin() + r * kSoftmaxRow, sc.begin() + (r + 1) * kSoftmaxRow);
        for (int k = r * kSoftmaxRow; k < (r + 1) * kSoftmaxRow; ++k) l[r] += sc[k] = std::exp2(sc[k] - m);
      }
    std::vector<double> out{l[0], l[1]};
    out.insert(out.end(), sc.begin(), sc.begin() + kChains - 2);
    return out;
  }
  std::vector<double> x(inits, inits + kChains), sum(kChains, 0.0);
  if (role == Role::fadd) std::fill(x.begin(), x.end(), 0.0);
  for (int p = 0; p < passes; ++p) {
    for (int i = 0; i < kChains; ++i) {
      if (runs_exp2(role))
        for (int s = 0; s < kExp2Steps; ++s) x[i] = std::exp2(-x[i]);
      else if (role == Role::ffma)
        for (int s = 0; s < kFfmaSteps; ++s) x[i] = x[i] * 0.5 + double(inits[i]);
      else if (role == Role::ffma_imm)
        for (int s = 0; s < kFfmaSteps; ++s) x[i] = x[i] * 0.5 + double(kFfmaImm);
      else if (role == Role::fadd)
        x[i] += kFfmaSteps * double(fadd_step(inits[i]));  // whole numbers: exact in f32 too
      // fmul: x * 1 keeps the start
    }
    if (role == Role::fmnmx)  // in the kernel's order: chain i reads chain i + 1's value of this step
      for (int s = 0; s < kFmnmxSteps; ++s)
        for (int i = 0; i < kChains; ++i) x[i] = std::max(x[i], x[(i + 1) % kChains]);
    for (int i = 0; i < kChains; ++i) sum[i] += x[i];
  }
  return sum;
}

UnitOverlapCase::UnitOverlapCase(const UnitOverlapProblem& p, RolePair roles, UnitOverlapLaunch launch)
    : p_(p), roles_(roles), launch_(launch), ctas_(gpu::device_info().sm_count) {
  p_.validate();
}

void UnitOverlapCase::prepare(std::uint64_t seed, int sets) {
  sets_.clear();
  for (int s = 0; s < sets; ++s) {
    Set set;
    set.a_host = signs(seed + 3 * s, std::size_t(kRows) * kDepth);
    set.b_host = signs(seed + 3 * s + 1, std::size_t(kMaxN) * kDepth);
    std::mt19937_64 rng(seed + 3 * s + 2);
    std::uniform_real_distribution<float> start(0.25f, 1.f);
    set.init_host.resize(kChainFloats);
    for (float& x : set.init_host) x = start(rng);
    set.a = upload_as(p_.dtype, set.a_host);
    set.b = upload_as(p_.dtype, set.b_host);
    set.init = gpu::DeviceBuffer<float>(set.init_host.size());
    set.init.upload(set.init_host);
    sets_.push_back(std::move(set));
  }
  out_ = gpu::DeviceBuffer<float>(std::size_t(ctas_) * kOutFloats);
  clocks_ = gpu::DeviceBuffer<unsigned long long>(std::size_t(ctas_) * kClockSlots);
}

std::map<std::string, double> UnitOverlapCase::extra_counters() const {
  const std::vector<unsigned long long> c = clocks_.download();
  double ghz = 0, end0 = 0, end1 = 0;
  for (int i = 0; i < ctas_; ++i) {
    const unsigned long long* cta = c.data() + std::size_t(i) * kClockSlots;
    ghz += double(cta[0]) / double(std::max<unsigned long long>(cta[1], 1));
    end0 += double(cta[2]) * 1e-3;
    end1 += double(cta[3]) * 1e-3;
  }
  return {{"sm_clock_ghz", ghz / ctas_}, {"wg0_end_us", end0 / ctas_}, {"wg1_end_us", end1 / ctas_}};
}

void UnitOverlapCase::poison_output() {
  SCHEDLAB_GPU_CHECK(gpu::api::memset_async(out_.data(), 0xFF, out_.bytes(), nullptr));  // all NaN
}

void UnitOverlapCase::launch(int set) {
  const Set& s = sets_[set];
  launch_(UnitOverlapArgs{s.a.data(), s.b.data(), s.init.data(), out_.data(), clocks_.data(), p_.passes, ctas_, p_.dtype},
          nullptr);
}

void UnitOverlapCase::synchronize() { SCHEDLAB_GPU_CHECK(gpu::api::device_synchronize()); }

// Every CTA computes the same values: D's rows of n (where warpgroup 0 runs a GEMM), then the rows of
// each warpgroup's chain sums (128 threads x 16 chains, 16 rows of kCols), CTA after CTA.
std::vector<double> UnitOverlapCase::reference(int set) {
  const Set& s = sets_[set];
  std::vector<double> one;
  if (writes_d(roles_.wg[0])) {
    const bool ones = roles_.wg[0] == Role::gemm_rs;
    for (int r = 0; r < kRows; ++r)
      for (int n = 0; n < roles_.gemm_n; ++n) {
        double dot = 0;
        for (int k = 0; k < kDepth; ++k)
          dot += (ones ? 1.0 : double(s.a_host[r * kDepth + k])) * double(s.b_host[n * kDepth + k]);
        one.push_back(sweeps_at(roles_.gemm_n) * dot);
      }
  }
  for (int wg = 0; wg < 2; ++wg) {
    if (!writes_chains(roles_.wg[wg])) continue;
    for (int t = wg * kThreads / 2; t < (wg + 1) * kThreads / 2; ++t) {
      const std::vector<double> sums = chain_reference(roles_.wg[wg], s.init_host.data() + t * kChains, p_.passes);
      one.insert(one.end(), sums.begin(), sums.end());
    }
  }
  std::vector<double> all;
  all.reserve(one.size() * ctas_);
  for (int c = 0; c < ctas_; ++c) all.insert(all.end(), one.begin(), one.end());
  return all;
}

std::vector<float> UnitOverlapCase::output() {
  const std::vector<float> out = out_.download();
  std::vector<float> all;
  for (int c = 0; c < ctas_; ++c) {
    const float* cta = out.data() + std::size_t(c) * kOutFloats;
    if (writes_d(roles_.wg[0]))
      for (int r = 0; r < kRows; ++r) all.insert(all.end(), cta + r * kMaxN, cta + r * kMaxN + roles_.gemm_n);
    for (int wg = 0; wg < 2; ++wg)
      if (writes_chains(roles_.wg[wg]))
        all.insert(all.end(), cta + kDFloats + wg * kChainFloats / 2, cta + kDFloats + (wg + 1) * kChainFloats / 2);
  }
  return all;
}

harness::Work UnitOverlapCase::work() const {
  const double gemm_flops = 2.0 * kSweeps * kRows * kCols * kDepth * double(p_.passes) * ctas_;
  return {writes_d(roles_.wg[0]) ? gemm_flops : 0.0, double(input_set_bytes())};
}

std::size_t UnitOverlapCase::input_set_bytes() const {
  return std::size_t(kRows + kMaxN) * kDepth * dtype_bytes(p_.dtype) + kChainFloats * sizeof(float);
}

std::size_t UnitOverlapCase::device_bytes(int sets) const {
  return std::size_t(sets) * input_set_bytes() + std::size_t(ctas_) * (kOutFloats * sizeof(float) + kClockSlots * sizeof(unsigned long long));
}

const harness::FamilyAxes& UnitOverlapFamily::axes() {
  static const harness::FamilyAxes a{
      "hopper_unit_overlap",
      {{"dtype", "fp8_e4m3", "the GEMM's operands: fp8_e4m3 or bf16"},
       {"passes", "2048", "passes a launch, each one 128-key tile's GEMM and exponentials for 64 rows"}}};
  return a;
}

const harness::TierAxes& UnitOverlapFamily::tiers() {
  static const harness::TierAxes t{{"dtype=fp8"}, {"dtype=fp8,bf16"}, {"dtype=fp8,bf16"}};
  return t;
}

std::vector<UnitOverlapProblem> UnitOverlapFamily::shapes(const harness::ShapeSelection& selection) {
  return harness::select_shapes(selection, axes(), tiers(), [](const harness::AxisPoint& point) {
    UnitOverlapProblem p;
    p.dtype = point.dtype("dtype");
    p.passes = point.integer("passes", 2);
    p.validate();
    return p;
  });
}

std::string UnitOverlapFamily::shape_name(const UnitOverlapProblem& p) {
  return std::string(dtype_name(p.dtype)) + "/passes:" + std::to_string(p.passes);
}

}  // namespace schedlab::experiments::hopper_unit_overlap
