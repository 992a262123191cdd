// The accuracy gate: a kernel's output on sampled rows against the double-precision
// reference computed from the same stored inputs (common/reference/attention_ref.hpp).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "common/dtype.hpp"

namespace schedlab {

// An output passes when its relative L2 error is at most rel_l2, no value is NaN or inf, and
// at most max_mismatch_pct percent of elements miss |o - r| <= atol + rtol * |r|.
struct Tolerance {
  double rel_l2;
  double atol;
  double rtol;
  double max_mismatch_pct;  // percent, not fraction
};

// The bounds for a kernel that computes in compute_dtype (its MMA input type: Q, K, P, V)
// and reads K/V stored as kv_dtype. The reasoning behind each number is in accuracy.cpp.
// atol assumes O(1) data (inputs drawn with stddev ~1, as the harness does).
Tolerance default_tolerance(DType compute_dtype, DType kv_dtype);

struct AccuracyReport {
  double rel_l2_err = 0, max_abs_err = 0, mismatch_pct = 0;
  std::size_t nonfinite = 0;  // NaN/inf in the kernel output (e.g. poisoned, never written)
  std::size_t compared = 0;   // elements compared
  bool passed = false;
  std::string message;        // one line: the verdict and the numbers behind it
};

// out: the kernel's output for the same rows as ref, converted to float. A size mismatch
// or a non-finite reference fails the comparison (with a message) rather than throwing.
AccuracyReport compare(const std::vector<float>& out, const std::vector<double>& ref, const Tolerance& tol);

}  // namespace schedlab
