#include "common/dtype.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace schedlab {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr std::uint8_t kFp8SignBit = 0x80;
constexpr std::uint8_t kFp8MaxFinite = 0x7E;
constexpr std::uint8_t kFp8NaN = 0x7F;
constexpr float kFp8Max = 448.f;

// For every pair of adjacent positive codes (c, c + 1) up to last_code: their midpoint rounds
// to the one with an even mantissa (the even code), and a float either side of it rounds to
// the nearer one. Checks round-to-nearest-even everywhere, subnormals included.
template <typename Code, typename Decode, typename Encode>
void expect_rne_between_all_neighbours(Code last_code, Decode decode, Encode encode) {
  for (std::uint32_t c = 0; c < last_code; ++c) {
    const float lo = decode(Code(c)), hi = decode(Code(c + 1));
    const float mid = lo + (hi - lo) / 2;  // exact: both have few significant bits
    const Code even = (c % 2 == 0) ? Code(c) : Code(c + 1);
    ASSERT_EQ(encode(mid), even) << "tie between codes " << c << " and " << c + 1;
    ASSERT_EQ(encode(std::nextafter(mid, 0.f)), Code(c)) << "just below the tie after code " << c;
    ASSERT_EQ(encode(std::nextafter(mid, kInf)), Code(c + 1)) << "just above the tie after code " << c;
  }
}

// Every non-NaN code decodes to a value that encodes back to the same code (so decoding is
// injective and encoding is its inverse on representable values, signed zeros included).
template <typename Code, typename Decode, typename Encode>
int expect_round_trips(std::uint32_t num_codes, Decode decode, Encode encode) {
  int nans = 0;
  for (std::uint32_t c = 0; c < num_codes; ++c) {
    const float x = decode(Code(c));
    if (std::isnan(x)) {
      ++nans;
      continue;
    }
    EXPECT_EQ(encode(x), Code(c)) << "code " << c << " decodes to " << x;
  }
  return nans;
}

// ---- names ------------------------------------------------------------------------------

TEST(DType, NamesRoundTripAndFp8Alias) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::fp8_e4m3}) EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  EXPECT_EQ(parse_dtype("f32"), DType::f32);
  EXPECT_EQ(parse_dtype("f16"), DType::f16);
  EXPECT_EQ(parse_dtype("bf16"), DType::bf16);
  EXPECT_EQ(parse_dtype("fp8_e4m3"), DType::fp8_e4m3);
  EXPECT_EQ(parse_dtype("fp8"), DType::fp8_e4m3);
}

TEST(DType, UnknownNameThrowsNamingIt) {
  try {
    parse_dtype("fp16x");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("fp16x"), std::string::npos) << e.what();
  }
}

TEST(DType, Bytes) {
  EXPECT_EQ(dtype_bytes(DType::f32), 4u);
  EXPECT_EQ(dtype_bytes(DType::f16), 2u);
  EXPECT_EQ(dtype_bytes(DType::bf16), 2u);
  EXPECT_EQ(dtype_bytes(DType::fp8_e4m3), 1u);
}

// ---- fp8 E4M3 ---------------------------------------------------------------------------

TEST(Fp8E4M3, DecodesTheOcpTableFacts) {
  EXPECT_EQ(fp8_e4m3_to_float(0x00), 0.f);
  EXPECT_TRUE(std::signbit(fp8_e4m3_to_float(0x80)));
  EXPECT_EQ(fp8_e4m3_to_float(0x80), 0.f);
  EXPECT_EQ(fp8_e4m3_to_float(0x01), std::ldexp(1.f, -9));       // smallest subnormal
  EXPECT_EQ(fp8_e4m3_to_float(0x07), 7 * std::ldexp(1.f, -9));   // largest subnormal
  EXPECT_EQ(fp8_e4m3_to_float(0x08), std::ldexp(1.f, -6));       // smallest normal
  EXPECT_EQ(fp8_e4m3_to_float(0x38), 1.f);                       // exponent 7 = bias
  EXPECT_EQ(fp8_e4m3_to_float(0x39), 1.125f);
  EXPECT_EQ(fp8_e4m3_to_float(0x77), 240.f);                     // S.1110.111
  EXPECT_EQ(fp8_e4m3_to_float(0x78), 256.f);                     // S.1111.000: no inf here
  EXPECT_EQ(fp8_e4m3_to_float(0x7E), kFp8Max);                   // largest finite
  EXPECT_EQ(fp8_e4m3_to_float(0xFE), -kFp8Max);
  EXPECT_EQ(fp8_e4m3_to_float(0xB8), -1.f);
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0x7F)));
  EXPECT_TRUE(std::isnan(fp8_e4m3_to_float(0xFF)));
}

TEST(Fp8E4M3, AllCodesExhaustively) {
  int nans = 0;
  for (int c = 0; c < 256; ++c) {
    const std::uint8_t code = std::uint8_t(c);
    const float x = fp8_e4m3_to_float(code);
    const bool negative = code & kFp8SignBit;
    const int exp = (code >> 3) & 0xF, mant = code & 0x7;
    if (exp == 0xF && mant == 0x7) {
      EXPECT_TRUE(std::isnan(x)) << c;
      ++nans;
      continue;
    }
    ASSERT_FALSE(std::isnan(x)) << c;
    ASSERT_FALSE(std::isinf(x)) << c;  // E4M3 has no infinities
    EXPECT_EQ(std::signbit(x), negative) << c;
    // OCP definition: subnormal 2^-6 * m/8, normal 2^(e-7) * (1 + m/8).
    const float expected = exp == 0 ? std::ldexp(float(mant) / 8, -6) : std::ldexp(1 + float(mant) / 8, exp - 7);
    EXPECT_EQ(std::abs(x), expected) << c;
    if (c > 0 && c < kFp8MaxFinite + 1) {
      EXPECT_LT(fp8_e4m3_to_float(std::uint8_t(c - 1)), x) << "positive codes increase";
    }
  }
  EXPECT_EQ(nans, 2);
}

TEST(Fp8E4M3, EveryCodeRoundTrips) {
  EXPECT_EQ(expect_round_trips<std::uint8_t>(256, fp8_e4m3_to_float, float_to_fp8_e4m3), 2);
}

TEST(Fp8E4M3, RoundsToNearestEvenEverywhere) {
  expect_rne_between_all_neighbours<std::uint8_t>(kFp8MaxFinite, fp8_e4m3_to_float, float_to_fp8_e4m3);
}

TEST(Fp8E4M3, NamedTies) {
  EXPECT_EQ(float_to_fp8_e4m3(1.0625f), 0x38);                // between 1 and 1.125: even is 1
  EXPECT_EQ(float_to_fp8_e4m3(1.1875f), 0x3A);                // between 1.125 and 1.25: 1.25
  EXPECT_EQ(float_to_fp8_e4m3(std::ldexp(1.f, -10)), 0x00);   // half the smallest subnormal -> 0
  EXPECT_EQ(float_to_fp8_e4m3(std::ldexp(3.f, -10)), 0x02);   // 1.5 subnormal steps -> 2
  EXPECT_EQ(float_to_fp8_e4m3(std::ldexp(15.f, -10)), 0x08);  // 7.5 steps -> smallest normal
  EXPECT_EQ(float_to_fp8_e4m3(432.f), kFp8MaxFinite);         // between 416 and 448: 448
  EXPECT_EQ(float_to_fp8_e4m3(-1.0625f), 0xB8);
}

TEST(Fp8E4M3, SaturatesInsteadOfOverflowing) {
  for (float x : {448.f, 449.f, 464.f, 480.f, 1e6f, std::numeric_limits<float>::max(), kInf}) {
    EXPECT_EQ(float_to_fp8_e4m3(x), kFp8MaxFinite) << x;
    EXPECT_EQ(float_to_fp8_e4m3(-x), kFp8SignBit | kFp8MaxFinite) << -x;
  }
}

TEST(Fp8E4M3, NaNAndSignedZero) {
  EXPECT_EQ(float_to_fp8_e4m3(kNaN), kFp8NaN);
  EXPECT_EQ(float_to_fp8_e4m3(-kNaN), kFp8NaN);
  EXPECT_EQ(float_to_fp8_e4m3(0.f), 0x00);
  EXPECT_EQ(float_to_fp8_e4m3(-0.f), 0x80);
  EXPECT_EQ(float_to_fp8_e4m3(1e-30f), 0x00);                 // underflow keeps the sign
  EXPECT_EQ(float_to_fp8_e4m3(-1e-30f), 0x80);
  EXPECT_EQ(float_to_fp8_e4m3(std::numeric_limits<float>::denorm_min()), 0x00);
}

// ---- f16 --------------------------------------------------------------------------------

TEST(F16, DecodesKnownValues) {
  EXPECT_EQ(f16_to_float(0x3C00), 1.f);
  EXPECT_EQ(f16_to_float(0xC000), -2.f);
  EXPECT_EQ(f16_to_float(0x0001), std::ldexp(1.f, -24));  // smallest subnormal
  EXPECT_EQ(f16_to_float(0x03FF), 1023 * std::ldexp(1.f, -24));
  EXPECT_EQ(f16_to_float(0x0400), std::ldexp(1.f, -14));  // smallest normal
  EXPECT_EQ(f16_to_float(0x7BFF), 65504.f);
  EXPECT_EQ(f16_to_float(0x7C00), kInf);
  EXPECT_EQ(f16_to_float(0xFC00), -kInf);
  EXPECT_TRUE(std::isnan(f16_to_float(0x7E00)));
  EXPECT_TRUE(std::isnan(f16_to_float(0x7C01)));  // signalling NaN stays NaN
  EXPECT_TRUE(std::signbit(f16_to_float(0x8000)));
}

TEST(F16, OverflowUnderflowAndSpecials) {
  EXPECT_EQ(float_to_f16(65504.f), 0x7BFF);
  EXPECT_EQ(float_to_f16(65519.99f), 0x7BFF);
  EXPECT_EQ(float_to_f16(65520.f), 0x7C00);  // tie with the next binade rounds to even: inf
  EXPECT_EQ(float_to_f16(1e10f), 0x7C00);
  EXPECT_EQ(float_to_f16(-kInf), 0xFC00);
  EXPECT_EQ(float_to_f16(std::ldexp(1.f, -25)), 0x0000);  // half the smallest subnormal
  EXPECT_EQ(float_to_f16(std::nextafter(std::ldexp(1.f, -25), 1.f)), 0x0001);
  EXPECT_EQ(float_to_f16(-0.f), 0x8000);
  EXPECT_TRUE(std::isnan(f16_to_float(float_to_f16(kNaN))));
  EXPECT_EQ(float_to_f16(-kNaN) & 0x8000, 0x8000);  // NaN keeps its sign
}

// ---- bf16 -------------------------------------------------------------------------------

TEST(Bf16, NamedCases) {
  EXPECT_EQ(float_to_bf16(1.f), 0x3F80);
  EXPECT_EQ(float_to_bf16(1.f + std::ldexp(1.f, -8)), 0x3F80);      // tie: even is 1
  EXPECT_EQ(float_to_bf16(1.f + 3 * std::ldexp(1.f, -8)), 0x3F82);  // tie: even is 1 + 2^-6
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);  // rounds up to inf
  EXPECT_EQ(float_to_bf16(kInf), 0x7F80);
  EXPECT_EQ(float_to_bf16(-0.f), 0x8000);
  // A NaN whose payload lives only in the low 16 bits must not truncate to infinity.
  EXPECT_TRUE(std::isnan(bf16_to_float(float_to_bf16(std::bit_cast<float>(0x7F800001u)))));
}

// ---- both 16-bit formats ---------------------------------------------------------------

struct HalfFormat {
  const char* name;
  float (*decode)(std::uint16_t);
  std::uint16_t (*encode)(float);
  std::uint16_t largest_finite;
  int nan_codes;  // exponent all ones, mantissa non-zero, either sign
};

class HalfFormats : public ::testing::TestWithParam<HalfFormat> {};

TEST_P(HalfFormats, EveryCodeRoundTrips) {
  const HalfFormat f = GetParam();
  EXPECT_EQ(expect_round_trips<std::uint16_t>(1u << 16, f.decode, f.encode), f.nan_codes);
}

TEST_P(HalfFormats, RoundsToNearestEvenEverywhere) {
  const HalfFormat f = GetParam();
  expect_rne_between_all_neighbours<std::uint16_t>(f.largest_finite, f.decode, f.encode);
}

// bf16's subnormals are float subnormals, so its neighbour walk covers those too.
INSTANTIATE_TEST_SUITE_P(Formats, HalfFormats,
                         ::testing::Values(HalfFormat{"f16", f16_to_float, float_to_f16, 0x7BFF, 2 * 1023},
                                           HalfFormat{"bf16", bf16_to_float, float_to_bf16, 0x7F7F, 2 * 127}),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- load / store -----------------------------------------------------------------------

TEST(DType, LoadAndStoreUseEachTypesWidth) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::fp8_e4m3}) {
    unsigned char buf[16] = {};
    store_from_float(t, buf, 1, -1.5f);
    store_from_float(t, buf, 2, 3.f);
    EXPECT_EQ(load_as_float(t, buf, 0), 0.f) << dtype_name(t);  // neighbours untouched
    EXPECT_EQ(load_as_float(t, buf, 1), -1.5f) << dtype_name(t);
    EXPECT_EQ(load_as_float(t, buf, 2), 3.f) << dtype_name(t);
    EXPECT_EQ(load_as_float(t, buf, 3), 0.f) << dtype_name(t);
  }
  unsigned char byte = 0;
  store_from_float(DType::fp8_e4m3, &byte, 0, 1000.f);
  EXPECT_EQ(byte, kFp8MaxFinite);  // stores go through the saturating conversion
}

}  // namespace
}  // namespace schedlab
