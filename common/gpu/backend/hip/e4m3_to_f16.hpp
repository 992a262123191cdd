// OCP fp8 e4m3 bytes to f16 operands of the 16-bit MFMA by bit moves alone, for the decode
// kernel's fp8 KV (its queries and probabilities stay 16-bit, so its products are 16-bit
// ones: backend/hip/attention_tile_fp8.hpp, WarpTileKvFp8). The hardware's own fp8
// conversions would not serve both targets alike: gfx942 reads fp8 as e4m3 FNUZ, not OCP.
//
// An e4m3 byte s eeee mmm placed as the f16 bits s 0eeee mmm0000000 is the same value times
// 2^-8 (f16's exponent bias is 15, e4m3's 7), exactly, subnormals included (e4m3 m x 2^-9
// becomes the f16 subnormal m x 2^-17; the f16 MFMA keeps subnormal inputs on gfx942 and
// gfx950 whatever the MODE register says: kernels/decode/README.md). The caller multiplies
// the products back by kE4m3AsF16Scale, once per score or output, not once per element. The
// e4m3 NaN bytes (0x7F, 0xFF) become +-480: inputs are expected finite, as in the prefill
// fp8 tile.
// Two bytes at a time: v_perm_b32 puts them at the top of the two 16-bit halves of a word
// (byte_pair_selector), three more instructions finish the pair (f16x2_from_high_bytes).
// Plain constexpr functions, no vendor header: host and device code alike, so a CPU test
// (common/tests/test_mfma_layout.cpp) checks them against the reference conversion.
#pragma once
#include <cstdint>

namespace schedlab::gpu::e4m3 {

inline constexpr float kE4m3AsF16Scale = 256.f;  // true value / value of the f16 bits

// t holds e4m3 bytes at bits 15:8 (low half) and 31:24 (high half), zeros elsewhere: the
// f16x2 of 2^-8 times each.
constexpr std::uint32_t f16x2_from_high_bytes(std::uint32_t t) {
  return ((t >> 1) & 0x3F803F80u) | (t & 0x80008000u);  // exponent and mantissa one bit down; signs stay
}

// v_perm_b32 selector (__builtin_amdgcn_perm(hi, lo, selector)) that builds that t from byte
// j_lo of `lo` and byte j_hi of `hi`: selector byte k picks result byte k, 0-3 from lo, 4-7
// from hi, 0x0C a zero byte.
constexpr std::uint32_t byte_pair_selector(int j_lo, int j_hi) {
  return 0x0Cu | (std::uint32_t(j_lo) << 8) | (0x0Cu << 16) | (std::uint32_t(4 + j_hi) << 24);
}

// The reference form: bytes b0 (low half) and b1.
constexpr std::uint32_t pair_as_f16x2(std::uint32_t b0, std::uint32_t b1) {
  return f16x2_from_high_bytes((b1 << 24) | (b0 << 8));
}

}  // namespace schedlab::gpu::e4m3
