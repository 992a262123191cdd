// Host entry points of the conversions. The arithmetic lives in common/numeric.hpp, shared
// with the device fill kernels and kernel element types, so that host references and device
// buffers agree on every stored bit; the tests of this file exercise it exhaustively.
#include "common/dtype.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "common/numeric.hpp"

namespace schedlab {
namespace {

template <typename T>
T load_raw(const void* base, std::size_t index) {
  T v;
  std::memcpy(&v, static_cast<const char*>(base) + index * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void store_raw(void* base, std::size_t index, T v) {
  std::memcpy(static_cast<char*>(base) + index * sizeof(T), &v, sizeof(T));
}

}  // namespace

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::fp8_e4m3: return "fp8_e4m3";
  }
  throw std::invalid_argument("dtype_name: unknown DType value " + std::to_string(int(t)));
}

DType parse_dtype(std::string_view name) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::fp8_e4m3}) {
    if (name == dtype_name(t)) return t;
  }
  if (name == "fp8") return DType::fp8_e4m3;  // the only fp8 flavour here
  throw std::invalid_argument("unknown dtype '" + std::string(name) +
                              "' (expected f32, f16, bf16, fp8_e4m3 or fp8)");
}

std::size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::f32: return sizeof(float);
    case DType::f16:
    case DType::bf16: return sizeof(std::uint16_t);
    case DType::fp8_e4m3: return sizeof(std::uint8_t);
  }
  throw std::invalid_argument("dtype_bytes: unknown DType value " + std::to_string(int(t)));
}

float bf16_to_float(std::uint16_t bits) { return numeric::bf16_bits_to_float(bits); }
std::uint16_t float_to_bf16(float x) { return numeric::float_to_bf16_bits(x); }
float f16_to_float(std::uint16_t bits) { return numeric::f16_bits_to_float(bits); }
std::uint16_t float_to_f16(float x) { return numeric::float_to_f16_bits(x); }
float fp8_e4m3_to_float(std::uint8_t bits) { return numeric::fp8_e4m3_bits_to_float(bits); }
std::uint8_t float_to_fp8_e4m3(float x) { return numeric::float_to_fp8_e4m3_bits(x); }

float load_as_float(DType t, const void* base, std::size_t index) {
  switch (t) {
    case DType::f32: return load_raw<float>(base, index);
    case DType::f16: return f16_to_float(load_raw<std::uint16_t>(base, index));
    case DType::bf16: return bf16_to_float(load_raw<std::uint16_t>(base, index));
    case DType::fp8_e4m3: return fp8_e4m3_to_float(load_raw<std::uint8_t>(base, index));
  }
  throw std::invalid_argument("load_as_float: unknown DType value " + std::to_string(int(t)));
}

void store_from_float(DType t, void* base, std::size_t index, float x) {
  switch (t) {
    case DType::f32: return store_raw(base, index, x);
    case DType::f16: return store_raw(base, index, float_to_f16(x));
    case DType::bf16: return store_raw(base, index, float_to_bf16(x));
    case DType::fp8_e4m3: return store_raw(base, index, float_to_fp8_e4m3(x));
  }
  throw std::invalid_argument("store_from_float: unknown DType value " + std::to_string(int(t)));
}

}  // namespace schedlab
