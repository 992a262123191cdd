#include "common/harness/bench_flags.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <limits>

namespace schedlab::harness {

namespace {

constexpr std::string_view kPrefix = "--schedlab_";

// Google Benchmark's reading of a boolean flag value (commandlineflags.cc, IsTruthyFlagValue):
// empty is true; "0", "f", "n", "false", "no", "off" (any case) are false.
bool truthy(std::string value) {
  for (char& ch : value) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (value.empty()) return true;
  if (value.size() == 1) return std::isalnum(static_cast<unsigned char>(value[0])) && value != "0" && value != "f" && value != "n";
  return value != "false" && value != "no" && value != "off";
}

constexpr std::string_view kInterleaveFlag = "--benchmark_enable_random_interleaving";
constexpr const char* kInterleaveEnv = "BENCHMARK_ENABLE_RANDOM_INTERLEAVING";
constexpr std::string_view kListFlag = "--benchmark_list_tests";

std::string flag_syntax(const FlagDoc& f) {
  return std::string(kPrefix) + std::string(f.name) + (f.value.empty() ? "" : "=" + std::string(f.value));
}

std::string non_empty(const FlagDoc& f, std::string_view value) {
  if (value.empty()) throw FlagError(flag_syntax(f) + ": an empty value; give a path");
  return std::string(value);
}

// A whole number from lo to hi: `what` names it in the error ("a whole number of microseconds").
int whole_number(const FlagDoc& f, std::string_view value, int lo, int hi, const std::string& what) {
  int n = lo - 1;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || n < lo || n > hi || value.front() == '+')
    throw FlagError(flag_syntax(f) + ": '" + std::string(value) + "' is not " + what + " from " + std::to_string(lo) +
                    " to " + std::to_string(hi));
  return n;
}

int launches(const FlagDoc& f, std::string_view value) {
  return whole_number(f, value, 1, std::numeric_limits<int>::max(), "a whole number");
}

int microseconds(const FlagDoc& f, std::string_view value) {
  return whole_number(f, value, 0, 1000000, "a whole number of microseconds");
}

struct FlagSpec {
  FlagDoc doc;
  std::function<void(const FlagDoc&, BenchFlags&, std::string_view)> apply;
};

const std::vector<FlagSpec>& flag_specs() {
  static const std::vector<FlagSpec> specs = {
      {{"tier", "quick|default|full",
        "which of the family's shape lists runs: its headline shapes (quick), a short set that answers "
        "every experiment's question (default), or all of them (full). Default: default."},
       [](const FlagDoc& f, BenchFlags& b, std::string_view v) {
         try {
           b.tier = parse_tier(v);
         } catch (const AxesError& e) {
           throw FlagError(flag_syntax(f) + ": " + e.what());
         }
       }},
      {{"axes", "'NAME=V[,V...];NAME=V...'",
        "the cross product of these axes instead of the tier's shapes, e.g. "
        "'batch=4;context=777,3000;page_size=32' (decode) or 'seq=512;head_dim=128;causal=0,1' "
        "(prefill); an axis not named takes the family's default. An unknown axis, a malformed "
        "value or a shape the kernel cannot run is an error that lists the family's axes. "
        "Syntax, ragged lengths included: common/harness/axes.hpp."},
       [](const FlagDoc& f, BenchFlags& b, std::string_view v) {
         if (v.empty()) throw FlagError(flag_syntax(f) + ": an empty value; name at least one axis");
         b.axes = std::string(v);
       }},
      {{"results_root", "DIR", "the results tree the file goes into, as DIR/<device>/<experiment>/. Default: results."},
       [](const FlagDoc& f, BenchFlags& b, std::string_view v) { b.results_root = non_empty(f, v); }},
      {{"out_dir", "DIR", "the directory the results file goes into, instead of the results tree."},
       [](const FlagDoc& f, BenchFlags& b, std::string_view v) { b.out_dir = non_empty(f, v); }},
      {{"profile_once", "",
        "for a profiler: each configuration's accuracy check, then one launch; nothing timed, nothing written."},
       [](const FlagDoc&, BenchFlags& b, std::string_view) { b.profile_once = true; }},
      {{"profile_launches", "N",
        "as --schedlab_profile_once with N launches (N >= 1), each after an L2 eviction."},
       [](const FlagDoc& f, BenchFlags& b, std::string_view v) {
         b.profile_once = true;
         b.profile_launches = launches(f, v);
       }},
      {{"launch_lead_us", "US",
        "the device idles US microseconds (0 to 1000000) after each timed launch's L2 flush, before its start "
        "event, as the Python peers' timers leave it before each call; recorded as the context's "
        "launch_lead_us. Default: 0."},
       [](const FlagDoc& f, BenchFlags& b, std::string_view v) { b.launch_lead_us = microseconds(f, v); }},
  };
  return specs;
}

std::string flag_names() {
  std::string names;
  for (const FlagSpec& s : flag_specs()) names += (names.empty() ? "" : ", ") + std::string(kPrefix) + std::string(s.doc.name);
  return names;
}

void apply_own_flag(BenchFlags& b, const std::string& arg) {
  const std::size_t eq = arg.find('=');
  const std::string_view name = std::string_view(arg).substr(kPrefix.size(), eq == std::string::npos ? std::string::npos : eq - kPrefix.size());
  const auto spec = std::find_if(flag_specs().begin(), flag_specs().end(), [&](const FlagSpec& s) { return s.doc.name == name; });
  if (spec == flag_specs().end())
    throw FlagError("unknown flag " + arg.substr(0, eq) + "; the schedlab flags are " + flag_names() + " (--help says what each does)");
  const FlagDoc& f = spec->doc;
  if (f.value.empty() && eq != std::string::npos) throw FlagError(std::string(kPrefix) + std::string(f.name) + " takes no value");
  if (!f.value.empty() && eq == std::string::npos) throw FlagError(std::string(kPrefix) + std::string(f.name) + " needs a value: " + flag_syntax(f));
  spec->apply(f, b, eq == std::string::npos ? std::string_view() : std::string_view(arg).substr(eq + 1));
}

// `arg` is `flag` alone or `flag=value`: the value (empty when alone), or nothing.
bool flag_value(const std::string& arg, std::string_view flag, std::string& value) {
  if (arg.compare(0, flag.size(), flag) != 0) return false;
  if (arg.size() == flag.size()) {
    value.clear();
    return true;
  }
  if (arg[flag.size()] != '=') return false;
  value = arg.substr(flag.size() + 1);
  return true;
}

}  // namespace

const std::vector<FlagDoc>& schedlab_flags() {
  static const std::vector<FlagDoc> docs = [] {
    std::vector<FlagDoc> d;
    for (const FlagSpec& s : flag_specs()) d.push_back(s.doc);
    return d;
  }();
  return docs;
}

BenchFlags parse_bench_flags(const std::vector<std::string>& args) {
  BenchFlags b;
  if (std::any_of(args.begin() + std::min<std::size_t>(1, args.size()), args.end(),
                  [](const std::string& a) { return a == "--help" || a == "-h"; })) {
    b.help = true;
    return b;
  }
  b.benchmark_args.push_back(args.empty() ? std::string("bench") : args[0]);
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string value;
    if (a.rfind(kPrefix, 0) == 0) {
      apply_own_flag(b, a);
      continue;
    }
    if (flag_value(a, kInterleaveFlag, value)) {
      b.interleaving_given = true;  // the last one wins, as in Google Benchmark
      b.random_interleaving = truthy(value);
    } else if (a.rfind("--benchmark_repetitions=", 0) == 0) {
      b.repetitions_given = true;
    } else if (flag_value(a, kListFlag, value)) {
      b.list_only = truthy(value);  // listing names is not a run: no device, no results file
    }
    b.benchmark_args.push_back(a);
  }
  if (!b.interleaving_given) {
    if (const char* env = std::getenv(kInterleaveEnv)) {
      b.interleaving_given = true;
      b.random_interleaving = truthy(env);
    }
  }
  return b;
}

void print_schedlab_help(std::ostream& out, std::string_view program, std::string_view experiment) {
  out << "usage: " << program << " [--schedlab_FLAG[=VALUE]...] [--benchmark_FLAG=VALUE...]\n\n"
      << "Times the benchmarks of " << experiment
      << " (each variant on each shape of the tier) on the GPU and writes one results file,\n"
      << "results/<device>/" << experiment << "/<UTC time>-<commit>.json, once every benchmark has run.\n\n"
      << "schedlab flags:\n";
  for (const FlagDoc& f : schedlab_flags()) out << "  " << flag_syntax(f) << "\n      " << f.meaning << "\n";
  out << "\n--help, --benchmark_list_tests and the checks of every flag, tier and axes string need no GPU.\n"
      << "Exit status: " << kExitOk << " done; " << kExitRunFailed << " the run failed; " << kExitUsage
      << " a bad flag, tier, axes string or shape; " << kExitNoDevice << " no GPU found, or it could not be set up; "
      << kExitNoneMatched << " no benchmark matched --benchmark_filter.\n"
      << "Only a complete run writes a results file; every other outcome writes nothing.\n"
      << "A configuration larger than the device's free memory is skipped with the bytes it needs and the bytes free.\n\n"
      << "Google Benchmark's flags (--benchmark_out is the harness's own):\n";
}

}  // namespace schedlab::harness
