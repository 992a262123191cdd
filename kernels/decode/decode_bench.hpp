// Benchmark registration shared by the decode experiments: each variant of an experiment on
// each shape of the run's tier (or of --schedlab_axes); the shapes are in decode_shapes.hpp.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "common/harness/experiment.hpp"
#include "common/harness/gpu_platform.hpp"
#include "kernels/decode/decode_case.hpp"
#include "kernels/decode/decode_shapes.hpp"

namespace schedlab::kernels {

// The decode family for harness::Experiment, each variant a DecodeCase, on the tiers kTiers
// names (decode_shapes.hpp).
template <const harness::TierAxes& (*kTiers)() = decode_tiers>
struct DecodeFamilyOf {
  static std::vector<DecodeShape> shapes(const harness::ShapeSelection& selection) {
    return decode_shapes(selection, kTiers());
  }
  template <class Policy>
  static void add(harness::Registry& r, const harness::VariantNames& v, const DecodeShape& s) {
    const DecodeProblem problem = decode_problem_for(s);
    harness::require_support_of_requested(r, decode_shape_name(s), problem, paged_decode_support());
    r.add<DecodeProblem>(v.experiment + "/" + v.variant + "/" + decode_shape_name(s),
                         harness::record_label("decode", v, dtype_name(s.kv_dtype)), problem,
                         [](const DecodeProblem& p) {
                           require_support(p, paged_decode_support());
                           return std::make_unique<DecodeCase>(p, DecodeKernel::of<Policy>());
                         });
  }
};

// The main of a decode experiment's benchmark: every variant of its list, and the baseline's A/A
// control, on each shape of the tiers kTiers names (or of --schedlab_axes).
template <class Variants, const harness::TierAxes& (*kTiers)() = decode_tiers>
int decode_bench_main(int argc, char** argv, std::string name, std::string baseline) {
  const harness::ExperimentOf<DecodeFamilyOf<kTiers>, Variants> experiment{std::move(name), std::move(baseline)};
  return harness::bench_main(
      argc, argv, experiment.name, [&](harness::Registry& r) { experiment.register_all(r); }, harness::gpu_platform);
}

}  // namespace schedlab::kernels
