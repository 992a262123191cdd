#include "common/harness/bench.hpp"

#include <algorithm>
#include <random>

#include "common/problem.hpp"

namespace schedlab::harness {

int input_sets_for(std::size_t set_bytes, std::size_t cache_bytes, const RunOptions& opts) {
  if (set_bytes == 0 || set_bytes >= 4 * cache_bytes) return 1;
  const std::size_t wanted = (4 * cache_bytes + set_bytes - 1) / set_bytes;
  const std::size_t by_memory = std::max<std::size_t>(1, opts.max_rotation_bytes / set_bytes);
  return static_cast<int>(std::min<std::size_t>({wanted, by_memory, std::size_t(opts.max_input_sets)}));
}

namespace {

// A fresh seed per configuration and per process run: accuracy is checked on inputs
// no earlier run has seen.
std::uint64_t fresh_seed() {
  static std::mt19937_64 gen(std::random_device{}());
  return gen();
}

void set_counters(benchmark::State& state, const Case& c, const AccuracyReport& acc, int input_sets) {
  const Work w = c.work();
  state.counters["flops"] = w.flops;
  state.counters["bytes"] = w.bytes;
  state.counters["FLOP_per_s"] = benchmark::Counter(w.flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes_per_s"] = benchmark::Counter(w.bytes, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["rel_l2_err"] = acc.rel_l2_err;
  state.counters["max_abs_err"] = acc.max_abs_err;
  state.counters["mismatch_pct"] = acc.mismatch_pct;
  state.counters["input_sets"] = input_sets;
  for (const auto& [k, v] : c.axes()) state.counters[k] = v;
  for (const auto& [k, v] : c.extra_counters()) state.counters[k] = v;
}

}  // namespace

void run_case(benchmark::State& state, CaseSlot& slot, Clock& clock, const RunOptions& opts) {
  state.SetLabel(slot.label);
  // One case resident at a time: a case keeps its inputs on the device, and an experiment's
  // variants x shapes do not fit together (four decode variants at batch 64, context 64k
  // hold 17-26 GB each). Google Benchmark runs a benchmark's repetitions back to back, so
  // a case is still built, checked and warmed once per benchmark.
  static CaseSlot* resident = nullptr;
  if (resident != &slot) {
    if (resident) {
      resident->instance.reset();
      resident->accuracy.reset();
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
    state.SkipWithError((std::string(kSkippedPrefix) + slot.skip_reason).c_str());
    return;
  }
  Case& c = *slot.instance;
  const int sets = input_sets_for(c.input_set_bytes(), clock.cache_bytes(), opts);
  if (!slot.accuracy) {
    const std::uint64_t seed = fresh_seed();
    c.prepare(seed, sets);
    c.poison_output();
    clock.flush_cache();
    c.launch(0);
    c.synchronize();
    slot.accuracy = c.check_accuracy(seed);
  }
  if (!slot.accuracy->passed) {
    state.SkipWithError(("accuracy gate failed: " + slot.accuracy->message).c_str());
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
  int next = 0;
  for (auto _ : state) {
    clock.flush_cache();
    clock.start();
    c.launch(next);
    state.SetIterationTime(clock.stop_seconds());
    next = (next + 1) % sets;
  }
  set_counters(state, c, *slot.accuracy, sets);
}

}  // namespace schedlab::harness
