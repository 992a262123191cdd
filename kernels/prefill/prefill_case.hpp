// The harness Case for any prefill (forward attention) kernel: the kernel is a launch
// function over PrefillArgs; data, poisoning and the accuracy gate are shared.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "common/harness/bench.hpp"
#include "common/problem.hpp"
#include "kernels/common/device_case.hpp"

namespace schedlab::kernels {

struct PrefillArgs {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  PrefillProblem problem;
  unsigned long long* probe_slots = nullptr;  // wait-point counters (kernels that have probes)
};
using PrefillLaunch = std::function<void(const PrefillArgs&, gpu::api::stream_t)>;

class PrefillCase final : public harness::Case {
 public:
  PrefillCase(const PrefillProblem& p, PrefillLaunch launch) : p_(p), launch_(std::move(launch)) {}

  void prepare(std::uint64_t seed, int sets) override {
    sets_.clear();
    for (int s = 0; s < sets; ++s) {
      Set& set = sets_.emplace_back(Set{DeviceTensor(p_.dtype, p_.q_elems()), DeviceTensor(p_.dtype, p_.kv_elems()),
                                        DeviceTensor(p_.dtype, p_.kv_elems())});
      set.q.fill(seed + 3 * s);
      set.k.fill(seed + 3 * s + 1);
      set.v.fill(seed + 3 * s + 2);
    }
    rows_ = sample_rows(p_, kAccuracyRows, seed);
    o_ = DeviceTensor(p_.dtype, p_.q_elems());
    probe_slots_.allocate();
  }
  void poison_output() override { o_.poison(); }
  void launch(int s) override {
    launch_(PrefillArgs{sets_[s].q.data(), sets_[s].k.data(), sets_[s].v.data(), o_.data(), p_, probe_slots_.data()},
            nullptr);
  }
  std::map<std::string, double> extra_counters() const override { return probe_slots_.counters(); }
  void synchronize() override { SCHEDLAB_GPU_CHECK(gpu::api::device_synchronize()); }

  std::vector<double> reference(int set) override {
    const auto q = sets_[set].q.download(), k = sets_[set].k.download(), v = sets_[set].v.download();
    return prefill_reference(p_, q.data(), k.data(), v.data(), rows_);
  }
  std::vector<float> output() override {
    return gather_rows(o_.download(), p_.dtype, rows_, p_.head_dim, [&](const QueryRow& r) {
      return ((std::size_t(r.batch) * p_.q_len + r.pos) * p_.q_heads + r.head) * std::size_t(p_.head_dim);
    });
  }
  Tolerance tolerance() const override { return default_tolerance(p_.dtype, p_.dtype); }
  std::size_t row_length() const override { return std::size_t(p_.head_dim); }
  std::string input_key() const override {
    KeyHash h;
    h.add(p_.batch).add(p_.q_heads).add(p_.kv_heads).add(p_.q_len).add(p_.kv_len).add(p_.head_dim);
    h.add(p_.causal).add(p_.window).add(p_.dtype).add(p_.softmax_scale);
    return "prefill " + h.hex();
  }
  harness::Work work() const override { return {p_.flops(), p_.min_bytes()}; }
  std::size_t input_set_bytes() const override { return static_cast<std::size_t>(p_.min_bytes()); }
  std::map<std::string, double> axes() const override {
    return {{"batch", double(p_.batch)},       {"q_heads", double(p_.q_heads)}, {"kv_heads", double(p_.kv_heads)},
            {"seq_len", double(p_.q_len)},     {"kv_len", double(p_.kv_len)},   {"head_dim", double(p_.head_dim)},
            {"causal", p_.causal ? 1.0 : 0.0}, {"window", double(p_.window)}};
  }

 private:
  struct Set {
    DeviceTensor q, k, v;
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
