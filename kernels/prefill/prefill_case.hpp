// The harness Case for any prefill (forward attention) kernel: the kernel is a launch
// function over PrefillArgs; data, poisoning and the accuracy gate are shared.
//
// fp8 (OCP e4m3) inputs: Q, K, V are stored as e4m3 bytes with per-head dequantization
// scales (a value is byte * scale; q per query head, k and v per KV head), O is written in
// bf16. The case draws the scales with the data, from the seed: a kernel that applies the
// wrong head's scale, or none, misses the reference. The bytes are e4m3 of N(0, kFp8Spread)
// (so they use e4m3's range up to 448 as quantized data does), and each head's scale is
// u / kFp8Spread with u uniform in [0.5, 2): the dequantized inputs have RMS u. The
// reference (float64) reads the same bytes times the same scales, so input quantization is
// not an error here; the gate is default_tolerance(fp8, fp8), whose bounds and reasoning
// (P quantized to e4m3 in the kernel) are in common/harness/accuracy.cpp.
#pragma once
#include <functional>
#include <memory>
#include <random>
#include <string>

#include "common/harness/bench.hpp"
#include "common/problem.hpp"
#include "kernels/common/device_case.hpp"
#include "kernels/prefill/prefill_case_memory.hpp"

namespace schedlab::kernels {

struct PrefillArgs {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  PrefillProblem problem;
  unsigned long long* probe_slots = nullptr;  // wait-point counters (kernels that have probes)
  // fp8 inputs: device arrays of dequantization scales, q per query head, k and v per KV
  // head; null for 16-bit inputs.
  const float* q_scale = nullptr;
  const float* k_scale = nullptr;
  const float* v_scale = nullptr;
};

using PrefillLaunch = std::function<void(const PrefillArgs&, gpu::api::stream_t)>;

class PrefillCase final : public harness::Case {
 public:
  PrefillCase(const PrefillProblem& p, PrefillLaunch launch) : p_(p), launch_(std::move(launch)) {}

  void prepare(std::uint64_t seed, int sets) override {
    sets_.clear();
    const bool fp8 = p_.dtype == DType::fp8_e4m3;
    const float spread = fp8 ? kFp8Spread : 1.f;
    for (int s = 0; s < sets; ++s) {
      Set& set = sets_.emplace_back(Set{DeviceTensor(p_.dtype, p_.q_elems()), DeviceTensor(p_.dtype, p_.kv_elems()),
                                        DeviceTensor(p_.dtype, p_.kv_elems())});
      set.q.fill(seed + 3 * s, spread);
      set.k.fill(seed + 3 * s + 1, spread);
      set.v.fill(seed + 3 * s + 2, spread);
      if (fp8) set.scales = Fp8Scales(p_, seed + 3 * s);
    }
    rows_ = sample_rows(p_, kAccuracyRows, seed);
    o_ = DeviceTensor(prefill_out_dtype(p_), p_.q_elems());
    probe_slots_.allocate();
  }
  void poison_output() override { o_.poison(); }
  void launch(int s) override {
    const Fp8Scales& sc = sets_[s].scales;
    launch_(PrefillArgs{sets_[s].q.data(), sets_[s].k.data(), sets_[s].v.data(), o_.data(), p_, probe_slots_.data(),
                        sc.q.data(), sc.k.data(), sc.v.data()},
            nullptr);
  }
  std::map<std::string, double> extra_counters() const override { return probe_slots_.counters(); }
  void synchronize() override { SCHEDLAB_GPU_CHECK(gpu::api::device_synchronize()); }

  std::vector<double> reference(int set) override {
    const auto q = sets_[set].q.download(), k = sets_[set].k.download(), v = sets_[set].v.download();
    return prefill_reference(p_, q.data(), k.data(), v.data(), rows_, sets_[set].scales.host);
  }
  std::vector<float> output() override {
    return gather_rows(o_.download(), prefill_out_dtype(p_), rows_, p_.head_dim, [&](const QueryRow& r) {
      return (std::size_t(p_.q_start(r.batch) + r.pos) * p_.q_heads + r.head) * std::size_t(p_.head_dim);
    });
  }
  Tolerance tolerance() const override { return default_tolerance(p_.dtype, p_.dtype); }
  std::size_t row_length() const override { return std::size_t(p_.head_dim); }
  std::string input_key() const override {
    KeyHash h;
    h.add(p_.batch).add(p_.q_heads).add(p_.kv_heads).add(p_.q_len).add(p_.kv_len).add(p_.head_dim);
    h.add(p_.causal).add(p_.window).add(p_.dtype).add(p_.softmax_scale);
    for (int len : p_.lengths) h.add(len);
    return "prefill " + h.hex();
  }
  harness::Work work() const override { return {p_.flops(), p_.min_bytes()}; }
  std::size_t input_set_bytes() const override { return static_cast<std::size_t>(p_.min_bytes()); }
  std::size_t device_bytes(int sets) const override {
    return prefill_case_device_bytes(p_, sets) + ProbeSlots::kBytes;
  }
  // A ragged batch's seq_len and kv_len are its longest sequence's; `tokens` counts them all.
  std::map<std::string, double> axes() const override {
    std::map<std::string, double> a{
        {"batch", double(p_.batch)},       {"q_heads", double(p_.q_heads)}, {"kv_heads", double(p_.kv_heads)},
        {"seq_len", double(p_.q_len)},     {"kv_len", double(p_.kv_len)},   {"head_dim", double(p_.head_dim)},
        {"causal", p_.causal ? 1.0 : 0.0}, {"window", double(p_.window)}};
    if (p_.ragged()) a["tokens"] = double(p_.q_start(p_.batch));
    return a;
  }

 private:
  static constexpr float kFp8Spread = 32.f;  // RMS of the stored e4m3 values (header comment)
  // Per-head scales of one input set: drawn from its seed, kept on the host for the
  // reference and on the device for the kernel. Empty for 16-bit inputs.
  struct Fp8Scales {
    QkvScales host;
    gpu::DeviceBuffer<float> q, k, v;
    Fp8Scales() = default;
    Fp8Scales(const PrefillProblem& p, std::uint64_t seed) {
      std::mt19937_64 rng(seed ^ 0x5ca1e5ull);
      std::uniform_real_distribution<float> u(0.5f, 2.f);
      auto draw = [&](int heads, std::vector<double>& h, gpu::DeviceBuffer<float>& d) {
        std::vector<float> s(heads);
        for (float& x : s) x = u(rng) / kFp8Spread;
        h.assign(s.begin(), s.end());
        d = gpu::DeviceBuffer<float>(s.size());
        d.upload(s);
      };
      draw(p.q_heads, host.q, q);
      draw(p.kv_heads, host.k, k);
      draw(p.kv_heads, host.v, v);
    }
  };
  struct Set {
    DeviceTensor q, k, v;
    Fp8Scales scales;
  };
  PrefillProblem p_;
  PrefillLaunch launch_;
  std::vector<Set> sets_;
  DeviceTensor o_;
  ProbeSlots probe_slots_;
  std::vector<QueryRow> rows_;  // the rows the gate compares
};

// The FlashAttention-3 paper's benchmark setting: 16k tokens in total, hidden 2048.
inline PrefillProblem fa3_setting(int seq_len, int head_dim, bool causal, DType dtype) {
  constexpr int kTotalTokens = 16384, kHidden = 2048;
  PrefillProblem p;
  p.batch = kTotalTokens / seq_len;
  p.q_heads = p.kv_heads = kHidden / head_dim;
  p.q_len = p.kv_len = seq_len;
  p.head_dim = head_dim;
  p.causal = causal;
  p.dtype = dtype;
  return p;
}

}  // namespace schedlab::kernels
