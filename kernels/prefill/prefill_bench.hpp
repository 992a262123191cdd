// Benchmark registration shared by the prefill experiments: the FlashAttention-3 paper's
// setting (16k tokens in total, hidden 2048, so 16 heads at head dim 128 and 32 at 64;
// sequence 512..16k; causal and not; bf16), each variant of an experiment on each shape.
#pragma once
#include <string>
#include <vector>

#include "common/harness/bench_main.hpp"
#include "kernels/prefill/flash_prefill.hpp"

namespace schedlab::kernels {

struct PrefillShape {
  int seq_len, head_dim;
  bool causal;
};

inline std::vector<PrefillShape> prefill_benchmark_shapes() {
  std::vector<PrefillShape> shapes;
  for (int head_dim : {128, 64})
    for (bool causal : {false, true})
      for (int seq : {512, 1024, 2048, 4096, 8192, 16384}) shapes.push_back({seq, head_dim, causal});
  return shapes;
}

template <class Policy>
void add_prefill_variant(harness::Registry& r, const std::string& experiment, const std::string& variant,
                         const std::string& baseline, const PrefillShape& s) {
  constexpr DType kDtype = DType::bf16;
  const std::string dtype(dtype_name(kDtype));
  const std::string name = experiment + "/" + variant + "/" + dtype + "/seq:" + std::to_string(s.seq_len) +
                           "/head_dim:" + std::to_string(s.head_dim) + "/causal:" + std::to_string(int(s.causal));
  const std::string label = "family=prefill;experiment=" + experiment + ";variant=" + variant +
                            ";baseline=" + baseline + ";dtype=" + dtype + ";peer=0";
  r.add<PrefillProblem>(name, label, fa3_setting(s.seq_len, s.head_dim, s.causal, kDtype), [](const PrefillProblem& p) {
    require_support(p, flash_prefill_support());
    return std::make_unique<PrefillCase>(p, launch_flash_prefill<Policy>);
  });
}

// Registers every (variant, shape) of an experiment whose variants are Policies...
template <class... Policies>
struct PrefillExperiment {
  std::string name, baseline;
  std::vector<std::string> variants;  // one name per policy, in order
  void register_all(harness::Registry& r) const {
    for (const PrefillShape& s : prefill_benchmark_shapes()) {
      std::size_t i = 0;
      (add_prefill_variant<Policies>(r, name, variants[i++], baseline, s), ...);
    }
  }
};

}  // namespace schedlab::kernels
