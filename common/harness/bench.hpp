// The measurement harness, independent of vendor: a Case is one configuration of one
// variant on one problem; a Clock times it (device events on a GPU, the host clock in the
// CPU self-test). run_case() is the body of every Google Benchmark function:
//   0. a case whose stated device memory (Case::device_bytes) exceeds what the device has
//      free is skipped with both numbers, before it allocates anything;
//   1. once per configuration: inputs from a seed shared by every configuration of the same
//      problem in this process (fresh per process), and on every input set a poisoned output,
//      one launch and the accuracy gate against the double reference, which is computed once
//      per problem and input set and cached; a failed gate is reported with SkipWithError,
//      never as a time;
//   2. warm-up launches;
//   3. timed launches, each after an output poison and an L2 flush and on the next of several
//      input sets when one set is under 4x the L2 (so no launch finds its inputs in cache),
//      until the mean launch time's relative standard error meets RunOptions' rule;
//   4. the gate once more, on the last timed launch's output;
//   5. counters: flops, bytes, rates, accuracy, launches and their noise, the problem's axes.
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
  // Allocates `input_sets` independent input sets of random values from `seed` (the same
  // seed gives the same values) and picks, from the seed, the rows the gate compares.
  virtual void prepare(std::uint64_t seed, int input_sets) = 0;
  virtual void poison_output() = 0;
  virtual void launch(int input_set) = 0;  // enqueue one run; checked
  virtual void synchronize() = 0;
  // The double-precision reference at the compared rows for input set `input_set`, rows of
  // row_length() values (the costly part of a check: the harness caches it).
  virtual std::vector<double> reference(int input_set) = 0;
  // The last launch's output at the same rows, as float.
  virtual std::vector<float> output() = 0;
  virtual Tolerance tolerance() const = 0;
  virtual std::size_t row_length() const = 0;
  // Names the problem: configurations with the same key get the same inputs from a seed and
  // so share one reference. Empty: nothing shared.
  virtual std::string input_key() const { return {}; }
  virtual Work work() const = 0;
  virtual std::size_t input_set_bytes() const = 0;  // bytes one launch reads and writes
  // Device memory the case holds at its peak (prepare() through the accuracy gate) with
  // `input_sets` input sets, counted on the host before anything is allocated. 0: not stated
  // (host stand-ins), never refused.
  virtual std::size_t device_bytes(int input_sets) const {
    (void)input_sets;
    return 0;
  }
  virtual std::map<std::string, double> axes() const = 0;  // numeric axes for the record
  // Measurements beyond time and accuracy (in-kernel probe shares); read after the timed loop.
  virtual std::map<std::string, double> extra_counters() const { return {}; }
};

// The gate on the last launch's output, which ran on input set `input_set` (reference not
// cached: for tests that drive a Case themselves).
AccuracyReport check_output(Case& c, int input_set);

class Clock {
 public:
  virtual ~Clock() = default;
  virtual void flush_cache() = 0;  // evict the last-level cache (no-op where none matters)
  virtual void start() = 0;
  virtual double stop_seconds() = 0;  // waits for the timed work and returns its duration
  // Leaves the device idle for `us` microseconds before the next work is queued, outside the
  // timed region (RunOptions::launch_lead_us). Where there is no device, nothing.
  virtual void idle(int us) { (void)us; }
  virtual std::size_t cache_bytes() const = 0;
  // Device memory free now; empty where there is no device memory to run out of (the host).
  virtual std::optional<std::size_t> free_memory_bytes() const { return std::nullopt; }
};

// Memory the harness leaves free beyond a case's own count: the runtime's rounding of each
// allocation (2 MiB pages for large ones), the kernels' code loaded on first launch, and
// small buffers of instrumented builds.
inline constexpr std::size_t kDeviceMemoryReserve = std::size_t(256) << 20;

// Why a case needing `needed` bytes cannot run with `free` bytes free (needed plus the
// reserve over free), naming both; empty when it fits or when free is unknown.
std::optional<std::string> memory_shortfall(std::size_t needed, std::optional<std::size_t> free);

struct RunOptions {
  int warmup_launches = 3;
  bool profile_once = false;  // launches after the accuracy check, no timing (for ncu)
  int profile_launches = 1;   // how many, each after an L2 eviction
  int max_input_sets = 8;
  std::size_t max_rotation_bytes = std::size_t(16) << 30;  // cap on the memory spent on rotation
  // Launches are timed until the relative standard error of their mean time is at most
  // max_rel_se, with at least min_launches; at most max_launches, and no more once
  // max_seconds of wall time have passed with min_launches done (nvbench's noise rule).
  double max_rel_se = 0.005;
  int min_launches = 10;
  int max_launches = 5000;
  double max_seconds = 1.0;
  // Microseconds the device idles after each timed launch's L2 flush and before its start event
  // (--schedlab_launch_lead_us; 0: the launch follows the flush at once). The Python peers'
  // timers queue each call behind a device spin of their own (analysis/peers/sdpa_peers.py,
  // time_queued: 500 us; FlashAttention-4's 3000 us), and the idle moves a kernel's own time
  // (on the H200, short launches slower after it and the longest, under the board's power cap,
  // faster: kernels/hopper_prefill/LOG.md, "The timer's lead"). Ours and a peer compare like
  // with like only at the same lead.
  int launch_lead_us = 0;
};

// How many input sets keep every timed launch out of cache: under 4x the cache, enough
// copies to span 4x, within the caps.
int input_sets_for(std::size_t set_bytes, std::size_t cache_bytes, const RunOptions& opts);

// The rules every results file records in its context: accuracy_rule and repetition_rule.
std::map<std::string, std::string> rule_context(const RunOptions& opts);

// Running mean and variance of launch times (Welford) and the stopping rule.
class LaunchStats {
 public:
  void add(double seconds);
  int count() const { return n_; }
  double mean() const { return mean_; }
  double rel_se() const;  // standard error of the mean over the mean; inf below 2 launches
  bool done(const RunOptions& opts, int min_launches, double elapsed_seconds) const;

 private:
  int n_ = 0;
  double mean_ = 0, m2_ = 0;
};

// A configuration's state across Google Benchmark's repeated calls of one function.
struct CaseSlot {
  std::function<std::unique_ptr<Case>()> make;  // may throw InvalidProblem
  std::string label;
  std::unique_ptr<Case> instance;
  std::optional<AccuracyReport> accuracy;  // the gate before timing, every input set
  std::string skip_reason;  // an unsupported combination: skipped, not failed
  bool warmed = false;
};

void run_case(benchmark::State& state, CaseSlot& slot, Clock& clock, const RunOptions& opts);

// Prefix of the error message for combinations a kernel does not support (Google Benchmark
// 1.7 has only SkipWithError; the analysis reads this prefix as "skipped", not "failed").
inline constexpr const char* kSkippedPrefix = "skipped: ";

}  // namespace schedlab::harness
