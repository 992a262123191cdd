// Benchmark registration shared by the decode experiments: issue #3's shapes (32 query /
// 8 KV heads, head dim 128, page 16, bf16 and fp8 KV, batch x context grid, plus page 64
// for one shape), each variant of an experiment on each shape.
#pragma once
#include <string>
#include <vector>

#include "common/harness/bench_main.hpp"
#include "kernels/decode/decode_case.hpp"

namespace schedlab::kernels {

struct DecodeShape {
  int batch, context, page_size;
  DType kv_dtype;
};

inline std::vector<DecodeShape> decode_benchmark_shapes() {
  std::vector<DecodeShape> shapes;
  for (DType kv : {DType::bf16, DType::fp8_e4m3})
    for (int batch : {1, 16, 64})
      for (int context : {1024, 4096, 16384, 65536}) shapes.push_back({batch, context, 16, kv});
  shapes.push_back({16, 16384, 64, DType::bf16});
  return shapes;
}

inline DecodeProblem decode_problem_for(const DecodeShape& s, std::uint64_t seed = 1) {
  constexpr int kQHeads = 32, kKvHeads = 8, kHeadDim = 128;
  return make_decode_problem(s.batch, kQHeads, kKvHeads, kHeadDim, s.page_size,
                             std::vector<int>(s.batch, s.context), s.kv_dtype, seed);
}

template <class Policy>
void add_decode_variant(harness::Registry& r, const std::string& experiment, const std::string& variant,
                        const std::string& baseline, const DecodeShape& s) {
  const std::string dtype(dtype_name(s.kv_dtype));
  const std::string name = experiment + "/" + variant + "/" + dtype + "/batch:" + std::to_string(s.batch) +
                           "/context:" + std::to_string(s.context) + "/page:" + std::to_string(s.page_size);
  const std::string label = "family=decode;experiment=" + experiment + ";variant=" + variant + ";baseline=" + baseline +
                            ";dtype=" + dtype + ";peer=0";
  r.add<DecodeProblem>(name, label, decode_problem_for(s), [](const DecodeProblem& p) {
    require_support(p, paged_decode_support());
    return std::make_unique<DecodeCase>(p, DecodeKernel::of<Policy>());
  });
}

// Registers every (variant, shape) of an experiment whose variants are Policies...
template <class... Policies>
struct DecodeExperiment {
  std::string name, baseline;
  std::vector<std::string> variants;  // one name per policy, in order
  void register_all(harness::Registry& r) const {
    for (const DecodeShape& s : decode_benchmark_shapes()) {
      std::size_t i = 0;
      (add_decode_variant<Policies>(r, name, variants[i++], baseline, s), ...);
    }
  }
};

}  // namespace schedlab::kernels
