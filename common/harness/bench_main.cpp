#include "common/harness/bench_main.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <vector>

#include "common/harness/bench_flags.hpp"
#include "common/harness/provenance.hpp"
#include "common/problem.hpp"

namespace schedlab::harness {

namespace fs = std::filesystem;

void Registry::add_slot(const std::string& name, const std::string& label,
                        std::function<std::unique_ptr<Case>()> make) {
  if (!names_.insert(name).second) throw std::invalid_argument("benchmark " + name + " registered twice");
  CaseSlot& slot = slots_.emplace_back();
  slot.make = std::move(make);
  slot.label = label;
  benchmark::RegisterBenchmark(name.c_str(), [&slot, this](benchmark::State& st) {
    if (!clock_) throw std::logic_error("benchmark run before Registry::bind");
    run_case(st, slot, *clock_, opts_);
  })->UseManualTime()->Iterations(1)->Unit(benchmark::kMicrosecond);
}

std::string device_slug(const std::optional<gpu::DeviceInfo>& device) {
  if (!device) return "cpu";
  std::string name = device->name;
  for (const char* vendor : {"NVIDIA ", "AMD "}) {
    if (name.rfind(vendor, 0) == 0) name = name.substr(std::string(vendor).size());
  }
  std::string slug;
  for (char ch : name) {
    if (std::isalnum(static_cast<unsigned char>(ch))) slug += static_cast<char>(std::tolower(ch));
    else if (!slug.empty() && slug.back() != '-') slug += '-';
  }
  while (!slug.empty() && slug.back() == '-') slug.pop_back();
  return slug.empty() ? "gpu" : slug;
}

namespace {

// A name no earlier run used: results are never written over.
fs::path fresh_results_path(const fs::path& dir) {
  const BuildInfo& b = build_info();
  std::string stem = utc_stamp() + "-" + b.commit.substr(0, 10) + (b.dirty == "true" ? "-dirty" : "");
  fs::path p = dir / (stem + ".json");
  for (int i = 1; fs::exists(p); ++i) p = dir / (stem + "-" + std::to_string(i) + ".json");
  return p;
}

// The outermost directory on the way to `dir` that does not exist yet (empty if none).
fs::path first_missing(const fs::path& dir) {
  fs::path missing;
  for (fs::path p = fs::absolute(dir); !p.empty() && !fs::exists(p); p = p.parent_path()) {
    missing = p;
    if (p == p.parent_path()) break;
  }
  return missing;
}

// Removes `dir` and its parents up to `top` while they are empty (a directory another
// process wrote into meanwhile stays).
void remove_empty_dirs(const fs::path& dir, const fs::path& top) {
  if (top.empty()) return;
  std::error_code ec;
  for (fs::path p = fs::absolute(dir);; p = p.parent_path()) {
    if (!fs::is_directory(p, ec) || !fs::is_empty(p, ec) || !fs::remove(p, ec)) return;
    if (p == top || p == p.parent_path()) return;
  }
}

// Repetitions when the command line names none: enough for a bootstrap interval of the
// median (and for interleaving to mean anything); each repetition already times launches
// until its own mean is within the noise rule.
int tier_repetitions(Tier t) { return t == Tier::full ? 5 : 3; }

// Google Benchmark's flags parsed, so that an unknown or malformed one is refused before any
// device or file is touched. Its flags are process globals: a later Initialize with
// --benchmark_out alone adds the results file to them.
bool initialize_benchmark(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  argv.push_back(nullptr);
  // Google Benchmark answers a value it refuses (--benchmark_format=xml) with its usage and
  // exit 0; --help never reaches it (bench_main answers that), so here it is a usage error.
  benchmark::Initialize(&argc, argv.data(), [] {
    std::cerr << "schedlab: Google Benchmark refused a flag value (--benchmark_format and --benchmark_out_format "
                 "take console, json or csv; --benchmark_color is not empty); --help lists its flags\n";
    std::exit(kExitUsage);
  });
  return !benchmark::ReportUnrecognizedArguments(argc, argv.data());
}

}  // namespace

int bench_main(int argc, char** argv, const std::string& experiment, const Registrar& registrar,
               const PlatformFactory& platform_factory) {
  const auto error = [&](const std::string& what) {
    std::cerr << "schedlab: " << experiment << ": " << what << "\n";
  };
  BenchFlags flags;
  try {
    flags = parse_bench_flags(std::vector<std::string>(argv, argv + argc));
  } catch (const FlagError& e) {
    error(e.what());
    return kExitUsage;
  }
  if (flags.help) {
    print_schedlab_help(std::cout, argc > 0 ? fs::path(argv[0]).filename().string() : "bench", experiment);
    std::cout.flush();
    benchmark::PrintDefaultHelp();
    return kExitOk;
  }

  // Registration is host work (shapes, names, problem checks): it answers a bad shape and a
  // listing without a GPU. The device is bound only for a run.
  const ShapeSelection shapes{flags.tier, flags.axes};
  RunOptions opts;
  opts.profile_once = flags.profile_once;
  opts.profile_launches = flags.profile_launches;
  opts.launch_lead_us = flags.launch_lead_us;
  Registry registry(opts, shapes);
  try {
    registrar(registry);
  } catch (const std::invalid_argument& e) {  // InvalidProblem, a bad shape, axes or variant list
    error(e.what());
    return kExitUsage;
  }
  if (shapes.from_axes() && !registry.shape_selection_read()) {
    error("this benchmark registers fixed shapes and takes no --schedlab_axes");
    return kExitUsage;
  }

  std::vector<std::string> bench_args = flags.benchmark_args;
  if (!flags.interleaving_given) bench_args.push_back("--benchmark_enable_random_interleaving=true");
  if (!flags.repetitions_given)
    bench_args.push_back("--benchmark_repetitions=" + std::to_string(tier_repetitions(shapes.tier)));
  if (!initialize_benchmark(bench_args)) return kExitUsage;
  if (flags.list_only) {  // names only: no device, and (no --benchmark_out) no file
    const std::size_t listed = benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return listed == 0 ? kExitNoneMatched : kExitOk;
  }

  std::optional<Platform> platform;
  try {
    platform = platform_factory();
  } catch (const std::exception& e) {
    error(std::string("could not set up the device: ") + e.what());
    return kExitNoDevice;
  }
  if (!platform) {
    std::cerr << "schedlab: no GPU found; nothing to run for " << experiment << "\n";
    return kExitNoDevice;
  }
  registry.bind(*platform->clock, platform->device ? &*platform->device : nullptr);

  // A timed run writes to a hidden partial file, renamed once every benchmark has run; a
  // profiling run writes nothing.
  fs::path final_path, partial, made_from;
  if (!opts.profile_once) {
    const fs::path dir = flags.out_dir.empty()
                             ? fs::path(flags.results_root) / device_slug(platform->device) / experiment
                             : fs::path(flags.out_dir);
    try {
      made_from = first_missing(dir);
      fs::create_directories(dir);
      final_path = fresh_results_path(dir);
    } catch (const fs::filesystem_error& e) {
      error(std::string("cannot make the results directory: ") + e.what());
      return kExitRunFailed;
    }
    partial = dir / ("." + final_path.filename().string() + ".partial");
    if (!initialize_benchmark({flags.benchmark_args.at(0), "--benchmark_out=" + partial.string(),
                               "--benchmark_out_format=json"}))
      return kExitUsage;
  }
  // A run that ends without results leaves no trace: no partial file, no directory it made.
  const auto discard = [&] {
    if (partial.empty()) return;
    std::error_code ignored;
    fs::remove(partial, ignored);
    remove_empty_dirs(partial.parent_path(), made_from);
  };

  try {
    auto ctx = provenance_context(platform->device ? &*platform->device : nullptr);
    ctx.insert(platform->context.begin(), platform->context.end());
    ctx["experiment"] = experiment;
    ctx["run_id"] = run_id();
    ctx["binary_sha256"] = sha256_file_hex("/proc/self/exe");
    ctx["random_interleaving"] = flags.random_interleaving ? "true" : "false";
    ctx["tier"] = std::string(tier_name(shapes.tier));
    ctx["axes_override"] = shapes.axes;
    ctx["launch_lead_us"] = std::to_string(opts.launch_lead_us);
    add_benchmark_context(ctx);
    const std::size_t ran = benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (ran == 0) {
      std::cerr << "schedlab: no benchmark matched; nothing written\n";
      discard();
      return kExitNoneMatched;
    }
  } catch (const std::exception& e) {
    std::cerr << "schedlab: run failed: " << e.what() << "\n";
    discard();
    return kExitRunFailed;
  }
  if (opts.profile_once) return kExitOk;
  fs::rename(partial, final_path);
  std::cout << "schedlab: results written to " << final_path.string() << "\n";
  return kExitOk;
}

}  // namespace schedlab::harness
