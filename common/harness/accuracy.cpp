#include "common/harness/accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace schedlab {
namespace {

// Why these bounds. The reference reads the same stored Q/K/V the kernel reads, so input
// quantization is not an error here; what is left is the kernel's own rounding:
//   - P = exp(S - m) rounded to the MMA input type before O += P V, each element off by at
//     most half an ulp (bf16: 2^-9 relative, f16: 2^-12), with independent signs;
//   - O rounded once to the output type (same half ulp);
//   - fp32 accumulation and exp2 approximations (~2^-22), negligible.
// With random V the output is itself an average of random-sign terms, so the P errors do not
// shrink relative to |O|: the relative L2 error is about half an ulp / sqrt(3) (uniform
// rounding error) for each of the two roundings, ~2e-3 for bf16 and ~3e-4 for f16. 1e-2
// leaves a margin of several times for bf16 and f16 alike, and is still far below what a
// scheduling bug does (a stale tile, a missed mask or a wrong page moves whole rows by O(1),
// i.e. >= 6% relative L2 with one bad row in 256).
// Elementwise, half an ulp of an O(1) output is 2e-3 (bf16) / 2.5e-4 (f16); atol covers
// outputs near zero, where relative error means nothing.
constexpr Tolerance kBf16Tolerance{1e-2, 1e-2, 2e-2, 0.1};
constexpr Tolerance kF16Tolerance{1e-2, 2e-3, 5e-3, 0.1};
// Plain fp32 FMA arithmetic: errors are ~1e-6; 1e-4 still passes a kernel using exp2
// approximations, not one using TF32 MMAs (10 mantissa bits, which needs the f16 bound).
constexpr Tolerance kF32Tolerance{1e-4, 1e-4, 1e-3, 0.1};
// fp8 compute (an e4m3 P V MMA, as FlashAttention-3's fp8 path): P in e4m3 is off by up to
// 2^-4 relative (rms ~2^-4 / sqrt(3) = 3.6%), and as above this does not average away
// against |O|. 8e-2 is about twice the expected error.
constexpr Tolerance kFp8ComputeTolerance{8e-2, 5e-2, 1.5e-1, 0.1};
// fp8 K/V read by a bf16/f16 kernel: the reference dequantizes the same bytes, so e4m3's
// coarseness costs nothing here. A kernel may still round byte * scale to the compute type
// (e4m3's 4 significant bits times an fp32 scale need more than bf16's 8), adding one more
// half-ulp rounding of K (seen through the exponential of the scores, which are O(1) for
// normal data) and of V, comparable to the P rounding above: twice the compute type's bound.
constexpr double kFp8KvFactor = 2.0;

Tolerance compute_tolerance(DType t) {
  switch (t) {
    case DType::f32: return kF32Tolerance;
    case DType::f16: return kF16Tolerance;
    case DType::bf16: return kBf16Tolerance;
    case DType::fp8_e4m3: return kFp8ComputeTolerance;
  }
  return kFp8ComputeTolerance;
}

Tolerance looser(const Tolerance& a, const Tolerance& b) {
  return {std::max(a.rel_l2, b.rel_l2), std::max(a.atol, b.atol), std::max(a.rtol, b.rtol),
          std::max(a.max_mismatch_pct, b.max_mismatch_pct)};
}

std::string format(const char* fmt, auto... args) {
  constexpr std::size_t kMaxMessage = 512;
  char buf[kMaxMessage];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

constexpr double kPercent = 100.0;

}  // namespace

Tolerance default_tolerance(DType compute_dtype, DType kv_dtype) {
  Tolerance t = compute_tolerance(compute_dtype);
  if (kv_dtype == compute_dtype) return t;
  if (kv_dtype == DType::fp8_e4m3) {
    t.rel_l2 *= kFp8KvFactor;
    t.atol *= kFp8KvFactor;
    t.rtol *= kFp8KvFactor;
    return t;
  }
  // K/V stored wider or narrower than the MMA type: the coarser of the two decides.
  return looser(t, compute_tolerance(kv_dtype));
}

AccuracyReport compare(const std::vector<float>& out, const std::vector<double>& ref, const Tolerance& tol) {
  AccuracyReport r;
  r.compared = ref.size();
  if (out.size() != ref.size()) {
    r.message = format("FAILED: output has %zu values, reference %zu", out.size(), ref.size());
    return r;
  }
  const auto bad_ref = std::count_if(ref.begin(), ref.end(), [](double x) { return !std::isfinite(x); });
  if (bad_ref > 0) {
    r.message = format("FAILED: reference has %zu non-finite values (bad inputs?)", std::size_t(bad_ref));
    return r;
  }
  double err_sq = 0, ref_sq = 0;
  std::size_t mismatches = 0, first_bad = ref.size(), first_nonfinite = ref.size();
  for (std::size_t i = 0; i < ref.size(); ++i) {
    ref_sq += ref[i] * ref[i];
    if (!std::isfinite(out[i])) {
      ++r.nonfinite;
      ++mismatches;
      first_nonfinite = std::min(first_nonfinite, i);
      continue;
    }
    const double diff = std::abs(double(out[i]) - ref[i]);
    err_sq += diff * diff;
    r.max_abs_err = std::max(r.max_abs_err, diff);
    if (diff > tol.atol + tol.rtol * std::abs(ref[i])) {
      ++mismatches;
      first_bad = std::min(first_bad, i);
    }
  }
  // An all-zero reference (every row fully masked) has no scale: only an exact match is 0.
  if (ref_sq > 0) {
    r.rel_l2_err = std::sqrt(err_sq / ref_sq);
  } else {
    r.rel_l2_err = err_sq > 0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  r.mismatch_pct = r.compared > 0 ? kPercent * double(mismatches) / double(r.compared) : 0.0;
  r.passed = r.nonfinite == 0 && r.rel_l2_err <= tol.rel_l2 && r.mismatch_pct <= tol.max_mismatch_pct;

  const std::string numbers =
      format("rel_l2 %.3g (max %.3g), max_abs %.3g, %zu/%zu elements outside atol %.3g + rtol %.3g (%.3g%%, max %.3g%%)",
             r.rel_l2_err, tol.rel_l2, r.max_abs_err, mismatches, r.compared, tol.atol, tol.rtol, r.mismatch_pct,
             tol.max_mismatch_pct);
  if (r.passed) {
    r.message = "ok: " + numbers;
  } else if (r.nonfinite > 0) {
    r.message = format("FAILED: %zu non-finite outputs (NaN/inf; unwritten poisoned elements?), first at %zu; ",
                       r.nonfinite, first_nonfinite) + numbers;
  } else {
    r.message = "FAILED: " + numbers;
    if (first_bad < ref.size()) {
      r.message += format("; first mismatch at %zu: got %.6g, expected %.6g", first_bad, double(out[first_bad]),
                          ref[first_bad]);
    }
  }
  return r;
}

}  // namespace schedlab
