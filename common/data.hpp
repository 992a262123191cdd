// Random test data that the host and GPU fill kernels generate identically: element i of a
// buffer is normal_at(seed, i), a pure function of (seed, i), so a fill is order-free, any
// thread can produce any element, and the host can regenerate whatever a device wrote.
#pragma once
#include <math.h>  // ::log, ::cos, ::sqrt: callable from host and from CUDA/HIP device code

#include <cstddef>
#include <cstdint>

#include "common/dtype.hpp"

#ifndef SCHEDLAB_HD
#if defined(__CUDACC__) || defined(__HIPCC__)
#define SCHEDLAB_HD __host__ __device__
#else
#define SCHEDLAB_HD
#endif
#endif

namespace schedlab {

namespace detail {
// splitmix64's finalizer (Steele, Lea, Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): a bijection on 64 bits whose outputs for consecutive inputs
// pass BigCrush, which is what a counter-based generator needs.
SCHEDLAB_HD inline std::uint64_t splitmix64_mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
// splitmix64's stream increment (2^64 / golden ratio, odd).
inline constexpr std::uint64_t kSplitmixGamma = 0x9E3779B97F4A7C15ull;
}  // namespace detail

// A standard normal sample for (seed, index). The seed is mixed once into a stream start and
// the index walks the stream, so different seeds give unrelated sequences. The 64 hashed bits
// split into two 32-bit uniforms for Box-Muller (cosine branch); u1 is offset by half a step
// so it is never 0 and log(u1) stays finite (|x| <= sqrt(2 ln 2^33) ~ 6.8).
// Computed in double and rounded once to float: host libm and the device math libraries
// differ by an ulp or so in double, which almost never changes the float.
SCHEDLAB_HD inline float normal_at(std::uint64_t seed, std::uint64_t index) {
  constexpr double kTwoPi = 6.283185307179586476925;
  constexpr double kInv2Pow32 = 1.0 / 4294967296.0;
  constexpr int kHalfBits = 32;
  const std::uint64_t stream = detail::splitmix64_mix(seed);
  const std::uint64_t bits = detail::splitmix64_mix(stream + (index + 1) * detail::kSplitmixGamma);
  const double u1 = (double(bits >> kHalfBits) + 0.5) * kInv2Pow32;
  const double u2 = double(bits & 0xFFFFFFFFull) * kInv2Pow32;
  return float(::sqrt(-2.0 * ::log(u1)) * ::cos(kTwoPi * u2));
}

// Fills dst[0, n) with stddev * normal_at(seed, i), stored in t (rounded with the
// conversions of dtype.hpp; fp8 saturates at +-448).
void fill_normal_host(DType t, void* dst, std::size_t n, std::uint64_t seed, float stddev);

}  // namespace schedlab
