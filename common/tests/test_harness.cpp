// The harness on the host: a CPU "kernel" (the reference itself, in float) stands in for a
// device so that the gate, the error path and the results file are tested without a GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include "common/data.hpp"
#include "common/harness/bench_main.hpp"
#include "common/harness/experiment.hpp"
#include "common/problem.hpp"
#include "common/reference/attention_ref.hpp"

namespace schedlab::harness {
namespace {

namespace fs = std::filesystem;

class HostClock final : public Clock {
 public:
  void flush_cache() override {}
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  double stop_seconds() override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  std::size_t cache_bytes() const override { return 1 << 20; }

 private:
  std::chrono::steady_clock::time_point t0_;
};

// Attention computed on the host; `error` is added to every output to play a wrong kernel.
// A fault can be confined to one input set, or start after some launches (a schedule
// counter that is not reset, say), which only the checks after the first launch see.
struct HostFault {
  float error = 0.f;
  int only_set = -1;         // >= 0: the error only on this input set
  int after_launches = 0;    // > 0: launches before the error starts
};

class HostPrefillCase final : public Case {
 public:
  HostPrefillCase(const PrefillProblem& p, HostFault fault) : p_(p), fault_(fault) {}
  HostPrefillCase(const PrefillProblem& p, float error) : HostPrefillCase(p, HostFault{error}) {}
  static inline int references = 0;  // reference() calls in this process
  void prepare(std::uint64_t seed, int sets) override {
    const auto bytes = dtype_bytes(p_.dtype);
    sets_.assign(sets, {});
    for (int s = 0; s < sets; ++s) {
      Set& set = sets_[s];
      set.q.resize(p_.q_elems() * bytes);
      set.k.resize(p_.kv_elems() * bytes);
      set.v.resize(p_.kv_elems() * bytes);
      fill_normal_host(p_.dtype, set.q.data(), p_.q_elems(), seed + 3 * s, 1.f);
      fill_normal_host(p_.dtype, set.k.data(), p_.kv_elems(), seed + 3 * s + 1, 1.f);
      fill_normal_host(p_.dtype, set.v.data(), p_.kv_elems(), seed + 3 * s + 2, 1.f);
    }
    poison_output();  // the output exists from here on, as a device case's buffer does
  }
  void poison_output() override { out_.assign(all_rows(p_).size() * p_.head_dim, std::nanf("")); }
  void launch(int set) override {
    ASSERT_LT(set, int(sets_.size()));
    const Set& in = sets_[set];
    const auto ref = prefill_reference(p_, in.q.data(), in.k.data(), in.v.data(), all_rows(p_));
    const bool wrong = (fault_.only_set < 0 || fault_.only_set == set) && launches_++ >= fault_.after_launches;
    for (std::size_t i = 0; i < ref.size(); ++i) out_[i] = static_cast<float>(ref[i]) + (wrong ? fault_.error : 0.f);
  }
  void synchronize() override {}
  std::vector<double> reference(int set) override {
    ++references;
    const Set& in = sets_.at(set);
    return prefill_reference(p_, in.q.data(), in.k.data(), in.v.data(), all_rows(p_));
  }
  std::vector<float> output() override { return out_; }
  Tolerance tolerance() const override { return default_tolerance(p_.dtype, p_.dtype); }
  std::size_t row_length() const override { return std::size_t(p_.head_dim); }
  std::string input_key() const override { return "host prefill " + std::to_string(p_.q_len); }
  Work work() const override { return {p_.flops(), p_.min_bytes()}; }
  std::size_t input_set_bytes() const override { return static_cast<std::size_t>(p_.min_bytes()); }
  std::map<std::string, double> axes() const override {
    return {{"seq_len", double(p_.q_len)}, {"head_dim", double(p_.head_dim)}};
  }

 private:
  struct Set {
    std::vector<unsigned char> q, k, v;
  };
  PrefillProblem p_;
  HostFault fault_;
  int launches_ = 0;
  std::vector<Set> sets_;
  std::vector<float> out_;
};

PrefillProblem small_problem() {
  PrefillProblem p;
  p.batch = 1;
  p.q_heads = 2;
  p.kv_heads = 1;
  p.q_len = p.kv_len = 16;
  p.head_dim = 16;
  p.dtype = DType::bf16;
  return p;
}

PlatformFactory host_platform() {
  return [] {
    Platform p;
    p.clock = std::make_unique<HostClock>();
    p.context["timing"] = "host clock (self-test)";
    return std::optional<Platform>(std::move(p));
  };
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::exists(dir))
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Each bench_main runs in a child process, as a real benchmark binary does: Google
// Benchmark 1.7 keeps global state that a second run in one process trips over.
int in_child(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run(const fs::path& dir, const Registrar& reg, std::vector<std::string> extra = {}) {
  return in_child([&] {
    std::vector<std::string> args = {"schedlab_harness_tests", "--schedlab_out_dir=" + dir.string(),
                                     "--benchmark_min_time=0.01"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    return bench_main(static_cast<int>(argv.size()), argv.data(), "selftest", reg, host_platform());
  });
}

class HarnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("schedlab_harness_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

using MakePrefill = std::function<std::unique_ptr<Case>(const PrefillProblem&)>;
MakePrefill host_kernel(float error) {
  return [error](const PrefillProblem& p) { return std::make_unique<HostPrefillCase>(p, error); };
}

// Counts the cases alive in this process; a second one alive at once leaves a marker file.
class CountingCase final : public Case {
 public:
  CountingCase(const PrefillProblem& p, fs::path marker) : inner_(p, 0.f), marker_(std::move(marker)) {
    if (++live_ > 1) std::ofstream(marker_) << "two cases resident at once\n";
  }
  ~CountingCase() override { --live_; }
  void prepare(std::uint64_t seed, int sets) override { inner_.prepare(seed, sets); }
  void poison_output() override { inner_.poison_output(); }
  void launch(int set) override { inner_.launch(set); }
  void synchronize() override {}
  std::vector<double> reference(int set) override { return inner_.reference(set); }
  std::vector<float> output() override { return inner_.output(); }
  Tolerance tolerance() const override { return inner_.tolerance(); }
  std::size_t row_length() const override { return inner_.row_length(); }
  Work work() const override { return inner_.work(); }
  std::size_t input_set_bytes() const override { return inner_.input_set_bytes(); }
  std::map<std::string, double> axes() const override { return inner_.axes(); }

 private:
  static inline int live_ = 0;
  HostPrefillCase inner_;
  fs::path marker_;
};

TEST_F(HarnessTest, OneCaseResidentAtATime) {
  const fs::path marker = fs::temp_directory_path() / ("schedlab_resident_" + std::to_string(::getpid()));
  fs::remove(marker);
  const int rc = run(dir_, [&](Registry& r) {
    for (const char* name : {"selftest/a", "selftest/b", "selftest/c"})
      r.add<PrefillProblem>(name, "family=prefill", small_problem(),
                            [&](const PrefillProblem& p) { return std::make_unique<CountingCase>(p, marker); });
  }, {"--benchmark_repetitions=2"});
  EXPECT_EQ(rc, 0);
  EXPECT_FALSE(fs::exists(marker)) << slurp(marker);
  fs::remove(marker);
  EXPECT_EQ(files_in(dir_).size(), 1u);
}

TEST_F(HarnessTest, GoodAndBadVariantsBothRecordedBadAsError) {
  const int rc = run(dir_, [](Registry& r) {
    r.add<PrefillProblem>("selftest/good", "family=prefill;experiment=selftest;variant=good;baseline=good",
                          small_problem(), host_kernel(0.f));
    r.add<PrefillProblem>("selftest/bad", "family=prefill;experiment=selftest;variant=bad;baseline=good",
                          small_problem(), host_kernel(0.5f));
  });
  ASSERT_EQ(rc, 0);
  const auto files = files_in(dir_);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].extension(), ".json");
  const std::string json = slurp(files[0]);
  EXPECT_NE(json.find("\"schedlab_commit\""), std::string::npos);
  EXPECT_NE(json.find("\"rel_l2_err\""), std::string::npos);
  EXPECT_NE(json.find("\"FLOP_per_s\""), std::string::npos);
  EXPECT_NE(json.find("accuracy gate failed"), std::string::npos) << json;
  // The failed variant's records carry no timing counters (records of both variants are
  // interleaved, so each of the bad one's is read up to the next record).
  int bad_records = 0;
  for (auto bad = json.find("\"name\": \"selftest/bad"); bad != std::string::npos;
       bad = json.find("\"name\": \"selftest/bad", bad + 1)) {
    const auto next = json.find("\"name\": ", bad + 1);
    EXPECT_EQ(json.substr(bad, next == std::string::npos ? std::string::npos : next - bad).find("FLOP_per_s"),
              std::string::npos);
    ++bad_records;
  }
  EXPECT_GT(bad_records, 0);
}

MakePrefill host_fault(HostFault fault) {
  return [fault](const PrefillProblem& p) { return std::make_unique<HostPrefillCase>(p, fault); };
}

// The error of a configuration, or "" when it has none.
std::string error_of(const std::string& json, const std::string& name) {
  const auto at = json.find("\"name\": \"" + name);
  if (at == std::string::npos) return "<no record>";
  const auto next = json.find("\"name\":", at + 1);
  const std::string record = json.substr(at, next == std::string::npos ? std::string::npos : next - at);
  const auto err = record.find("\"error_message\": \"");
  return err == std::string::npos ? "" : record.substr(err, record.find('\n', err) - err);
}

// The gate runs on every input set before timing, and on the last timed launch after it.
TEST_F(HarnessTest, GateCatchesAFaultOnOneInputSetAndOneThatStartsLate) {
  const int rc = run(dir_, [](Registry& r) {
    r.add<PrefillProblem>("selftest/good", "family=prefill", small_problem(), host_kernel(0.f));
    r.add<PrefillProblem>("selftest/set5", "family=prefill", small_problem(), host_fault({0.5f, 5, 0}));
    r.add<PrefillProblem>("selftest/late", "family=prefill", small_problem(), host_fault({0.5f, -1, 20}));
  });
  ASSERT_EQ(rc, 0);
  const std::string json = slurp(files_in(dir_).at(0));
  EXPECT_EQ(error_of(json, "selftest/good"), "");
  EXPECT_NE(error_of(json, "selftest/set5").find("accuracy gate failed: input set 5:"), std::string::npos)
      << error_of(json, "selftest/set5");
  EXPECT_NE(error_of(json, "selftest/late").find("accuracy gate failed on the last timed launch"), std::string::npos)
      << error_of(json, "selftest/late");
  // Each of the late fault's records is an error, never a time (records are interleaved:
  // each is read up to the next).
  for (auto late = json.find("\"name\": \"selftest/late"); late != std::string::npos;
       late = json.find("\"name\": \"selftest/late", late + 1)) {
    const auto next = json.find("\"name\": ", late + 1);
    EXPECT_EQ(json.substr(late, next == std::string::npos ? std::string::npos : next - late).find("FLOP_per_s"),
              std::string::npos);
  }
}

TEST_F(HarnessTest, RecordsTheNoiseAndTheRules) {
  const int rc = run(dir_, [](Registry& r) {
    r.add<PrefillProblem>("selftest/good", "family=prefill", small_problem(), host_kernel(0.f));
  });
  ASSERT_EQ(rc, 0);
  const std::string json = slurp(files_in(dir_).at(0));
  for (const char* key : {"\"launches\"", "\"rel_se\"", "\"max_row_rel_err\"", "\"repetition_rule\"",
                          "\"accuracy_rule\"", "relative standard error"})
    EXPECT_NE(json.find(key), std::string::npos) << key;
}

// Two configurations of one problem, three repetitions each: one reference per input set.
TEST_F(HarnessTest, ReferenceComputedOncePerProblemAndInputSet) {
  const fs::path count = dir_ / "references";
  const int rc = in_child([&] {
    std::vector<std::string> args = {"x", "--schedlab_out_dir=" + dir_.string(), "--benchmark_min_time=0.001",
                                     "--benchmark_repetitions=3"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    const int code = bench_main(int(argv.size()), argv.data(), "selftest", [](Registry& r) {
      r.add<PrefillProblem>("selftest/a", "family=prefill", small_problem(), host_kernel(0.f));
      r.add<PrefillProblem>("selftest/b", "family=prefill", small_problem(), host_kernel(0.f));
    }, host_platform());
    std::ofstream(count) << HostPrefillCase::references;
    return code;
  });
  ASSERT_EQ(rc, 0);
  EXPECT_EQ(slurp(count), std::to_string(RunOptions{}.max_input_sets));
}

TEST(LaunchStats, StopsWhenTheMeanIsSteadyOrACapIsReached) {
  RunOptions o;
  LaunchStats steady;
  for (int i = 0; i < o.min_launches - 1; ++i) steady.add(1e-4);
  EXPECT_FALSE(steady.done(o, o.min_launches, 0.0));  // below the minimum count
  steady.add(1e-4);
  EXPECT_DOUBLE_EQ(steady.rel_se(), 0.0);
  EXPECT_TRUE(steady.done(o, o.min_launches, 0.0));
  EXPECT_FALSE(steady.done(o, 50, 0.0));  // Google Benchmark asked for more

  LaunchStats noisy;  // +-20% alternating: rel. SE 0.2 / sqrt(n), under 0.5% from n = 1600
  for (int i = 0; i < 400; ++i) noisy.add(i % 2 ? 1.2e-4 : 0.8e-4);
  EXPECT_NEAR(noisy.mean(), 1e-4, 1e-12);
  EXPECT_NEAR(noisy.rel_se(), 0.2 / std::sqrt(400.0), 1e-3);
  EXPECT_FALSE(noisy.done(o, o.min_launches, 0.1));
  EXPECT_TRUE(noisy.done(o, o.min_launches, o.max_seconds));  // the time cap
  for (int i = 400; i < 1700; ++i) noisy.add(i % 2 ? 1.2e-4 : 0.8e-4);
  EXPECT_TRUE(noisy.done(o, o.min_launches, 0.1));

  LaunchStats wild;
  for (int i = 0; i < o.max_launches; ++i) wild.add(i % 2 ? 1.0 : 1e-6);
  EXPECT_TRUE(wild.done(o, o.min_launches, 0.0));  // the count cap
  EXPECT_TRUE(std::isinf(LaunchStats{}.rel_se()));
}

TEST_F(HarnessTest, SecondRunWritesANewFile) {
  auto reg = [](Registry& r) {
    r.add<PrefillProblem>("selftest/good", "family=prefill;experiment=selftest;variant=good;baseline=good",
                          small_problem(), host_kernel(0.f));
  };
  ASSERT_EQ(run(dir_, reg), 0);
  ASSERT_EQ(run(dir_, reg), 0);
  EXPECT_EQ(files_in(dir_).size(), 2u);
}

TEST_F(HarnessTest, MalformedProblemWritesNothing) {
  PrefillProblem p = small_problem();
  p.q_heads = 3;  // not a multiple of kv_heads = 2
  p.kv_heads = 2;
  const int rc = run(dir_, [&](Registry& r) {
    r.add<PrefillProblem>("selftest/good", "family=prefill", small_problem(), host_kernel(0.f));
    r.add<PrefillProblem>("selftest/malformed", "family=prefill", p, host_kernel(0.f));
  });
  EXPECT_EQ(rc, 2);
  EXPECT_TRUE(files_in(dir_).empty());
}

// Every structural kind of malformed problem: the run stops before any output.
struct Malformed {
  const char* field;
  std::function<void(PrefillProblem&, DecodeProblem&)> spoil;
  bool decode;
};

DecodeProblem small_decode() {
  return make_decode_problem(2, 8, 2, 64, 16, {20, 40}, DType::bf16, 3);
}

class MalformedTest : public HarnessTest, public ::testing::WithParamInterface<Malformed> {};

TEST_P(MalformedTest, WritesNothing) {
  PrefillProblem p = small_problem();
  DecodeProblem d = small_decode();
  GetParam().spoil(p, d);
  if (GetParam().decode) {
    EXPECT_THROW(d.validate(), InvalidProblem);
  } else {
    EXPECT_THROW(p.validate(), InvalidProblem);
  }
  try {
    GetParam().decode ? d.validate() : p.validate();
  } catch (const InvalidProblem& e) {
    EXPECT_EQ(e.field(), GetParam().field) << e.what();
  }
  const int rc = run(dir_, [&](Registry& r) {
    r.add<PrefillProblem>("selftest/good", "family=prefill", small_problem(), host_kernel(0.f));
    if (GetParam().decode) {
      r.add<DecodeProblem>("selftest/malformed", "family=decode", d,
                           [](const DecodeProblem&) -> std::unique_ptr<Case> { return nullptr; });
    } else {
      r.add<PrefillProblem>("selftest/malformed", "family=prefill", p, host_kernel(0.f));
    }
  });
  EXPECT_EQ(rc, 2);
  EXPECT_TRUE(files_in(dir_).empty());
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, MalformedTest,
    ::testing::Values(
        Malformed{"q_heads", [](PrefillProblem& p, DecodeProblem&) { p.q_heads = 3; p.kv_heads = 2; }, false},
        Malformed{"batch", [](PrefillProblem& p, DecodeProblem&) { p.batch = 0; }, false},
        Malformed{"q_len", [](PrefillProblem& p, DecodeProblem&) { p.q_len = -4; }, false},
        Malformed{"head_dim", [](PrefillProblem& p, DecodeProblem&) { p.head_dim = 20; }, false},
        Malformed{"window", [](PrefillProblem& p, DecodeProblem&) { p.window = -1; }, false},
        Malformed{"q_heads", [](PrefillProblem&, DecodeProblem& d) { d.q_heads = 6; d.kv_heads = 4; }, true},
        Malformed{"block_table", [](PrefillProblem&, DecodeProblem& d) { d.block_table[1] = d.num_pages; }, true},
        Malformed{"block_table", [](PrefillProblem&, DecodeProblem& d) { d.block_table[0] = -1; }, true},
        Malformed{"context_lens", [](PrefillProblem&, DecodeProblem& d) { d.context_lens[1] = 16 * d.max_pages_per_seq + 1; }, true},
        Malformed{"context_lens", [](PrefillProblem&, DecodeProblem& d) { d.context_lens.push_back(5); }, true},
        Malformed{"context_lens", [](PrefillProblem&, DecodeProblem& d) { d.context_lens[0] = 0; }, true},
        Malformed{"page_size", [](PrefillProblem&, DecodeProblem& d) { d.page_size = 0; }, true},
        Malformed{"k_scale", [](PrefillProblem&, DecodeProblem& d) { d.kv_dtype = DType::fp8_e4m3; }, true}),
    [](const auto& info) { return std::string(info.param.field) + "_" + std::to_string(info.index); });

// Well-formed, but outside what the kernel supports (a dtype or head dim it has no code
// for): recorded as skipped with the field named, never timed.
TEST_F(HarnessTest, UnsupportedDtypeIsSkippedNamingTheField) {
  const int rc = run(dir_, [](Registry& r) {
    r.add<PrefillProblem>("selftest/fp16_only", "family=prefill", small_problem(), [](const PrefillProblem& p) {
      KernelSupport s;
      s.dtypes = {DType::f16};
      require_support(p, s);
      return std::unique_ptr<Case>(std::make_unique<HostPrefillCase>(p, 0.f));
    });
  });
  ASSERT_EQ(rc, 0);
  const std::string json = slurp(files_in(dir_).at(0));
  EXPECT_NE(json.find(std::string(kSkippedPrefix) + "invalid problem: dtype"), std::string::npos) << json;
  EXPECT_EQ(json.find("FLOP_per_s"), std::string::npos);
}

TEST_F(HarnessTest, UnsupportedCombinationIsSkippedWithReason) {
  const int rc = run(dir_, [](Registry& r) {
    r.add<PrefillProblem>("selftest/unsupported", "family=prefill", small_problem(), [](const PrefillProblem& p) {
      KernelSupport s;
      s.head_dims = {64, 128};
      require_support(p, s);
      return std::unique_ptr<Case>(std::make_unique<HostPrefillCase>(p, 0.f));
    });
  });
  ASSERT_EQ(rc, 0);
  const auto files = files_in(dir_);
  ASSERT_EQ(files.size(), 1u);
  const std::string json = slurp(files[0]);
  EXPECT_NE(json.find(std::string(kSkippedPrefix) + "invalid problem: head_dim"), std::string::npos) << json;
}

TEST_F(HarnessTest, NoMatchingBenchmarkWritesNothing) {
  const int rc = run(
      dir_,
      [](Registry& r) { r.add<PrefillProblem>("selftest/good", "family=prefill", small_problem(), host_kernel(0.f)); },
      {"--benchmark_filter=does_not_exist"});
  EXPECT_NE(rc, 0);
  EXPECT_TRUE(files_in(dir_).empty());
}

TEST_F(HarnessTest, NoDeviceWritesNothing) {
  std::vector<std::string> args = {"x", "--schedlab_out_dir=" + dir_.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  const int rc = in_child(
      [&] { return bench_main(2, argv.data(), "selftest", [](Registry&) {}, [] { return std::optional<Platform>(); }); });
  EXPECT_EQ(rc, 3);
  EXPECT_TRUE(files_in(dir_).empty());
}

TEST(InputSets, RotatesOnlyBelowFourTimesTheCache) {
  RunOptions o;
  EXPECT_EQ(input_sets_for(200 << 20, 50 << 20, o), 1);
  EXPECT_EQ(input_sets_for(100 << 20, 50 << 20, o), 2);
  EXPECT_EQ(input_sets_for(50 << 20, 50 << 20, o), 4);
  EXPECT_EQ(input_sets_for(1 << 20, 50 << 20, o), o.max_input_sets);
  o.max_rotation_bytes = 3 << 20;
  EXPECT_EQ(input_sets_for(1 << 20, 50 << 20, o), 3);
}

TEST(DeviceSlug, DropsVendorAndPunctuation) {
  gpu::DeviceInfo d;
  d.name = "NVIDIA H200";
  EXPECT_EQ(device_slug(d), "h200");
  d.name = "AMD Instinct MI355X";
  EXPECT_EQ(device_slug(d), "instinct-mi355x");
  EXPECT_EQ(device_slug(std::nullopt), "cpu");
}

}  // namespace
}  // namespace schedlab::harness

namespace schedlab::harness {
namespace {
struct NoShapes {  // a Family whose names are checked before any shape is registered
  static std::vector<int> shapes(const ShapeSelection&) { return {}; }
  template <class Policy>
  static void add(Registry&, const VariantNames&, int) {}
};
struct PolicyA {};
struct PolicyB {};

TEST(ExperimentNamesCheck, RefusesNamesOutOfStepWithPolicies) {
  HostClock clock;
  RunOptions opts;
  Registry r(clock, opts);
  const Experiment<NoShapes, PolicyA, PolicyB> short_list{"e", "a", {"a"}};
  EXPECT_THROW(short_list.register_all(r), std::invalid_argument);
  const Experiment<NoShapes, PolicyA, PolicyB> bad_baseline{"e", "c", {"a", "b"}};
  EXPECT_THROW(bad_baseline.register_all(r), std::invalid_argument);
  const Experiment<NoShapes, PolicyA, PolicyB> good{"e", "b", {"a", "b"}};
  EXPECT_NO_THROW(good.register_all(r));
}
}  // namespace
}  // namespace schedlab::harness
