// Benchmark registration shared by the prefill experiments: each variant of an experiment on
// each shape of the run's tier (or of --schedlab_axes); the shapes are in prefill_shapes.hpp.
// Any prefill kernel that runs as a PrefillCase registers through PrefillFamilyOf.
#pragma once
#include <string>
#include <vector>

#include "common/gpu/runtime.hpp"
#include "common/harness/experiment.hpp"
#include "kernels/prefill/flash_prefill.hpp"
#include "kernels/prefill/prefill_plan.hpp"
#include "kernels/prefill/prefill_shapes.hpp"

namespace schedlab::kernels {

// A prefill family for harness::Experiment over one kernel (the register-tile kernel, the
// Hopper kernel, the naive check: one problem family in the records). Kernel provides
//   static KernelSupport support();
//   template <class Policy> static void launch(const PrefillArgs&, gpu::api::stream_t);
// and optionally
//   template <class Policy> static void require_fits(const PrefillProblem&);  // UnsupportedProblem: skipped
// and `tiers` its shape lists per tier (the FA3 sweep unless given).
template <class Kernel, const harness::TierAxes& (*tiers)() = prefill_tiers>
struct PrefillFamilyOf {
  static std::vector<PrefillShape> shapes(const harness::ShapeSelection& selection) {
    return prefill_shapes(selection, tiers());
  }
  template <class Policy>
  static void add(harness::Registry& r, const harness::VariantNames& v, const PrefillShape& s) {
    const std::string shape = prefill_shape_name(s);
    harness::require_support_of_requested(r, shape, s, Kernel::support());
    r.add<PrefillProblem>(v.experiment + "/" + v.variant + "/" + shape,
                          harness::record_label("prefill", v, dtype_name(s.dtype)), s, [](const PrefillProblem& p) {
                            require_support(p, Kernel::support());
                            if constexpr (requires { Kernel::template require_fits<Policy>(p); })
                              Kernel::template require_fits<Policy>(p);
                            return std::make_unique<PrefillCase>(p, &Kernel::template launch<Policy>);
                          });
  }
};

// The flash prefill kernel (flash_prefill.cuh), one policy per variant.
struct FlashPrefillKernel {
  static KernelSupport support() { return flash_prefill_support(); }
  template <class Policy>
  static void launch(const PrefillArgs& args, gpu::api::stream_t stream) {
    launch_flash_prefill<Policy>(args, stream);
  }
  // The plan on this device: a policy that fits it only with its key tile cut runs cut; one
  // that does not fit even so is a skipped case (kernels/prefill/prefill_plan.hpp).
  template <class Policy>
  static void require_fits(const PrefillProblem& p) {
    (void)plan_prefill_on_device<Policy>(p);
  }
};

using PrefillFamily = PrefillFamilyOf<FlashPrefillKernel>;

template <class... Policies>
using PrefillExperiment = harness::Experiment<PrefillFamily, Policies...>;

// The same with the fp8 setting added to every tier (prefill_tiers_with_fp8).
template <class... Policies>
using PrefillFp8Experiment = harness::Experiment<PrefillFamilyOf<FlashPrefillKernel, prefill_tiers_with_fp8>, Policies...>;

}  // namespace schedlab::kernels
