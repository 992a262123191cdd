// The prefill problems every prefill family's GPU test runs against the float64 reference:
// lengths that are not tile multiples, causal with q_len < kv_len and q_len > kv_len (rows
// that see no key), GQA, head dim 64 and 128, bf16 and f16, one query row, one key; and the
// same kinds of shape in fp8 e4m3 for the families that read it.
#pragma once
#include <vector>

#include "common/problem.hpp"

namespace schedlab::kernels {

struct PrefillTestConfig {
  const char* name;
  int batch, q_heads, kv_heads, q_len, kv_len, head_dim;
  bool causal;
  DType dtype;
  PrefillProblem problem() const {
    PrefillProblem p;
    p.batch = batch;
    p.q_heads = q_heads;
    p.kv_heads = kv_heads;
    p.q_len = q_len;
    p.kv_len = kv_len;
    p.head_dim = head_dim;
    p.causal = causal;
    p.dtype = dtype;
    return p;
  }
};

inline std::vector<PrefillTestConfig> prefill_test_configs() {
  return {
      {"mha_d64_ragged", 2, 4, 4, 100, 100, 64, false, DType::bf16},
      {"gqa4_causal_q_lt_kv", 1, 8, 2, 77, 300, 128, true, DType::bf16},
      {"gqa4_causal_q_gt_kv_f16", 1, 4, 1, 300, 77, 128, true, DType::f16},
      {"gqa2_causal_513_f16", 2, 6, 3, 513, 513, 128, true, DType::f16},
      {"mha_d64_1000_f16", 1, 2, 2, 1000, 1000, 64, false, DType::f16},
      {"gqa2_d64_causal_long_kv", 1, 2, 1, 129, 1100, 64, true, DType::bf16},
      {"d128_tile_multiple", 1, 2, 2, 256, 256, 128, false, DType::bf16},
      {"d128_causal_1_row", 3, 2, 1, 1, 191, 128, true, DType::bf16},
      {"d64_one_key", 2, 4, 2, 5, 1, 64, false, DType::f16},
      {"d128_causal_one_key", 1, 4, 2, 5, 1, 128, true, DType::bf16},
  };
}

// fp8 e4m3 Q, K, V (per-head scales drawn by the case): head dim 64 and 128, causal and not,
// q_len below and above kv_len, GQA, lengths that are not multiples of the 32-key steps.
inline std::vector<PrefillTestConfig> prefill_fp8_test_configs() {
  return {
      {"fp8_mha_d64_ragged", 2, 4, 4, 100, 100, 64, false, DType::fp8_e4m3},
      {"fp8_gqa4_causal_q_lt_kv", 1, 8, 2, 77, 300, 128, true, DType::fp8_e4m3},
      {"fp8_gqa2_d64_causal_q_gt_kv", 1, 4, 2, 300, 77, 64, true, DType::fp8_e4m3},
      {"fp8_gqa2_d128_1000", 1, 4, 2, 1000, 1000, 128, false, DType::fp8_e4m3},
      {"fp8_gqa2_d128_causal_513", 2, 6, 3, 513, 513, 128, true, DType::fp8_e4m3},
      {"fp8_d64_q_lt_kv", 1, 2, 1, 129, 1100, 64, false, DType::fp8_e4m3},
      {"fp8_d128_causal_1_row", 3, 2, 1, 1, 191, 128, true, DType::fp8_e4m3},
  };
}

}  // namespace schedlab::kernels
