// Benchmark registration of the Hopper prefill experiments: the prefill benchmark shapes
// (the FlashAttention-3 paper's setting: 16k tokens in total, hidden 2048), each variant of
// an experiment on each shape, bf16. The same PrefillCase (inputs, poisoning, accuracy gate)
// as the register-tile family, over this family's launch.
#pragma once
#include <string>
#include <vector>

#include "common/harness/experiment.hpp"
#include "kernels/hopper_prefill/hopper_prefill.hpp"
#include "kernels/prefill/prefill_bench.hpp"

namespace schedlab::kernels {

struct HopperPrefillFamily {
  static constexpr DType kDtype = DType::bf16;
  static std::vector<PrefillShape> shapes() { return prefill_benchmark_shapes(); }
  template <class Policy>
  static void add(harness::Registry& r, const harness::ExperimentNames& e, const std::string& variant,
                  const PrefillShape& s) {
    const std::string dtype(dtype_name(kDtype));
    const std::string name = e.name + "/" + variant + "/" + dtype + "/seq:" + std::to_string(s.seq_len) +
                             "/head_dim:" + std::to_string(s.head_dim) + "/causal:" + std::to_string(int(s.causal));
    r.add<PrefillProblem>(name, harness::record_label("hopper_prefill", e, variant, dtype),
                          fa3_setting(s.seq_len, s.head_dim, s.causal, kDtype), [](const PrefillProblem& p) {
                            require_support(p, hopper_prefill_support());
                            require_hopper_prefill_fits<Policy>(p);
                            return std::make_unique<PrefillCase>(p, launch_hopper_prefill<Policy>);
                          });
  }
};

template <class... Policies>
using HopperPrefillExperiment = harness::Experiment<HopperPrefillFamily, Policies...>;

}  // namespace schedlab::kernels
