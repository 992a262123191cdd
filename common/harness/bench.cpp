#include "common/harness/bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "common/problem.hpp"

namespace schedlab::harness {

int input_sets_for(std::size_t set_bytes, std::size_t cache_bytes, const RunOptions& opts) {
  if (set_bytes == 0 || set_bytes >= 4 * cache_bytes) return 1;
  const std::size_t wanted = (4 * cache_bytes + set_bytes - 1) / set_bytes;
  const std::size_t by_memory = std::max<std::size_t>(1, opts.max_rotation_bytes / set_bytes);
  return static_cast<int>(std::min<std::size_t>({wanted, by_memory, std::size_t(opts.max_input_sets)}));
}

std::optional<std::string> memory_shortfall(std::size_t needed, std::optional<std::size_t> free) {
  if (!free || needed == 0 || needed + kDeviceMemoryReserve <= *free) return std::nullopt;
  const auto bytes = [](std::size_t n) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%zu bytes (%.2f GiB)", n, double(n) / double(std::size_t(1) << 30));
    return std::string(buf);
  };
  return "too large for this device: needs " + bytes(needed) + " of device memory (plus " +
         std::to_string(kDeviceMemoryReserve >> 20) + " MiB kept for the runtime), and the device has " +
         bytes(*free) + " free";
}

std::map<std::string, std::string> rule_context(const RunOptions& opts) {
  char rep[512];
  std::snprintf(rep, sizeof rep,
                "each Google Benchmark repetition times launches (each after an output poison, an L2 flush and, "
                "where the context's launch_lead_us is above 0, that many microseconds of device idle; input sets "
                "in rotation) until the relative standard error of the mean launch time is <= %.3g%%, "
                "with at least %d launches; at most %d launches, or %.3g s of wall time once %d are done; the "
                "record's time is that mean, its counters launches and rel_se",
                100 * opts.max_rel_se, opts.min_launches, opts.max_launches, opts.max_seconds, opts.min_launches);
  return {{"accuracy_rule", accuracy_rule()}, {"repetition_rule", rep}};
}

// Every results file carries the rules its records were taken under. The defaults are what
// bench_main runs with; registered before main, like the benchmarks themselves.
[[maybe_unused]] const bool kRulesInContext = [] {
  for (const auto& [k, v] : rule_context(RunOptions{})) benchmark::AddCustomContext(k, v);
  return true;
}();

void LaunchStats::add(double seconds) {
  ++n_;
  const double delta = seconds - mean_;
  mean_ += delta / n_;
  m2_ += delta * (seconds - mean_);
}

double LaunchStats::rel_se() const {
  if (n_ < 2 || mean_ <= 0) return std::numeric_limits<double>::infinity();
  return std::sqrt(m2_ / (n_ - 1) / n_) / mean_;
}

bool LaunchStats::done(const RunOptions& opts, int min_launches, double elapsed_seconds) const {
  if (n_ >= std::max(opts.max_launches, min_launches)) return true;
  if (n_ < min_launches) return false;
  return rel_se() <= opts.max_rel_se || elapsed_seconds >= opts.max_seconds;
}

AccuracyReport check_output(Case& c, int input_set) {
  return compare(c.output(), c.reference(input_set), c.tolerance(), c.row_length());
}

namespace {

// Inputs by problem: one seed per process run (so accuracy is checked on inputs no earlier
// run has seen) shared by every configuration of the problem, and the references computed
// from it, per input set.
struct Inputs {
  std::uint64_t seed;
  std::map<int, std::vector<double>> references;
};

Inputs& inputs_of(const std::string& key) {
  static std::mt19937_64 gen(std::random_device{}());
  static std::map<std::string, Inputs> by_key;
  auto it = by_key.find(key);
  if (it == by_key.end()) it = by_key.emplace(key, Inputs{gen(), {}}).first;
  return it->second;
}

AccuracyReport check_cached(Case& c, Inputs& in, int input_set) {
  auto it = in.references.find(input_set);
  if (it == in.references.end()) it = in.references.emplace(input_set, c.reference(input_set)).first;
  return compare(c.output(), it->second, c.tolerance(), c.row_length());
}

void set_counters(benchmark::State& state, const Case& c, const AccuracyReport& acc, int input_sets,
                  const LaunchStats& launches) {
  const Work w = c.work();
  state.counters["flops"] = w.flops;
  state.counters["bytes"] = w.bytes;
  state.counters["FLOP_per_s"] = benchmark::Counter(w.flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes_per_s"] = benchmark::Counter(w.bytes, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["rel_l2_err"] = acc.rel_l2_err;
  state.counters["max_row_rel_err"] = acc.max_row_rel_err;
  state.counters["max_abs_err"] = acc.max_abs_err;
  state.counters["mismatch_pct"] = acc.mismatch_pct;
  state.counters["accuracy_rows"] = double(acc.rows);
  state.counters["input_sets"] = input_sets;
  state.counters["launches"] = launches.count();
  state.counters["rel_se"] = launches.rel_se();
  for (const auto& [k, v] : c.axes()) state.counters[k] = v;
  for (const auto& [k, v] : c.extra_counters()) state.counters[k] = v;
}

// Step 1: every input set, each launch on a poisoned output. The first failure stops it.
AccuracyReport check_every_set(Case& c, Inputs& in, Clock& clock, int sets) {
  std::optional<AccuracyReport> verdict;
  for (int s = 0; s < sets; ++s) {
    c.poison_output();
    clock.flush_cache();
    c.launch(s);
    c.synchronize();
    AccuracyReport r = check_cached(c, in, s);
    if (!r.passed) r.message = "input set " + std::to_string(s) + ": " + r.message;
    verdict = verdict ? worse(*verdict, r) : r;
    if (!r.passed) break;
  }
  return *verdict;
}

// Step 3: the timed launches. Returns the input set of the last one.
int time_launches(Case& c, Clock& clock, int sets, const RunOptions& opts, int min_launches, LaunchStats& stats) {
  const auto t0 = std::chrono::steady_clock::now();
  int set = 0, last = 0;
  do {
    c.poison_output();
    clock.flush_cache();
    if (opts.launch_lead_us > 0) clock.idle(opts.launch_lead_us);
    clock.start();
    c.launch(set);
    stats.add(clock.stop_seconds());
    last = set;
    set = (set + 1) % sets;
  } while (!stats.done(opts, min_launches,
                       std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()));
  return last;
}

}  // namespace

namespace {
// An error (or a skip) ends a repetition with the same one iteration a timed repetition
// reports: Google Benchmark 1.7 refuses the statistics of repetitions with unequal counts,
// and a benchmark can pass in one repetition and fail in a later one. The error discards the
// iteration's time.
void end_with_error(benchmark::State& state, const std::string& message) {
  for (auto _ : state) state.SetIterationTime(0.0);
  state.SkipWithError(message.c_str());
}
}  // namespace

void run_case(benchmark::State& state, CaseSlot& slot, Clock& clock, const RunOptions& opts) {
  state.SetLabel(slot.label);
  // One case resident at a time: a case keeps its inputs on the device, and an experiment's
  // variants x shapes do not fit together (four decode variants at batch 64, context 64k
  // hold 17-26 GB each). A case coming back (interleaved repetitions) is rebuilt from the
  // same seed, so its inputs and cached references are the same.
  static CaseSlot* resident = nullptr;
  if (resident != &slot) {
    if (resident) {
      resident->instance.reset();
      resident->warmed = false;
    }
    resident = &slot;
  }
  if (!slot.instance && slot.skip_reason.empty()) {
    try {
      slot.instance = slot.make();
    } catch (const UnsupportedProblem& e) {
      slot.skip_reason = e.what();
    }
  }
  if (!slot.skip_reason.empty()) {
    end_with_error(state, std::string(kSkippedPrefix) + slot.skip_reason);
    return;
  }
  Case& c = *slot.instance;
  const int sets = input_sets_for(c.input_set_bytes(), clock.cache_bytes(), opts);
  if (!slot.warmed) {  // prepare() comes next: refuse a case the device cannot hold
    if (auto shortfall = memory_shortfall(c.device_bytes(sets), clock.free_memory_bytes())) {
      slot.skip_reason = *shortfall;  // every later repetition is skipped alike
      slot.instance.reset();
      end_with_error(state, std::string(kSkippedPrefix) + slot.skip_reason);
      return;
    }
  }
  const std::string key = c.input_key();
  char own_key[32];
  std::snprintf(own_key, sizeof own_key, "slot:%p", static_cast<void*>(&slot));
  Inputs& in = inputs_of(key.empty() ? std::string(own_key) : key);
  if (!slot.warmed) c.prepare(in.seed, sets);
  if (!slot.accuracy) slot.accuracy = check_every_set(c, in, clock, sets);
  if (!slot.accuracy->passed) {
    end_with_error(state, "accuracy gate failed: " + slot.accuracy->message);
    return;
  }
  if (opts.profile_once) {
    for (int i = 0; i < opts.profile_launches; ++i) {
      clock.flush_cache();
      c.launch(0);
      c.synchronize();
    }
    state.SkipWithError("profile_once: launches for the profiler, no timing");
    return;
  }
  if (!slot.warmed) {
    for (int i = 0; i < opts.warmup_launches; ++i) c.launch(i % sets);
    c.synchronize();
    slot.warmed = true;
  }
  // Google Benchmark asks for max_iterations; each is one launch's worth of the mean (with
  // ->Iterations(1) it is one measurement under the noise rule).
  const int wanted = static_cast<int>(std::min<benchmark::IterationCount>(state.max_iterations, 1 << 30));
  LaunchStats launches;
  const int last = time_launches(c, clock, sets, opts, std::max(opts.min_launches, wanted), launches);
  c.synchronize();
  AccuracyReport after = check_cached(c, in, last);
  if (!after.passed) {
    // The configuration stays failed: a later repetition that rebuilds the case (interleaved
    // runs) must not pass because its launch count starts over.
    after.message = "on the last timed launch (input set " + std::to_string(last) + "): " + after.message;
    slot.accuracy = after;
    end_with_error(state, "accuracy gate failed " + after.message);
    return;
  }
  for (auto _ : state) state.SetIterationTime(launches.mean());
  set_counters(state, c, worse(*slot.accuracy, after), sets, launches);
}

}  // namespace schedlab::harness
