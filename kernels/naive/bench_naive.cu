// The end-to-end check of the harness on a GPU: the naive kernel over a few shapes of the
// FlashAttention-3 setting, with the accuracy gate and provenance.
#include "common/harness/gpu_platform.hpp"
#include "kernels/naive/naive_attention.hpp"

using namespace schedlab;

int main(int argc, char** argv) {
  return harness::bench_main(argc, argv, "naive_attention", [](harness::Registry& r) {
    for (int seq : {512, 2048}) {
      for (int head_dim : {64, 128}) {
        for (bool causal : {false, true}) {
          const PrefillProblem p = kernels::fa3_setting(seq, head_dim, causal, DType::bf16);
          const std::string name = "naive_attention/naive/bf16/seq:" + std::to_string(seq) +
                                   "/head_dim:" + std::to_string(head_dim) + "/causal:" + std::to_string(causal);
          r.add<PrefillProblem>(name, "family=prefill;experiment=naive_attention;variant=naive;baseline=naive;dtype=bf16",
                                p, [](const PrefillProblem& q) {
                                  require_support(q, kernels::naive_attention_support());
                                  return std::make_unique<kernels::PrefillCase>(q, kernels::launch_naive_attention);
                                });
        }
      }
    }
  }, harness::gpu_platform);
}
