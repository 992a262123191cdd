// The command line of a benchmark binary. The --schedlab_* flags are read and checked here:
// a bad value, a missing value or an unknown --schedlab_ name is a FlagError naming the flag
// and what it accepts, before anything touches the GPU or the results tree. Every other
// argument goes on to Google Benchmark; this reads the few of those whose meaning
// bench_main needs (interleaving, repetitions, listing).
#pragma once
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "common/harness/axes.hpp"

namespace schedlab::harness {

class FlagError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct BenchFlags {
  bool help = false;  // --help or -h anywhere: print the help and nothing else
  std::string out_dir;  // empty: <results_root>/<device>/<experiment>
  std::string results_root = "results";
  bool profile_once = false;
  int profile_launches = 1;
  int launch_lead_us = 0;  // device idle before each timed launch (RunOptions::launch_lead_us)
  Tier tier = Tier::standard;
  std::string axes;  // empty: the tier's shapes
  bool list_only = false;  // --benchmark_list_tests: names only, no device, no results file
  // Repetitions of all benchmarks in a random order, so that drift over the run spreads over
  // every variant instead of masquerading as the effect of one. On unless the command line
  // (or Google Benchmark's environment variable) says otherwise.
  bool random_interleaving = true;
  bool interleaving_given = false;
  bool repetitions_given = false;
  std::vector<std::string> benchmark_args;  // the program name, then every argument not ours, in order
};

// One --schedlab_* flag as --help lists it: `value` is what follows '=' (empty: a switch,
// which takes none).
struct FlagDoc {
  std::string_view name, value, meaning;
};
const std::vector<FlagDoc>& schedlab_flags();

// Reads args (args[0] the program name). Throws FlagError; the environment variable
// BENCHMARK_ENABLE_RANDOM_INTERLEAVING counts when no flag sets interleaving.
BenchFlags parse_bench_flags(const std::vector<std::string>& args);

// The help's own part, before Google Benchmark's: usage, the --schedlab_* flags with their
// meanings, what needs a GPU, and the exit codes.
void print_schedlab_help(std::ostream& out, std::string_view program, std::string_view experiment);

// Exit codes of a benchmark binary (also listed by --help).
inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;
inline constexpr int kExitUsage = 2;       // a bad flag, tier, axes string or shape: nothing ran
inline constexpr int kExitNoDevice = 3;    // no GPU, or it could not be set up
inline constexpr int kExitNoneMatched = 4; // the filter matched no benchmark

}  // namespace schedlab::harness
