// An experiment as the benchmarks register it: named variants (one Policy each) of a kernel
// family, each run on every shape of the family's benchmark set. A Family provides
//   static std::vector<Shape> shapes();
//   template <class Policy> static void add(Registry&, const ExperimentNames&, const std::string& variant,
//                                           const Shape&);
#pragma once
#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/harness/bench_main.hpp"

namespace schedlab::harness {

struct ExperimentNames {
  std::string name, baseline;
};

// The record label every results row carries; the analysis reads its keys.
inline std::string record_label(std::string_view family, const ExperimentNames& e, std::string_view variant,
                                std::string_view dtype) {
  return "family=" + std::string(family) + ";experiment=" + e.name + ";variant=" + std::string(variant) +
         ";baseline=" + e.baseline + ";dtype=" + std::string(dtype) + ";peer=0";
}

template <class Family, class... Policies>
struct Experiment {
  std::string name, baseline;
  std::vector<std::string> variants;  // one name per policy, in order
  void register_all(Registry& r) const {
    check_names();
    const ExperimentNames names{name, baseline};
    for (const auto& shape : Family::shapes()) {
      std::size_t i = 0;
      (Family::template add<Policies>(r, names, variants[i++], shape), ...);
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
  }
};

}  // namespace schedlab::harness
