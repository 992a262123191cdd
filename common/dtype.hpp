// Element types the kernels read, and exact host-side conversions for references and
// data checks. fp8 is OCP FP8 E4M3 ("e4m3fn"): bias 7, no infinities, NaN = S.1111.111,
// largest finite 448; conversions from float round to nearest even and saturate.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace schedlab {

enum class DType { f32, f16, bf16, fp8_e4m3 };

std::string_view dtype_name(DType t);
DType parse_dtype(std::string_view name);  // throws std::invalid_argument on an unknown name
std::size_t dtype_bytes(DType t);

float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float x);  // round to nearest even, NaN stays NaN
float f16_to_float(std::uint16_t bits);
std::uint16_t float_to_f16(float x);   // round to nearest even, overflow to inf
float fp8_e4m3_to_float(std::uint8_t bits);
std::uint8_t float_to_fp8_e4m3(float x);  // RNE, |x| > 448 saturates to +-448, NaN -> 0x7F

// Decodes one stored element of type t (bf16/f16 as 2 bytes, fp8 as 1, f32 as 4).
float load_as_float(DType t, const void* base, std::size_t index);
// The inverse: rounds x to type t with the conversions above and stores it at base[index].
void store_from_float(DType t, void* base, std::size_t index, float x);

}  // namespace schedlab
