// The policies of the decode row-tile bodies that the GPU tests run (GQA groups above 16 in one
// CTA of several row tiles), each by name: the warpgroup body under each work partition and
// partial merge, and the warp body. Each experiment with such variants registers them from its
// GPU tests (experiments/<name>/test_gpu.cpp), where each also gets a sanitizer test of its own;
// the seed sweep (seed_sweep_decode.cpp) runs every registered one over many seeds.
#pragma once
#include <vector>

#include "kernels/decode/decode_case.hpp"

namespace schedlab::kernels {

struct NamedDecodeKernel {
  const char* name;
  DecodeKernel kernel;
  RowTileMma body;
};

template <class Policy>
NamedDecodeKernel named_decode_kernel() {
  return {Policy::kName, DecodeKernel::of<Policy>(), Policy::RowTiles::kRowTileMma};
}

// Every registered variant, in registration order (static initialization: complete once main runs).
inline std::vector<NamedDecodeKernel>& decode_row_tile_variants() {
  static std::vector<NamedDecodeKernel> all;
  return all;
}
inline bool register_row_tile_variants(const std::vector<NamedDecodeKernel>& variants) {
  decode_row_tile_variants().insert(decode_row_tile_variants().end(), variants.begin(), variants.end());
  return true;
}

}  // namespace schedlab::kernels
