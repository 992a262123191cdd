// main() of every benchmark binary: registers an experiment's configurations, runs them
// through Google Benchmark and writes one new results file, atomically:
//   results/<device>/<experiment>/<UTC time>-<commit>.json
// A malformed problem aborts before anything is written; a failed run leaves no file.
// Besides the build and device provenance, the context names the run (`run_id`: one id for
// every binary of a sweep, from SCHEDLAB_RUN_ID) and the exact binary timed
// (`binary_sha256`), so that comparisons stay within one run of one build, and says what
// was asked for: `tier`, `axes_override` (the --schedlab_axes string, empty if none) and
// `random_interleaving`.
#pragma once
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "common/gpu/device_info.hpp"
#include "common/harness/axes.hpp"
#include "common/harness/bench.hpp"

namespace schedlab::harness {

struct Platform {
  std::optional<gpu::DeviceInfo> device;  // empty: runs on the host (self-test)
  std::unique_ptr<Clock> clock;
  std::map<std::string, std::string> context;  // measured ceilings, hint semantics, ...
};

class Registry {
 public:
  // Registration is host work; the clock (and device) a run times with is bound afterwards,
  // so that --benchmark_list_tests and shape errors need no GPU.
  explicit Registry(RunOptions& opts, ShapeSelection shapes = {}) : opts_(opts), shapes_(std::move(shapes)) {}
  Registry(Clock& clock, RunOptions& opts, const gpu::DeviceInfo* device = nullptr, ShapeSelection shapes = {})
      : Registry(opts, std::move(shapes)) {
    bind(clock, device);
  }
  Registry(const Registry&) = delete;  // the registered benchmarks point at it
  Registry& operator=(const Registry&) = delete;
  void bind(Clock& clock, const gpu::DeviceInfo* device) {
    clock_ = &clock;
    device_ = device;
  }
  const gpu::DeviceInfo* device() const { return device_; }  // null on the host self-test and before bind()
  // The tier or --schedlab_axes shapes this run registers. A registrar that never asks
  // cannot honour --schedlab_axes, and bench_main refuses the flag for it.
  const ShapeSelection& shape_selection() const {
    shapes_read_ = true;
    return shapes_;
  }
  bool shape_selection_read() const { return shapes_read_; }
  // Validates `problem` now (InvalidProblem aborts the run before any output exists);
  // `make` builds the case lazily, when the benchmark first runs. A name registered before
  // (a shape listed twice) is refused with std::invalid_argument.
  template <class Problem>
  void add(const std::string& name, const std::string& label, const Problem& problem,
           std::function<std::unique_ptr<Case>(const Problem&)> make) {
    problem.validate();
    add_slot(name, label, [problem, make] { return make(problem); });
  }
  std::size_t size() const { return slots_.size(); }

 private:
  void add_slot(const std::string& name, const std::string& label, std::function<std::unique_ptr<Case>()> make);
  Clock* clock_ = nullptr;
  RunOptions& opts_;
  const gpu::DeviceInfo* device_ = nullptr;
  ShapeSelection shapes_;
  mutable bool shapes_read_ = false;
  std::set<std::string> names_;
  std::deque<CaseSlot> slots_;  // deque: registered benchmarks hold pointers into it
};

using Registrar = std::function<void(Registry&)>;
using PlatformFactory = std::function<std::optional<Platform>()>;  // empty: no device found

// Short device name for the results path: "NVIDIA H200" -> "h200", none -> "cpu".
std::string device_slug(const std::optional<gpu::DeviceInfo>& device);

// Runs the registered benchmarks; returns the process exit code (kExit* in bench_flags.hpp).
// Its own flags (--schedlab_*, listed with their meanings by --help; parse_bench_flags reads
// them) are checked first, then the registrar runs and Google Benchmark reads the rest: a bad
// flag, tier, axes string or shape is an error (exit 2) before any device or file is
// touched, and --help and --benchmark_list_tests answer without a GPU. Only a run asks for
// the device (none: exit 3), and only a complete timed run leaves a results file.
// Repetitions run in a random order across all benchmarks (Google Benchmark's
// --benchmark_enable_random_interleaving, passed as true unless the command line or the
// BENCHMARK_ENABLE_RANDOM_INTERLEAVING variable sets it); the context records which.
int bench_main(int argc, char** argv, const std::string& experiment, const Registrar& registrar,
               const PlatformFactory& platform_factory);

}  // namespace schedlab::harness
