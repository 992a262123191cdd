// A benchmark binary's command line: the --schedlab_* flags read and checked (a bad value is
// a FlagError naming the flag and what it accepts), everything else left for Google
// Benchmark, and --help listing every flag with its meaning.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "common/harness/bench_flags.hpp"

namespace schedlab::harness {
namespace {

BenchFlags parse(std::vector<std::string> args) {
  args.insert(args.begin(), "bench_x");
  return parse_bench_flags(args);
}

// The FlagError message of `args`; a failure if they parse.
std::string refusal(const std::vector<std::string>& args) {
  try {
    parse(args);
  } catch (const FlagError& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << args.at(0);
  return {};
}

TEST(BenchFlags, DefaultsWithNoFlags) {
  ::unsetenv("BENCHMARK_ENABLE_RANDOM_INTERLEAVING");
  const BenchFlags f = parse({});
  EXPECT_FALSE(f.help);
  EXPECT_EQ(f.tier, Tier::standard);
  EXPECT_EQ(f.results_root, "results");
  EXPECT_TRUE(f.out_dir.empty());
  EXPECT_TRUE(f.axes.empty());
  EXPECT_FALSE(f.profile_once);
  EXPECT_EQ(f.profile_launches, 1);
  EXPECT_FALSE(f.list_only);
  EXPECT_TRUE(f.random_interleaving);
  EXPECT_FALSE(f.interleaving_given);
  EXPECT_EQ(f.benchmark_args, std::vector<std::string>{"bench_x"});
}

TEST(BenchFlags, ReadsItsOwnAndPassesTheRestOnInOrder) {
  const BenchFlags f = parse({"--benchmark_filter=a", "--schedlab_tier=full", "--schedlab_axes=n=1,2",
                              "--schedlab_results_root=r", "--schedlab_out_dir=o", "--benchmark_min_time=0.1",
                              "--schedlab_profile_launches=7"});
  EXPECT_EQ(f.tier, Tier::full);
  EXPECT_EQ(f.axes, "n=1,2");
  EXPECT_EQ(f.results_root, "r");
  EXPECT_EQ(f.out_dir, "o");
  EXPECT_TRUE(f.profile_once);
  EXPECT_EQ(f.profile_launches, 7);
  EXPECT_EQ(f.benchmark_args,
            (std::vector<std::string>{"bench_x", "--benchmark_filter=a", "--benchmark_min_time=0.1"}));
  EXPECT_TRUE(parse({"--schedlab_profile_once"}).profile_once);
  EXPECT_EQ(parse({"--schedlab_tier=quick"}).tier, Tier::quick);
}

TEST(BenchFlags, ReadsTheGoogleBenchmarkFlagsItActsOn) {
  ::unsetenv("BENCHMARK_ENABLE_RANDOM_INTERLEAVING");
  EXPECT_TRUE(parse({"--benchmark_list_tests"}).list_only);
  EXPECT_TRUE(parse({"--benchmark_list_tests=true"}).list_only);
  EXPECT_FALSE(parse({"--benchmark_list_tests=false"}).list_only);
  EXPECT_FALSE(parse({"--benchmark_list_tests=0"}).list_only);
  EXPECT_FALSE(parse({"--benchmark_list_testsx"}).list_only);
  EXPECT_TRUE(parse({"--benchmark_repetitions=4"}).repetitions_given);
  const BenchFlags off = parse({"--benchmark_enable_random_interleaving=off"});
  EXPECT_TRUE(off.interleaving_given);
  EXPECT_FALSE(off.random_interleaving);
  // The last one wins, as in Google Benchmark; each still goes on to it.
  const BenchFlags last = parse({"--benchmark_enable_random_interleaving=no", "--benchmark_enable_random_interleaving"});
  EXPECT_TRUE(last.random_interleaving);
  EXPECT_EQ(last.benchmark_args.size(), 3u);
  ::setenv("BENCHMARK_ENABLE_RANDOM_INTERLEAVING", "0", 1);
  EXPECT_FALSE(parse({}).random_interleaving);
  EXPECT_TRUE(parse({"--benchmark_enable_random_interleaving=1"}).random_interleaving);  // the flag over the variable
  ::unsetenv("BENCHMARK_ENABLE_RANDOM_INTERLEAVING");
}

TEST(BenchFlags, HelpAnywhereWinsEvenOverABadFlag) {
  EXPECT_TRUE(parse({"--help"}).help);
  EXPECT_TRUE(parse({"--schedlab_tier=fast", "-h"}).help);
  EXPECT_FALSE(parse({"--benchmark_filter=--help"}).help);
}

TEST(BenchFlags, BadNumbersNameTheFlagAndWhatItTakes) {
  for (const char* bad : {"abc", "0", "-3", "1.5", "+3", "3x", "", "99999999999"}) {
    const std::string msg = refusal({std::string("--schedlab_profile_launches=") + bad});
    EXPECT_NE(msg.find("--schedlab_profile_launches=N"), std::string::npos) << msg;
    EXPECT_NE(msg.find("whole number from 1"), std::string::npos) << msg;
  }
}

TEST(BenchFlags, TheLaunchLeadIsWholeMicrosecondsUpToASecond) {
  EXPECT_EQ(parse({}).launch_lead_us, 0);
  EXPECT_EQ(parse({"--schedlab_launch_lead_us=0"}).launch_lead_us, 0);
  EXPECT_EQ(parse({"--schedlab_launch_lead_us=3000"}).launch_lead_us, 3000);
  EXPECT_EQ(parse({"--schedlab_launch_lead_us=1000000"}).launch_lead_us, 1000000);
  for (const char* bad : {"abc", "-1", "2.5", "+3", "3us", "", "1000001", "99999999999"}) {
    const std::string msg = refusal({std::string("--schedlab_launch_lead_us=") + bad});
    EXPECT_NE(msg.find("--schedlab_launch_lead_us=US: '" + std::string(bad) + "'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("whole number of microseconds from 0 to 1000000"), std::string::npos) << msg;
  }
  EXPECT_NE(refusal({"--schedlab_launch_lead_us"}).find("needs a value"), std::string::npos);
}

TEST(BenchFlags, BadTiersAxesAndPathsAreRefused) {
  const std::string tier = refusal({"--schedlab_tier=fast"});
  EXPECT_NE(tier.find("--schedlab_tier=quick|default|full"), std::string::npos) << tier;
  EXPECT_NE(tier.find("'fast'"), std::string::npos) << tier;
  EXPECT_NE(refusal({"--schedlab_tier="}).find("--schedlab_tier"), std::string::npos);
  EXPECT_NE(refusal({"--schedlab_axes="}).find("--schedlab_axes"), std::string::npos);
  for (const char* flag : {"--schedlab_out_dir", "--schedlab_results_root"}) {
    const std::string msg = refusal({std::string(flag) + "="});
    EXPECT_NE(msg.find(std::string(flag) + "=DIR: an empty value"), std::string::npos) << msg;
  }
}

TEST(BenchFlags, ValuesWhereNoneBelongAndNoneWhereOneDoes) {
  EXPECT_NE(refusal({"--schedlab_profile_once=1"}).find("--schedlab_profile_once takes no value"), std::string::npos);
  const std::string msg = refusal({"--schedlab_tier"});
  EXPECT_NE(msg.find("--schedlab_tier needs a value: --schedlab_tier=quick|default|full"), std::string::npos) << msg;
  EXPECT_NE(refusal({"--schedlab_profile_launches"}).find("needs a value"), std::string::npos);
}

TEST(BenchFlags, UnknownSchedlabFlagsAreRefusedWithTheList) {
  for (const char* bad : {"--schedlab_teir=full", "--schedlab_", "--schedlab_profile", "--schedlab_help"}) {
    const std::string msg = refusal({bad});
    EXPECT_EQ(msg.rfind("unknown flag ", 0), 0u) << msg;
    for (const FlagDoc& f : schedlab_flags())
      EXPECT_NE(msg.find("--schedlab_" + std::string(f.name)), std::string::npos) << msg;
  }
  EXPECT_NE(refusal({"--schedlab_teir=full"}).find("unknown flag --schedlab_teir;"), std::string::npos);
}

TEST(BenchFlags, HelpListsEveryFlagWithItsMeaningAndTheExitCodes) {
  std::ostringstream out;
  print_schedlab_help(out, "bench_x", "some_experiment");
  const std::string help = out.str();
  EXPECT_EQ(help.rfind("usage: bench_x ", 0), 0u) << help;
  EXPECT_NE(help.find("some_experiment"), std::string::npos);
  ASSERT_GE(schedlab_flags().size(), 6u);
  for (const FlagDoc& f : schedlab_flags()) {
    const std::string syntax = "--schedlab_" + std::string(f.name) + (f.value.empty() ? "" : "=" + std::string(f.value));
    EXPECT_NE(help.find("  " + syntax + "\n      " + std::string(f.meaning) + "\n"), std::string::npos) << syntax;
    EXPECT_FALSE(f.meaning.empty()) << f.name;
  }
  for (const char* code : {"0 done", "1 the run failed", "2 a bad flag", "3 no GPU", "4 no benchmark matched"})
    EXPECT_NE(help.find(code), std::string::npos) << code;
  EXPECT_NE(help.find("need no GPU"), std::string::npos);
}

// Every flag --help lists is one the parser reads (with a value where it takes one).
TEST(BenchFlags, EveryListedFlagIsAccepted) {
  for (const FlagDoc& f : schedlab_flags()) {
    const std::string value = f.name == "tier"                                               ? "full"
                              : f.name == "profile_launches" || f.name == "launch_lead_us" ? "2"
                              : f.name == "axes"                                           ? "n=1"
                                                                                           : "x";
    const std::string arg = "--schedlab_" + std::string(f.name) + (f.value.empty() ? "" : "=" + value);
    EXPECT_NO_THROW(parse({arg})) << arg;
    EXPECT_EQ(parse({arg}).benchmark_args.size(), 1u) << arg;  // not passed on
  }
}

}  // namespace
}  // namespace schedlab::harness
