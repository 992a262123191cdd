// The end-to-end check of the harness on a GPU: the naive kernel over a few shapes of the
// FlashAttention-3 setting, with the accuracy gate and provenance. It takes the prefill
// axes (--schedlab_axes) and tiers; its own tier lists stay short, the kernel being slow
// (0.14 s per launch at sequence 512, 0.55 s at 2048 on the H200).
#include "common/harness/gpu_platform.hpp"
#include "kernels/naive/naive_attention.hpp"
#include "kernels/prefill/prefill_bench.hpp"

using namespace schedlab;

namespace {

struct NaiveKernel {
  static KernelSupport support() { return kernels::naive_attention_support(); }
  template <class Policy>
  static void launch(const kernels::PrefillArgs& args, gpu::api::stream_t stream) {
    kernels::launch_naive_attention(args, stream);
  }
};

const harness::TierAxes& naive_tiers() {
  static const harness::TierAxes tiers{
      .quick = {"head_dim=128;causal=0;seq=512"},
      .standard = {"head_dim=64,128;causal=0,1;seq=512"},
      .full = {"head_dim=64,128;causal=0,1;seq=512,2048"},
  };
  return tiers;
}

using NaiveFamily = kernels::PrefillFamilyOf<NaiveKernel, naive_tiers>;

}  // namespace

int main(int argc, char** argv) {
  return harness::bench_main(argc, argv, "naive_attention", [](harness::Registry& r) {
    // One variant and no A/A control: this is a check of the harness, not an experiment.
    const harness::VariantNames naive{"naive_attention", "naive", "naive", {}};
    for (const auto& shape : NaiveFamily::shapes(r.shape_selection())) NaiveFamily::add<void>(r, naive, shape);
  }, harness::gpu_platform);
}
