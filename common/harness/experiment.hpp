// An experiment as the benchmarks register it: named variants (one Policy each) of a kernel
// family, each run on every shape of the family's benchmark set, plus an A/A control: the
// baseline registered a second time, as variant "<baseline>_aa", whose difference from the
// baseline is the noise floor of that shape. A Family provides
//   static std::vector<Shape> shapes(const ShapeSelection&);  // the tier's, or --schedlab_axes'
//   template <class Policy> static void add(Registry&, const VariantNames&, const Shape&);
#pragma once
#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/harness/bench_main.hpp"
#include "common/harness/variant_list.hpp"
#include "common/problem.hpp"

namespace schedlab::harness {

// The control key of the A/A registration's label, and its variant name's suffix.
inline constexpr std::string_view kAaControl = "aa";

// What one registration times: which experiment, which variant, against which baseline.
struct VariantNames {
  std::string experiment, baseline, variant;
  std::string control;  // empty, or kAaControl for the baseline's second registration
};

inline std::string aa_variant_name(std::string_view baseline) {
  return std::string(baseline) + "_" + std::string(kAaControl);
}

// The record label every results row carries; the analysis reads its keys. Only a control
// registration has a `control` key.
inline std::string record_label(std::string_view family, const VariantNames& v, std::string_view dtype) {
  std::string label = "family=" + std::string(family) + ";experiment=" + v.experiment + ";variant=" + v.variant +
                      ";baseline=" + v.baseline + ";dtype=" + std::string(dtype) + ";peer=0";
  if (!v.control.empty()) label += ";control=" + v.control;
  return label;
}

// A shape the user asked for (--schedlab_axes) that the kernel cannot run is an error before
// anything runs, naming the shape; a tier's shapes are skipped with the reason instead, per
// configuration, as nvbench skips an impossible combination.
template <class Problem>
void require_support_of_requested(const Registry& r, const std::string& shape, const Problem& p,
                                  const KernelSupport& support) {
  if (!r.shape_selection().from_axes()) return;
  try {
    p.validate(support);
  } catch (const InvalidProblem& e) {
    throw AxesError("--schedlab_axes: shape " + shape + ": the kernel cannot run it: " + e.what());
  }
}

template <class Family, class... Policies>
struct Experiment {
  std::string name, baseline;
  std::vector<std::string> variants;  // one name per policy, in order
  void register_all(Registry& r) const {
    check_names();
    for (const auto& shape : Family::shapes(r.shape_selection())) {
      std::size_t i = 0;
      (Family::template add<Policies>(r, VariantNames{name, baseline, variants[i++], {}}, shape), ...);
      // The A/A control last in the shape, so that without interleaving drift between the
      // two registrations of the baseline shows up as noise instead of hiding.
      i = 0;
      ((variants[i++] == baseline
            ? Family::template add<Policies>(
                  r, VariantNames{name, baseline, aa_variant_name(baseline), std::string(kAaControl)}, shape)
            : void()),
       ...);
    }
  }
  // A names list out of step with the policies would label one variant's numbers with
  // another's name (or read past the list): refuse before anything runs.
  void check_names() const {
    if (variants.size() != sizeof...(Policies))
      throw std::invalid_argument("experiment " + name + ": " + std::to_string(variants.size()) + " variant names for " +
                                  std::to_string(sizeof...(Policies)) + " policies");
    if (std::find(variants.begin(), variants.end(), baseline) == variants.end())
      throw std::invalid_argument("experiment " + name + ": baseline '" + baseline + "' is not one of its variants");
    for (std::size_t i = 0; i < variants.size(); ++i)
      if (std::find(variants.begin() + i + 1, variants.end(), variants[i]) != variants.end())
        throw std::invalid_argument("experiment " + name + ": variant name '" + variants[i] + "' given twice");
    if (std::find(variants.begin(), variants.end(), aa_variant_name(baseline)) != variants.end())
      throw std::invalid_argument("experiment " + name + ": a variant is named '" + aa_variant_name(baseline) +
                                  "', the name of the baseline's A/A control");
  }
};

// An experiment registered from its variant list, each variant under its policy's kName.
template <class Family, class List>
struct ExperimentOf;
template <class Family, class... Policies>
struct ExperimentOf<Family, VariantList<Policies...>> : Experiment<Family, Policies...> {
  ExperimentOf(std::string name, std::string baseline)
      : Experiment<Family, Policies...>{std::move(name), std::move(baseline), {std::string(Policies::kName)...}} {}
};

}  // namespace schedlab::harness
