#include "common/harness/bench_main.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <vector>

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
  Clock* clock = &clock_;
  RunOptions* opts = &opts_;
  benchmark::RegisterBenchmark(name.c_str(), [&slot, clock, opts](benchmark::State& st) {
    run_case(st, slot, *clock, *opts);
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

// Google Benchmark's reading of a boolean flag value (commandlineflags.cc, IsTruthyFlagValue):
// empty is true; "0", "f", "n", "false", "no", "off" (any case) are false.
bool truthy(std::string value) {
  for (char& ch : value) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (value.empty()) return true;
  if (value.size() == 1) return std::isalnum(static_cast<unsigned char>(value[0])) && value != "0" && value != "f" && value != "n";
  return value != "false" && value != "no" && value != "off";
}

constexpr const char* kInterleaveFlag = "--benchmark_enable_random_interleaving";
constexpr const char* kInterleaveEnv = "BENCHMARK_ENABLE_RANDOM_INTERLEAVING";

struct Flags {
  std::string out_dir;
  std::string results_root = "results";
  bool profile_once = false;
  int profile_launches = 1;
  bool list_only = false;
  std::string tier = "default";
  std::string axes;
  // Repetitions of all benchmarks in a random order, so that drift over the run spreads over
  // every variant instead of masquerading as the effect of one. On unless the command line
  // (or Google Benchmark's environment variable) says otherwise.
  bool random_interleaving = true;
  bool interleaving_given = false;
  bool repetitions_given = false;
  std::vector<char*> rest;
};

// Repetitions when the command line names none: enough for a bootstrap interval of the
// median (and for interleaving to mean anything); each repetition already times launches
// until its own mean is within the noise rule.
int tier_repetitions(Tier t) { return t == Tier::full ? 5 : 3; }

Flags take_own_flags(int argc, char** argv) {
  Flags f;
  const std::string out_flag = "--schedlab_out_dir=";
  const std::string root_flag = "--schedlab_results_root=";
  const std::string launches_flag = "--schedlab_profile_launches=";
  const std::string tier_flag = "--schedlab_tier=";
  const std::string axes_flag = "--schedlab_axes=";
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind(out_flag, 0) == 0) f.out_dir = a.substr(out_flag.size());
    else if (a.rfind(root_flag, 0) == 0) f.results_root = a.substr(root_flag.size());
    else if (a == "--schedlab_profile_once") f.profile_once = true;
    else if (a.rfind(tier_flag, 0) == 0) f.tier = a.substr(tier_flag.size());
    else if (a.rfind(axes_flag, 0) == 0) f.axes = a.substr(axes_flag.size());
    else if (a.rfind(launches_flag, 0) == 0) {
      f.profile_once = true;
      f.profile_launches = std::max(1, std::stoi(a.substr(launches_flag.size())));
    }
    else if (a == kInterleaveFlag || a.rfind(std::string(kInterleaveFlag) + "=", 0) == 0) {
      f.interleaving_given = true;  // the last one wins, as in Google Benchmark
      f.random_interleaving = a == kInterleaveFlag || truthy(a.substr(std::string(kInterleaveFlag).size() + 1));
      f.rest.push_back(argv[i]);
    }
    else if (a.rfind("--benchmark_repetitions=", 0) == 0) {
      f.repetitions_given = true;
      f.rest.push_back(argv[i]);
    }
    else if (a.rfind("--benchmark_list_tests", 0) == 0 && a != "--benchmark_list_tests=false") {
      f.list_only = true;  // listing names is not a run: no results file
      f.rest.push_back(argv[i]);
    }
    else f.rest.push_back(argv[i]);
  }
  if (!f.interleaving_given) {
    if (const char* env = std::getenv(kInterleaveEnv)) {
      f.interleaving_given = true;
      f.random_interleaving = truthy(env);
    }
  }
  return f;
}

}  // namespace

int bench_main(int argc, char** argv, const std::string& experiment, const Registrar& registrar,
               const PlatformFactory& platform_factory) {
  Flags flags = take_own_flags(argc, argv);
  ShapeSelection shapes;
  try {
    shapes.tier = parse_tier(flags.tier);
  } catch (const AxesError& e) {
    std::cerr << "schedlab: " << experiment << ": --schedlab_tier: " << e.what() << "\n";
    return 2;
  }
  shapes.axes = flags.axes;
  std::optional<Platform> platform;
  try {
    platform = platform_factory();
  } catch (const std::exception& e) {
    std::cerr << "schedlab: could not set up the device: " << e.what() << "\n";
    return 3;
  }
  if (!platform) {
    std::cerr << "schedlab: no GPU found; nothing to run for " << experiment << "\n";
    return 3;
  }
  RunOptions opts;
  opts.profile_once = flags.profile_once;
  opts.profile_launches = flags.profile_launches;
  Registry registry(*platform->clock, opts, platform->device ? &*platform->device : nullptr, shapes);
  try {
    registrar(registry);
  } catch (const std::invalid_argument& e) {  // InvalidProblem, a bad shape, axes or variant list
    std::cerr << "schedlab: " << experiment << ": " << e.what() << "\n";
    return 2;
  }
  if (shapes.from_axes() && !registry.shape_selection_read()) {
    std::cerr << "schedlab: " << experiment << ": this benchmark registers fixed shapes and takes no --schedlab_axes\n";
    return 2;
  }

  const fs::path dir = flags.out_dir.empty() ? fs::path(flags.results_root) / device_slug(platform->device) / experiment
                                             : fs::path(flags.out_dir);
  fs::create_directories(dir);
  const fs::path final_path = fresh_results_path(dir);
  const fs::path partial = dir / ("." + final_path.filename().string() + ".partial");
  std::string out_arg = "--benchmark_out=" + partial.string();
  std::string fmt_arg = "--benchmark_out_format=json";
  std::string interleave_arg = std::string(kInterleaveFlag) + "=true";
  flags.rest.push_back(out_arg.data());
  flags.rest.push_back(fmt_arg.data());
  if (!flags.interleaving_given) flags.rest.push_back(interleave_arg.data());
  std::string repetitions_arg = "--benchmark_repetitions=" + std::to_string(tier_repetitions(shapes.tier));
  if (!flags.repetitions_given) flags.rest.push_back(repetitions_arg.data());
  int bargc = static_cast<int>(flags.rest.size());
  flags.rest.push_back(nullptr);

  try {
    benchmark::Initialize(&bargc, flags.rest.data());
    if (benchmark::ReportUnrecognizedArguments(bargc, flags.rest.data())) {
      fs::remove(partial);
      return 2;
    }
    auto ctx = provenance_context(platform->device ? &*platform->device : nullptr);
    ctx.insert(platform->context.begin(), platform->context.end());
    ctx["experiment"] = experiment;
    ctx["run_id"] = run_id();
    ctx["binary_sha256"] = sha256_file_hex("/proc/self/exe");
    ctx["random_interleaving"] = flags.random_interleaving ? "true" : "false";
    ctx["tier"] = std::string(tier_name(shapes.tier));
    ctx["axes_override"] = shapes.axes;
    add_benchmark_context(ctx);
    const std::size_t ran = benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (ran == 0) {
      std::cerr << "schedlab: no benchmark matched; nothing written\n";
      fs::remove(partial);
      return 4;
    }
  } catch (const std::exception& e) {
    std::cerr << "schedlab: run failed: " << e.what() << "\n";
    fs::remove(partial);
    return 1;
  }
  if (opts.profile_once || flags.list_only) {
    fs::remove(partial);
    return 0;
  }
  fs::rename(partial, final_path);
  std::cout << "schedlab: results written to " << final_path.string() << "\n";
  return 0;
}

}  // namespace schedlab::harness
