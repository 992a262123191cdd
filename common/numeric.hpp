// Bit-exact float <-> storage conversions usable on host and device (the device fill
// kernel and the host references must agree on every stored value). Round to nearest
// even everywhere; fp8 is OCP E4M3: saturates to +-448, NaN is 0x7F.
#pragma once
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define SCHEDLAB_HD __host__ __device__
#else
#define SCHEDLAB_HD
#endif

namespace schedlab::numeric {

SCHEDLAB_HD inline std::uint32_t float_bits(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
SCHEDLAB_HD inline float bits_float(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

SCHEDLAB_HD inline std::uint16_t float_to_bf16_bits(float x) {
  std::uint32_t b = float_bits(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((b >> 16) | 0x40u);  // quiet NaN
  b += 0x7fffu + ((b >> 16) & 1u);
  return static_cast<std::uint16_t>(b >> 16);
}
SCHEDLAB_HD inline float bf16_bits_to_float(std::uint16_t h) { return bits_float(std::uint32_t(h) << 16); }

// Rounds the magnitude bits of a finite float to `mant_bits` mantissa bits for a format
// with exponent bias `bias` and smallest normal exponent 1 (subnormals below). Returns the
// target's exponent/mantissa field (may carry into the exponent) without sign.
SCHEDLAB_HD inline std::uint32_t round_to_small_float(std::uint32_t abs_bits, int mant_bits, int bias) {
  const int exp32 = static_cast<int>(abs_bits >> 23);  // biased by 127
  if (exp32 == 0) return 0;                            // float subnormals are below every target's range
  const std::uint32_t mant = (abs_bits & 0x7fffffu) | 0x800000u;  // with the implicit one
  int e = exp32 - 127 + bias;                          // target biased exponent
  int shift = 23 - mant_bits;
  if (e < 1) {                                         // target subnormal: shift further right
    shift += 1 - e;
    e = 0;
  }
  if (shift > 24) return 0;
  const std::uint32_t kept = mant >> shift;
  const std::uint32_t rem = mant & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1);
  std::uint32_t r = kept + ((rem > half || (rem == half && (kept & 1u))) ? 1u : 0u);
  // kept includes the implicit one for normals: fold it into the exponent field.
  if (e == 0) return r;  // subnormal (a carry into bit mant_bits makes it the smallest normal)
  return (static_cast<std::uint32_t>(e) << mant_bits) + (r - (1u << mant_bits));
}

SCHEDLAB_HD inline std::uint16_t float_to_f16_bits(float x) {
  const std::uint32_t b = float_bits(x);
  const std::uint16_t sign = static_cast<std::uint16_t>((b >> 16) & 0x8000u);
  const std::uint32_t a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u;  // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00u; // rounds past 65504: inf
  return sign | static_cast<std::uint16_t>(round_to_small_float(a, 10, 15));
}
SCHEDLAB_HD inline float f16_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  const std::uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return bits_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) return bits_float(sign) + (sign ? -1.f : 1.f) * static_cast<float>(m) * (1.f / 16777216.f);  // m * 2^-24
  return bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

inline constexpr std::uint8_t kFp8E4m3Nan = 0x7f;
inline constexpr std::uint8_t kFp8E4m3MaxBits = 0x7e;  // 448

SCHEDLAB_HD inline std::uint8_t float_to_fp8_e4m3_bits(float x) {
  const std::uint32_t b = float_bits(x);
  const std::uint8_t sign = static_cast<std::uint8_t>((b >> 24) & 0x80u);
  const std::uint32_t a = b & 0x7fffffffu;
  if (a > 0x7f800000u) return kFp8E4m3Nan;
  std::uint32_t r = a >= 0x43e80000u ? 0x7fu : round_to_small_float(a, 3, 7);  // >= 464 rounds past 448
  if (r > kFp8E4m3MaxBits) r = kFp8E4m3MaxBits;                                // saturate, never NaN
  return sign | static_cast<std::uint8_t>(r);
}
SCHEDLAB_HD inline float fp8_e4m3_bits_to_float(std::uint8_t v) {
  const float sign = (v & 0x80u) ? -1.f : 1.f;
  const std::uint32_t e = (v >> 3) & 0xfu, m = v & 0x7u;
  if (e == 0xf && m == 0x7) return bits_float(0x7fc00000u);
  if (e == 0) return sign * static_cast<float>(m) * (1.f / 512.f);  // m * 2^-9
  return sign * bits_float(((e + 120u) << 23) | (m << 20));
}

}  // namespace schedlab::numeric
