// bench_main's own flags and what every results file's context records, driven on the host
// with a stand-in case of fixed accuracy (the gate itself is tested in test_harness.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>
#include <tuple>

#include <sys/wait.h>
#include <unistd.h>

#include "common/harness/bench_flags.hpp"
#include "common/harness/bench_main.hpp"
#include "common/harness/experiment.hpp"
#include "common/harness/provenance.hpp"
#include "common/problem.hpp"

namespace schedlab::harness {
namespace {

namespace fs = std::filesystem;

class SteadyClock final : public Clock {
 public:
  void flush_cache() override {}
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  double stop_seconds() override { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  std::size_t cache_bytes() const override { return 1 << 20; }

 private:
  std::chrono::steady_clock::time_point t0_;
};

// A "kernel" that passes the gate and takes a few microseconds; `trace` (if set) gets the
// case's name appended whenever a launch follows one of another case, so the file lists
// the order in which benchmarks took turns.
class StandInCase final : public Case {
 public:
  StandInCase(std::string name, fs::path trace) : name_(std::move(name)), trace_(std::move(trace)) {}
  void prepare(std::uint64_t, int) override {}
  void poison_output() override {}
  void launch(int) override {
    static std::string last;
    if (!trace_.empty() && last != name_) std::ofstream(trace_, std::ios::app) << name_ << "\n";
    last = name_;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  void synchronize() override {}
  // One row that the "kernel" always gets right.
  std::vector<double> reference(int) override { return {1.0, -2.0}; }
  std::vector<float> output() override { return {1.0f, -2.0f}; }
  Tolerance tolerance() const override { return default_tolerance(DType::f32, DType::f32); }
  std::size_t row_length() const override { return 2; }
  Work work() const override { return {1e6, 1e6}; }
  std::size_t input_set_bytes() const override { return 1 << 30; }
  std::map<std::string, double> axes() const override { return {}; }

 private:
  std::string name_;
  fs::path trace_;
};

PrefillProblem any_problem() { return PrefillProblem{}; }

void add_stand_in(Registry& r, const std::string& name, const fs::path& trace = {}) {
  r.add<PrefillProblem>(name, "family=prefill;experiment=selftest", any_problem(),
                        [name, trace](const PrefillProblem&) { return std::make_unique<StandInCase>(name, trace); });
}

PlatformFactory host_platform() {
  return [] {
    Platform p;
    p.clock = std::make_unique<SteadyClock>();
    return std::optional<Platform>(std::move(p));
  };
}

// No device: what a binary sees on a machine without a GPU.
PlatformFactory no_device() {
  return [] { return std::optional<Platform>(); };
}

// A benchmark binary's main() runs once per process (Google Benchmark keeps global state).
// `output`, if given, receives the child's stdout and stderr.
int run_bench(const fs::path& dir, const Registrar& reg, const std::vector<std::string>& extra = {},
              const PlatformFactory& platform = host_platform(), const fs::path& output = {}) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (!output.empty()) {
      std::fflush(nullptr);
      if (!std::freopen(output.c_str(), "w", stdout) || ::dup2(::fileno(stdout), 2) < 0) _exit(99);
    }
    std::vector<std::string> args = {"schedlab_bench_main_tests", "--schedlab_out_dir=" + dir.string(),
                                     "--benchmark_min_time=0.001"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    const int rc = bench_main(static_cast<int>(argv.size()), argv.data(), "selftest", reg, platform);
    std::fflush(nullptr);
    _exit(rc);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class BenchMainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("schedlab_bench_main_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // The one results file of the run; empty if there is none.
  std::string results() const {
    if (!fs::exists(dir_)) return {};
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path());
    EXPECT_EQ(files.size(), 1u);
    return files.size() == 1 ? slurp(files[0]) : std::string();
  }
  bool wrote_nothing() const { return !fs::exists(dir_) || fs::is_empty(dir_); }
  fs::path dir_;
};

std::string context_entry(const std::string& key, const std::string& value) {
  return "\"" + key + "\": \"" + value + "\"";
}

TEST_F(BenchMainTest, ContextNamesTheRunAndTheBinary) {
  ::setenv("SCHEDLAB_RUN_ID", "sweep-0001", 1);
  ASSERT_EQ(run_bench(dir_, [](Registry& r) { add_stand_in(r, "selftest/a"); }), 0);
  ::unsetenv("SCHEDLAB_RUN_ID");
  const std::string json = results();
  EXPECT_NE(json.find(context_entry("run_id", "sweep-0001")), std::string::npos) << json;
  // The child process ran this same executable.
  EXPECT_NE(json.find(context_entry("binary_sha256", sha256_file_hex("/proc/self/exe"))), std::string::npos) << json;
}

// A clock that writes what the harness asks of it, one word a call, to `log`: the order of
// flushes, idles, starts and stops around the launches.
class LoggingClock final : public Clock {
 public:
  explicit LoggingClock(fs::path log) : log_(std::move(log)) {}
  void flush_cache() override { std::ofstream(log_, std::ios::app) << "flush\n"; }
  void idle(int us) override { std::ofstream(log_, std::ios::app) << "idle " << us << "\n"; }
  void start() override {
    std::ofstream(log_, std::ios::app) << "start\n";
    clock_.start();
  }
  double stop_seconds() override { return clock_.stop_seconds(); }
  std::size_t cache_bytes() const override { return 1 << 20; }

 private:
  fs::path log_;
  SteadyClock clock_;
};

TEST_F(BenchMainTest, TheLaunchLeadIdlesTheDeviceBetweenFlushAndStartAndIsRecorded) {
  const fs::path log = dir_.string() + ".clock";
  for (const int lead : {0, 250}) {
    fs::remove(log);
    fs::remove_all(dir_);
    const PlatformFactory logging = [log] {
      Platform p;
      p.clock = std::make_unique<LoggingClock>(log);
      return std::optional<Platform>(std::move(p));
    };
    std::vector<std::string> extra = {"--benchmark_repetitions=2"};
    if (lead > 0) extra.push_back("--schedlab_launch_lead_us=" + std::to_string(lead));
    ASSERT_EQ(run_bench(dir_, [](Registry& r) { add_stand_in(r, "selftest/a"); }, extra, logging), 0);
    EXPECT_NE(results().find(context_entry("launch_lead_us", std::to_string(lead))), std::string::npos) << results();
    // Every timed launch: flush, the idle where there is a lead, start. (The accuracy check's
    // launches before them are flushed but neither idled nor timed.)
    std::vector<std::string> calls;
    std::ifstream in(log);
    for (std::string line; std::getline(in, line);) calls.push_back(line);
    int starts = 0;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      if (calls[i] != "start") continue;
      ++starts;
      ASSERT_GE(i, lead > 0 ? 2u : 1u);
      if (lead > 0) {
        EXPECT_EQ(calls[i - 1], "idle " + std::to_string(lead));
        EXPECT_EQ(calls[i - 2], "flush");
      } else {
        EXPECT_EQ(calls[i - 1], "flush");
      }
    }
    EXPECT_GE(starts, 2 * RunOptions{}.min_launches);
    EXPECT_EQ(std::count(calls.begin(), calls.end(), "idle " + std::to_string(lead)), lead > 0 ? starts : 0);
  }
  fs::remove(log);
}

TEST_F(BenchMainTest, RunIdIsGeneratedWhenNoneIsSet) {
  ::unsetenv("SCHEDLAB_RUN_ID");
  ASSERT_EQ(run_bench(dir_, [](Registry& r) { add_stand_in(r, "selftest/a"); }), 0);
  const std::string json = results();
  EXPECT_TRUE(std::regex_search(json, std::regex("\"run_id\": \"[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}\"")))
      << json;
}

std::vector<std::string> lines(const fs::path& p) {
  std::vector<std::string> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Three benchmarks, six repetitions each: the order in which they took turns.
std::vector<std::string> turns(const fs::path& dir, const std::vector<std::string>& extra) {
  const fs::path trace = dir.string() + ".trace";
  fs::remove(trace);
  std::vector<std::string> args = {"--benchmark_repetitions=6"};
  args.insert(args.end(), extra.begin(), extra.end());
  const int rc = run_bench(dir, [&](Registry& r) {
    for (const char* name : {"selftest/a", "selftest/b", "selftest/c"}) add_stand_in(r, name, trace);
  }, args);
  EXPECT_EQ(rc, 0);
  auto out = lines(trace);
  fs::remove(trace);
  return out;
}

// Run back to back, the three take 3 turns; shuffled, 18 repetitions fall into 3 runs with
// probability 3! (6!)^3 / 18! < 1e-9.
std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(BenchMainTest, RepetitionsAreInterleavedByDefault) {
  EXPECT_GT(turns(dir_, {}).size(), 3u);
  const std::string json = results();
  EXPECT_NE(json.find(context_entry("random_interleaving", "true")), std::string::npos);
  // Every repetition is still recorded, with its device-style (manual) time, and the
  // aggregates follow.
  for (const char* name : {"selftest/a", "selftest/b", "selftest/c"}) {
    // One iteration per repetition (the noise rule, not Google Benchmark's sizing, decides the launches).
    EXPECT_EQ(count(json, "\"name\": \"" + std::string(name) + "/iterations:1/manual_time\","), 6u) << name;
    EXPECT_EQ(count(json, "\"name\": \"" + std::string(name) + "/iterations:1/manual_time_median\","), 1u) << name;
  }
}

TEST_F(BenchMainTest, InterleavingCanBeTurnedOff) {
  EXPECT_EQ(turns(dir_, {"--benchmark_enable_random_interleaving=false"}),
            (std::vector<std::string>{"selftest/a", "selftest/b", "selftest/c"}));
  EXPECT_NE(results().find(context_entry("random_interleaving", "false")), std::string::npos);
}

TEST_F(BenchMainTest, TheLastInterleavingFlagWinsAndTheEnvironmentCounts) {
  EXPECT_GT(turns(dir_, {"--benchmark_enable_random_interleaving=no", "--benchmark_enable_random_interleaving"}).size(),
            3u);
  fs::remove_all(dir_);
  ::setenv("BENCHMARK_ENABLE_RANDOM_INTERLEAVING", "off", 1);
  EXPECT_EQ(turns(dir_, {}).size(), 3u);
  ::unsetenv("BENCHMARK_ENABLE_RANDOM_INTERLEAVING");
  EXPECT_NE(results().find(context_entry("random_interleaving", "false")), std::string::npos);
}

// A family of two shapes whose rows carry the record label.
struct TwoShapes {
  static std::vector<int> shapes(const ShapeSelection&) { return {1, 2}; }
  template <class Policy>
  static void add(Registry& r, const VariantNames& v, int shape) {
    const std::string name = v.experiment + "/" + v.variant + "/shape:" + std::to_string(shape);
    r.add<PrefillProblem>(name, record_label("test", v, "bf16"), any_problem(),
                          [name](const PrefillProblem&) { return std::make_unique<StandInCase>(name, fs::path()); });
  }
};
struct PolicyA {};
struct PolicyB {};

TEST_F(BenchMainTest, BaselineIsRegisteredTwiceAsAnAaControl) {
  const Experiment<TwoShapes, PolicyA, PolicyB> e{"exp", "b", {"a", "b"}};
  ASSERT_EQ(run_bench(dir_, [&](Registry& r) { e.register_all(r); }), 0);
  const std::string json = results();
  for (const char* shape : {"1", "2"}) {
    for (const char* variant : {"a", "b", "b_aa"})
      EXPECT_NE(json.find("\"name\": \"exp/" + std::string(variant) + "/shape:" + shape), std::string::npos)
          << variant << " " << shape << "\n" << json;
  }
  const std::string plain = "family=test;experiment=exp;variant=b;baseline=b;dtype=bf16;peer=0\"";
  const std::string control = "family=test;experiment=exp;variant=b_aa;baseline=b;dtype=bf16;peer=0;control=aa\"";
  EXPECT_NE(json.find(plain), std::string::npos) << json;
  EXPECT_NE(json.find(control), std::string::npos) << json;
  EXPECT_EQ(json.find("variant=a_aa"), std::string::npos);
}

TEST(ExperimentNames, RefusesDuplicatesAndTheControlsName) {
  SteadyClock clock;
  RunOptions opts;
  Registry r(clock, opts);
  const Experiment<TwoShapes, PolicyA, PolicyB> twice{"e", "a", {"a", "a"}};
  EXPECT_THROW(twice.register_all(r), std::invalid_argument);
  const Experiment<TwoShapes, PolicyA, PolicyB> clash{"e", "a", {"a", "a_aa"}};
  EXPECT_THROW(clash.register_all(r), std::invalid_argument);
  EXPECT_EQ(r.size(), 0u);
}

// A family whose shapes are a number n: tiers of 1, 2 and 3 shapes, any n from the axes.
struct CountedShapes {
  static std::vector<int> shapes(const ShapeSelection& selection) {
    static const FamilyAxes axes{"counted", {{"n", "1", "a whole number"}}};
    static const TierAxes tiers{.quick = {"n=1"}, .standard = {"n=1,2"}, .full = {"n=1,2,3"}};
    return select_shapes(selection, axes, tiers, [](const AxisPoint& p) { return p.integer("n", 1); });
  }
  template <class Policy>
  static void add(Registry& r, const VariantNames& v, int n) {
    const std::string name = v.experiment + "/" + v.variant + "/n:" + std::to_string(n);
    r.add<PrefillProblem>(name, record_label("test", v, "bf16"), any_problem(),
                          [name](const PrefillProblem&) { return std::make_unique<StandInCase>(name, fs::path()); });
  }
};

Registrar counted_experiment() {
  return [](Registry& r) { Experiment<CountedShapes, PolicyA>{"exp", "a", {"a"}}.register_all(r); };
}

TEST_F(BenchMainTest, TierChoosesTheShapesAndIsRecorded) {
  // Shapes and, with no --benchmark_repetitions, repetitions per tier (3, 3, 5).
  const std::tuple<const char*, std::size_t, std::size_t> tiers[] = {{"quick", 1, 3}, {"default", 2, 3}, {"full", 3, 5}};
  for (const auto& [tier, shapes, reps] : tiers) {
    fs::remove_all(dir_);
    ASSERT_EQ(run_bench(dir_, counted_experiment(), {std::string("--schedlab_tier=") + tier}), 0) << tier;
    const std::string json = results();
    EXPECT_EQ(count(json, "\"run_type\": \"iteration\""), 2 * shapes * reps) << tier;  // variant and A/A control
    EXPECT_NE(json.find(context_entry("tier", tier)), std::string::npos) << json;
    EXPECT_NE(json.find(context_entry("axes_override", "")), std::string::npos) << json;
  }
  fs::remove_all(dir_);
  ASSERT_EQ(run_bench(dir_, counted_experiment()), 0);  // no flag: the default tier
  EXPECT_NE(results().find(context_entry("tier", "default")), std::string::npos);
}

TEST_F(BenchMainTest, AxesReplaceTheTiersShapesAndAreRecorded) {
  ASSERT_EQ(run_bench(dir_, counted_experiment(), {"--schedlab_tier=quick", "--schedlab_axes=n=7,9"}), 0);
  const std::string json = results();
  for (const char* name : {"exp/a/n:7/", "exp/a/n:9/", "exp/a_aa/n:7/", "exp/a_aa/n:9/"})
    EXPECT_NE(json.find(name), std::string::npos) << name;
  EXPECT_EQ(json.find("exp/a/n:1/"), std::string::npos);
  EXPECT_NE(json.find(context_entry("axes_override", "n=7,9")), std::string::npos) << json;
  EXPECT_NE(json.find(context_entry("tier", "quick")), std::string::npos) << json;
}

// Each is an error before anything runs: exit 2 and no file, not even a directory's worth.
TEST_F(BenchMainTest, BadTierOrAxesWriteNothing) {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--schedlab_tier=fast"}, {"--schedlab_axes=m=1"}, {"--schedlab_axes=n=x"},
        {"--schedlab_axes=n=0"}, {"--schedlab_axes=n"}, {"--schedlab_axes=n=1,1"}}) {
    EXPECT_EQ(run_bench(dir_, counted_experiment(), flags), 2) << flags[0];
    EXPECT_TRUE(wrote_nothing()) << flags[0];
  }
}

TEST_F(BenchMainTest, AxesRefusedByABenchmarkOfFixedShapes) {
  EXPECT_EQ(run_bench(dir_, [](Registry& r) { add_stand_in(r, "selftest/a"); }, {"--schedlab_axes=n=1"}), 2);
  EXPECT_TRUE(wrote_nothing());
}

TEST_F(BenchMainTest, AShapeRegisteredTwiceWritesNothing) {
  EXPECT_EQ(run_bench(dir_, [](Registry& r) {
    add_stand_in(r, "selftest/a");
    add_stand_in(r, "selftest/a");
  }), 2);
  EXPECT_TRUE(wrote_nothing());
}

// A run that ends without results (here: no benchmark matched) removes the directories it
// made for them, and only those.
TEST_F(BenchMainTest, ARunWithoutResultsRemovesTheDirectoriesItMade) {
  fs::create_directories(dir_);
  EXPECT_EQ(run_bench(dir_ / "a" / "b", counted_experiment(), {"--benchmark_filter=nothing_matches"}), 4);
  EXPECT_FALSE(fs::exists(dir_ / "a"));
  EXPECT_TRUE(fs::exists(dir_));
}

// What needs no GPU answers without one: the platform factory is never asked.
class WithoutDevice : public BenchMainTest {
 protected:
  int run(const std::vector<std::string>& flags, const Registrar& reg = counted_experiment()) {
    return run_bench(dir_, reg, flags, no_device(), output_path());
  }
  fs::path output_path() const { return dir_.string() + ".out"; }
  std::string output() const { return slurp(output_path()); }
  void TearDown() override {
    fs::remove(output_path());
    BenchMainTest::TearDown();
  }
};

TEST_F(WithoutDevice, HelpListsTheSchedlabFlagsAndGoogleBenchmarksOwn) {
  ASSERT_EQ(run({"--help"}), 0);
  const std::string out = output();
  for (const FlagDoc& f : schedlab_flags())
    EXPECT_NE(out.find("--schedlab_" + std::string(f.name)), std::string::npos) << f.name << "\n" << out;
  EXPECT_NE(out.find("--benchmark_filter"), std::string::npos) << out;  // Google Benchmark's part
  EXPECT_EQ(out.find("schedlab: no GPU found"), std::string::npos) << out;
  EXPECT_TRUE(wrote_nothing());
}

TEST_F(WithoutDevice, ListingNamesTheBenchmarks) {
  ASSERT_EQ(run({"--benchmark_list_tests"}), 0);
  const std::string out = output();
  for (const char* name : {"exp/a/n:1/", "exp/a/n:2/", "exp/a_aa/n:1/"})
    EXPECT_NE(out.find(name), std::string::npos) << name << "\n" << out;
  EXPECT_TRUE(wrote_nothing());
  EXPECT_FALSE(fs::exists(dir_));
  EXPECT_EQ(run({"--benchmark_list_tests", "--benchmark_filter=nothing_matches"}), 4);
}

TEST_F(WithoutDevice, BadFlagsTiersAndAxesAreUsageErrors) {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--schedlab_profile_launches=abc"}, {"--schedlab_tier=fast"}, {"--schedlab_axes=m=1"},
        {"--schedlab_axes=n=0"}, {"--schedlab_bogus"}, {"--schedlab_out_dir="}, {"--benchmark_no_such_flag=1"},
        {"--benchmark_format=xml"}}) {
    EXPECT_EQ(run(flags), 2) << flags[0];
    EXPECT_EQ(output().find("schedlab: no GPU found"), std::string::npos) << flags[0] << ": " << output();
    EXPECT_TRUE(wrote_nothing()) << flags[0];
  }
  run({"--schedlab_profile_launches=abc"});
  EXPECT_NE(output().find("--schedlab_profile_launches=N: 'abc' is not a whole number"), std::string::npos)
      << output();
}

TEST_F(WithoutDevice, ARunNeedsTheDevice) {
  EXPECT_EQ(run({}), 3);
  EXPECT_NE(output().find("schedlab: no GPU found"), std::string::npos) << output();
  EXPECT_FALSE(fs::exists(dir_));
}

// A device whose free memory is `free_bytes`, and cases that state how much they need; one
// whose prepare() runs although it cannot fit fails the run.
class SmallDeviceClock final : public Clock {
 public:
  void flush_cache() override {}
  void start() override { clock_.start(); }
  double stop_seconds() override { return clock_.stop_seconds(); }
  std::size_t cache_bytes() const override { return 1 << 20; }
  std::optional<std::size_t> free_memory_bytes() const override { return std::size_t(8) << 30; }

 private:
  SteadyClock clock_;
};

class SizedCase final : public Case {
 public:
  explicit SizedCase(std::size_t bytes) : bytes_(bytes) {}
  void prepare(std::uint64_t, int) override {
    if (bytes_ > (std::size_t(8) << 30)) throw std::runtime_error("prepared a case too large for the device");
  }
  void poison_output() override {}
  void launch(int) override { std::this_thread::sleep_for(std::chrono::microseconds(20)); }
  void synchronize() override {}
  std::vector<double> reference(int) override { return {1.0}; }
  std::vector<float> output() override { return {1.0f}; }
  Tolerance tolerance() const override { return default_tolerance(DType::f32, DType::f32); }
  std::size_t row_length() const override { return 1; }
  Work work() const override { return {1e6, 1e6}; }
  std::size_t input_set_bytes() const override { return 1 << 30; }
  std::size_t device_bytes(int sets) const override { return sets * bytes_; }
  std::map<std::string, double> axes() const override { return {}; }

 private:
  std::size_t bytes_;
};

TEST_F(BenchMainTest, ACaseLargerThanTheDeviceIsSkippedWithTheBytesAndTheOthersRun) {
  const PlatformFactory small_device = [] {
    Platform p;
    p.clock = std::make_unique<SmallDeviceClock>();
    return std::optional<Platform>(std::move(p));
  };
  const std::size_t huge = std::size_t(300) << 30;
  const int rc = run_bench(dir_, [&](Registry& r) {
    for (const auto& [name, bytes] : {std::pair<std::string, std::size_t>{"selftest/fits", std::size_t(1) << 30},
                                      {"selftest/huge", huge}})
      r.add<PrefillProblem>(name, "family=prefill", any_problem(),
                            [bytes](const PrefillProblem&) { return std::make_unique<SizedCase>(bytes); });
  }, {"--benchmark_enable_random_interleaving=false"}, small_device);
  ASSERT_EQ(rc, 0);
  const std::string json = results();
  const std::string skip = "\"error_message\": \"skipped: too large for this device: needs " + std::to_string(huge) +
                           " bytes (300.00 GiB) of device memory (plus 256 MiB kept for the runtime), and the device "
                           "has 8589934592 bytes (8.00 GiB) free\"";
  EXPECT_EQ(count(json, skip), 3u) << json;  // every repetition
  EXPECT_EQ(count(json, "\"name\": \"selftest/fits/iterations:1/manual_time\","), 3u) << json;
  EXPECT_EQ(count(json, "\"error_occurred\": true"), 3u) << json;  // the huge case's, no time of its own
}

TEST(MemoryShortfall, NamesWhatIsNeededAndWhatIsFree) {
  const std::size_t gib = std::size_t(1) << 30;
  EXPECT_FALSE(memory_shortfall(gib, std::nullopt));          // the host: nothing to run out of
  EXPECT_FALSE(memory_shortfall(0, gib));                     // not stated
  EXPECT_FALSE(memory_shortfall(gib, gib + kDeviceMemoryReserve));
  const auto over = memory_shortfall(gib, gib + kDeviceMemoryReserve - 1);
  ASSERT_TRUE(over);
  EXPECT_NE(over->find("needs 1073741824 bytes (1.00 GiB)"), std::string::npos) << *over;
  EXPECT_NE(over->find("has 1342177279 bytes (1.25 GiB) free"), std::string::npos) << *over;
}

}  // namespace
}  // namespace schedlab::harness
