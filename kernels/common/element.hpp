// Reading and writing one stored element as float in device code, by dtype tag.
#pragma once
#include <cstdint>

#include "common/dtype.hpp"
#include "common/numeric.hpp"

namespace schedlab::kernels {

template <DType kT>
struct Element;
template <>
struct Element<DType::bf16> {
  using storage = std::uint16_t;
  static __device__ float load(const storage* p, std::size_t i) { return numeric::bf16_bits_to_float(p[i]); }
  static __device__ void store(storage* p, std::size_t i, float x) { p[i] = numeric::float_to_bf16_bits(x); }
};
template <>
struct Element<DType::f16> {
  using storage = std::uint16_t;
  static __device__ float load(const storage* p, std::size_t i) { return numeric::f16_bits_to_float(p[i]); }
  static __device__ void store(storage* p, std::size_t i, float x) { p[i] = numeric::float_to_f16_bits(x); }
};

}  // namespace schedlab::kernels
