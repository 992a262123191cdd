// The accuracy gate: a kernel's output on sampled query rows against the double-precision
// reference computed from the same stored inputs (common/reference/attention_ref.hpp).
//
// Every bound is relative to the output's own scale, so it has the same power at any context
// length: attention over N random keys has output rows of RMS ~ sqrt(e / N) (0.006 at 64k),
// and an absolute tolerance sized for O(1) values would pass a kernel that drops keys.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "common/dtype.hpp"

namespace schedlab {

// An output passes when, with r the reference and o the output:
//   - no value of o is NaN or inf;
//   - over every compared value, ||o - r|| / ||r|| <= rel_l2;
//   - on every output row (one query row: head_dim values), ||o - r|| / ||r|| <= row_rel_l2
//     (a row whose reference is all zeros, a row that sees no key, must be exactly zero);
//   - at most max_mismatch_pct percent of elements miss |o - r| <= elem_rel * rms(r's row).
struct Tolerance {
  double rel_l2;
  double row_rel_l2;
  double elem_rel;
  double max_mismatch_pct;  // percent, not fraction
};

// The bounds for a kernel that computes in compute_dtype (its MMA input type: Q, K, P, V)
// and reads K/V stored as kv_dtype. The reasoning behind each number is in accuracy.cpp.
Tolerance default_tolerance(DType compute_dtype, DType kv_dtype);

// The rule in one line, for the results context (key accuracy_rule).
std::string accuracy_rule();

struct AccuracyReport {
  double rel_l2_err = 0, max_row_rel_err = 0, max_abs_err = 0, mismatch_pct = 0;
  std::size_t worst_row = 0;  // the row with the largest relative error
  std::size_t nonfinite = 0;  // NaN/inf in the kernel output (e.g. poisoned, never written)
  std::size_t compared = 0;   // elements compared
  std::size_t rows = 0;       // rows compared
  bool passed = false;
  std::string message;        // one line: the verdict and the numbers behind it
};

// out: the kernel's output for the same rows as ref, converted to float; both are rows of
// row_len values. A size mismatch, a size that is not whole rows, or a non-finite reference
// fails the comparison (with a message) rather than throwing.
AccuracyReport compare(const std::vector<float>& out, const std::vector<double>& ref, const Tolerance& tol,
                       std::size_t row_len);

// The worse of two reports (failed before passed, then the larger row error): one verdict
// for several checks of the same configuration.
const AccuracyReport& worse(const AccuracyReport& a, const AccuracyReport& b);

}  // namespace schedlab
