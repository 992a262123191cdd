// Benchmark registration of the Hopper prefill experiments: the prefill shapes of the run's
// tier (or of --schedlab_axes), each variant of an experiment on each shape, through the same
// PrefillCase (inputs, poisoning, accuracy gate) as the register-tile family.
#pragma once
#include <string>

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

// The prefill tiers with fp8 e4m3 at head dim 128, seq 8192 (FA3 batch and heads): non-causal
// in every tier (prefill_tiers_with_fp8), causal too in the default and full tiers. Their bf16
// twins are in every tier already, so one run gives fp8 / bf16 of the same policy.
inline const harness::TierAxes& hopper_prefill_tiers_with_fp8() {
  static const harness::TierAxes tiers = [] {
    harness::TierAxes t = prefill_tiers_with_fp8();
    for (auto* tier : {&t.standard, &t.full}) tier->push_back("dtype=fp8;head_dim=128;causal=1;seq=8192");
    return t;
  }();
  return tiers;
}

template <class... Policies>
using HopperPrefillFp8Experiment =
    harness::Experiment<PrefillFamilyOf<HopperPrefillKernel, hopper_prefill_tiers_with_fp8>, Policies...>;

// A serving engine's prefill batch: 30 prompts of lognormal lengths around 1536 tokens (256 to
// 8192) and two of 32k, packed as one ragged batch, GQA 64/8 at head dim 128, causal.
inline const std::string kServingPrefillBatch =
    "lengths=lognormal:30:1536:0.5:256-8192+2x32768;q_heads=64;kv_heads=8;head_dim=128;causal=1";

// The tiers above plus the serving batch in bf16 and fp8 (default and full tiers): the shapes
// the family default is compared with its peers on.
inline const harness::TierAxes& hopper_prefill_frontier_tiers() {
  static const harness::TierAxes tiers = [] {
    harness::TierAxes t = hopper_prefill_tiers_with_fp8();
    for (auto* tier : {&t.standard, &t.full}) tier->push_back("dtype=bf16,fp8;" + kServingPrefillBatch);
    return t;
  }();
  return tiers;
}

template <class... Policies>
using HopperPrefillFrontierExperiment =
    harness::Experiment<PrefillFamilyOf<HopperPrefillKernel, hopper_prefill_frontier_tiers>, Policies...>;

}  // namespace schedlab::kernels
