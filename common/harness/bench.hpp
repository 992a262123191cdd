// The measurement harness, independent of vendor: a Case is one configuration of one
// variant on one problem; a Clock times it (device events on a GPU, the host clock in the
// CPU self-test). run_case() is the body of every Google Benchmark function:
//   1. once per configuration: fresh random inputs, poisoned output, one launch, accuracy
//      against the double-precision reference on sampled rows; a failed gate is reported
//      with SkipWithError, never as a time;
//   2. warm-up launches;
//   3. timed launches, each after an L2 flush and on the next of several input sets when
//      one set is under 4x the L2 (so no launch finds its inputs in cache);
//   4. counters: flops, bytes, rates, accuracy, and the problem's axes.
#pragma once
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/harness/accuracy.hpp"

namespace schedlab::harness {

struct Work {
  double flops = 0;  // matrix FLOPs of one launch (the family's documented count)
  double bytes = 0;  // fewest bytes one launch must move (documented per kernel)
};

class Case {
 public:
  virtual ~Case() = default;
  // Allocates `input_sets` independent input sets of fresh random values from `seed`.
  virtual void prepare(std::uint64_t seed, int input_sets) = 0;
  virtual void poison_output() = 0;
  virtual void launch(int input_set) = 0;  // enqueue one run; checked
  virtual void synchronize() = 0;
  // Compares the output of the last launch on input set 0 with the reference.
  virtual AccuracyReport check_accuracy(std::uint64_t seed) = 0;
  virtual Work work() const = 0;
  virtual std::size_t input_set_bytes() const = 0;  // bytes one launch reads and writes
  virtual std::map<std::string, double> axes() const = 0;  // numeric axes for the record
  // Measurements beyond time and accuracy (in-kernel probe shares); read after the timed loop.
  virtual std::map<std::string, double> extra_counters() const { return {}; }
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual void flush_cache() = 0;  // evict the last-level cache (no-op where none matters)
  virtual void start() = 0;
  virtual double stop_seconds() = 0;  // waits for the timed work and returns its duration
  virtual std::size_t cache_bytes() const = 0;
};

struct RunOptions {
  int warmup_launches = 3;
  bool profile_once = false;  // launches after the accuracy check, no timing (for ncu)
  int profile_launches = 1;   // how many, each after an L2 eviction
  int max_input_sets = 8;
  std::size_t max_rotation_bytes = std::size_t(16) << 30;  // cap on the memory spent on rotation
};

// How many input sets keep every timed launch out of cache: under 4x the cache, enough
// copies to span 4x, within the caps.
int input_sets_for(std::size_t set_bytes, std::size_t cache_bytes, const RunOptions& opts);

// A configuration's state across Google Benchmark's repeated calls of one function.
struct CaseSlot {
  std::function<std::unique_ptr<Case>()> make;  // may throw InvalidProblem
  std::string label;
  std::unique_ptr<Case> instance;
  std::optional<AccuracyReport> accuracy;
  std::string skip_reason;  // an unsupported combination: skipped, not failed
  bool warmed = false;
};

void run_case(benchmark::State& state, CaseSlot& slot, Clock& clock, const RunOptions& opts);

// Prefix of the error message for combinations a kernel does not support (Google Benchmark
// 1.7 has only SkipWithError; the analysis reads this prefix as "skipped", not "failed").
inline constexpr const char* kSkippedPrefix = "skipped: ";

}  // namespace schedlab::harness
