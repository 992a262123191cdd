// Benchmark registration shared by the decode experiments: issue #3's shapes (32 query /
// 8 KV heads, head dim 128, page 16, bf16 and fp8 KV, batch x context grid, plus page 64
// for one shape), each variant of an experiment on each shape.
#pragma once
#include <string>
#include <vector>

#include "common/harness/experiment.hpp"
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

// The decode family for harness::Experiment: issue #3's shapes, each variant a DecodeCase.
struct DecodeFamily {
  static std::vector<DecodeShape> shapes() { return decode_benchmark_shapes(); }
  template <class Policy>
  static void add(harness::Registry& r, const harness::VariantNames& v, const DecodeShape& s) {
    const std::string dtype(dtype_name(s.kv_dtype));
    const std::string name = v.experiment + "/" + v.variant + "/" + dtype + "/batch:" + std::to_string(s.batch) +
                             "/context:" + std::to_string(s.context) + "/page:" + std::to_string(s.page_size);
    r.add<DecodeProblem>(name, harness::record_label("decode", v, dtype), decode_problem_for(s),
                         [](const DecodeProblem& p) {
                           require_support(p, paged_decode_support());
                           return std::make_unique<DecodeCase>(p, DecodeKernel::of<Policy>());
                         });
  }
};

template <class... Policies>
using DecodeExperiment = harness::Experiment<DecodeFamily, Policies...>;

}  // namespace schedlab::kernels
