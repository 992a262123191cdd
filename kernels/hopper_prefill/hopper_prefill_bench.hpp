// Benchmark registration of the Hopper prefill experiments: the prefill shapes of the run's
// tier (or of --schedlab_axes), each variant of an experiment on each shape, through the same
// PrefillCase (inputs, poisoning, accuracy gate) as the register-tile family.
#pragma once
#include "common/harness/experiment.hpp"
#include "kernels/hopper_prefill/hopper_prefill.hpp"
#include "kernels/prefill/prefill_bench.hpp"

namespace schedlab::kernels {

// The Hopper prefill kernel (hopper_prefill.cuh), one policy per variant.
struct HopperPrefillKernel {
  static KernelSupport support() { return hopper_prefill_support(); }
  template <class Policy>
  static void launch(const PrefillArgs& args, gpu::api::stream_t stream) {
    launch_hopper_prefill<Policy>(args, stream);
  }
  template <class Policy>
  static void require_fits(const PrefillProblem& p) {
    require_hopper_prefill_fits<Policy>(p);
  }
};

template <class... Policies>
using HopperPrefillExperiment = harness::Experiment<PrefillFamilyOf<HopperPrefillKernel>, Policies...>;

}  // namespace schedlab::kernels
