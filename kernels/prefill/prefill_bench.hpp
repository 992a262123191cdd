// Benchmark registration shared by the prefill experiments: the FlashAttention-3 paper's
// setting (16k tokens in total, hidden 2048, so 16 heads at head dim 128 and 32 at 64;
// sequence 512..16k; causal and not; bf16), each variant of an experiment on each shape.
#pragma once
#include <string>
#include <vector>

#include "common/gpu/runtime.hpp"
#include "common/harness/experiment.hpp"
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

// The prefill family for harness::Experiment: the FA3 setting, each variant a PrefillCase.
struct PrefillFamily {
  static constexpr DType kDtype = DType::bf16;
  static std::vector<PrefillShape> shapes() { return prefill_benchmark_shapes(); }
  template <class Policy>
  static void add(harness::Registry& r, const harness::ExperimentNames& e, const std::string& variant,
                  const PrefillShape& s) {
    const std::string dtype(dtype_name(kDtype));
    const std::string name = e.name + "/" + variant + "/" + dtype + "/seq:" + std::to_string(s.seq_len) +
                             "/head_dim:" + std::to_string(s.head_dim) + "/causal:" + std::to_string(int(s.causal));
    r.add<PrefillProblem>(name, harness::record_label("prefill", e, variant, dtype),
                          fa3_setting(s.seq_len, s.head_dim, s.causal, kDtype), [](const PrefillProblem& p) {
                            require_support(p, flash_prefill_support());
                            require_prefill_smem_fits<Policy>(p, gpu::device_info().smem_per_block_optin);
                            return std::make_unique<PrefillCase>(p, launch_flash_prefill<Policy>);
                          });
  }
};

template <class... Policies>
using PrefillExperiment = harness::Experiment<PrefillFamily, Policies...>;

}  // namespace schedlab::kernels
