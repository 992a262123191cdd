#include "common/harness/axes.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace schedlab::harness {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0;;) {
    const std::size_t next = s.find(sep, at);
    out.push_back(s.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
    if (next == std::string_view::npos) return out;
    at = next + 1;
  }
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// splitmix64 (Steele, Lea, Flood 2014): a fixed sequence on every platform, unlike the
// standard library's distributions, so a named length distribution means the same lengths
// everywhere.
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int in(int lo, int hi) { return lo + static_cast<int>(next() % std::uint64_t(hi - lo + 1)); }
};
constexpr std::uint64_t kLengthsSeed = 1;
void check_batch(std::string_view spec, std::size_t sequences) {
  if (sequences > std::size_t(kMaxBatch))
    throw AxesError("lengths " + quoted(spec) + ": " + std::to_string(sequences) + " sequences, more than " +
                    std::to_string(kMaxBatch));
}

// "MIN-MAX" of a named distribution.
std::pair<int, int> parse_range(std::string_view spec, std::string_view text) {
  const auto parts = split(text, '-');
  if (parts.size() != 2)
    throw AxesError("lengths " + quoted(spec) + ": expected a range MIN-MAX, got " + quoted(text));
  const int lo = parse_int("lengths", parts[0], 1), hi = parse_int("lengths", parts[1], 1);
  if (lo > hi) throw AxesError("lengths " + quoted(spec) + ": range " + quoted(text) + " has MIN > MAX");
  return {lo, hi};
}

}  // namespace

Tier parse_tier(std::string_view name) {
  for (Tier t : {Tier::quick, Tier::standard, Tier::full})
    if (name == tier_name(t)) return t;
  throw AxesError("unknown tier " + quoted(name) + " (expected quick, default or full)");
}

std::string_view tier_name(Tier tier) {
  switch (tier) {
    case Tier::quick: return "quick";
    case Tier::standard: return "default";
    case Tier::full: return "full";
  }
  return "?";
}

const std::vector<std::string>& TierAxes::of(Tier tier) const {
  switch (tier) {
    case Tier::quick: return quick;
    case Tier::full: return full;
    case Tier::standard: break;
  }
  return standard;
}

std::vector<AxisValues> parse_axes(std::string_view text) {
  std::vector<AxisValues> out;
  for (std::string_view item : split(text, ';')) {
    item = trim(item);
    if (item.empty()) continue;  // "a=1;" or "a=1;;b=2"
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw AxesError("expected name=value[,value...], got " + quoted(item));
    AxisValues axis{std::string(trim(item.substr(0, eq))), {}};
    if (axis.name.empty()) throw AxesError("missing axis name in " + quoted(item));
    for (const auto& [other, values] : out)
      if (other == axis.name) throw AxesError("axis " + quoted(axis.name) + " given twice");
    for (std::string_view v : split(item.substr(eq + 1), ',')) {
      v = trim(v);
      if (v.empty()) throw AxesError("axis " + quoted(axis.name) + ": empty value in " + quoted(item));
      if (std::find(axis.values.begin(), axis.values.end(), v) != axis.values.end())
        throw AxesError("axis " + quoted(axis.name) + ": value " + quoted(v) + " given twice");
      axis.values.emplace_back(v);
    }
    out.push_back(std::move(axis));
  }
  if (out.empty()) throw AxesError("no axes in " + quoted(text));
  return out;
}

void AxisPoint::set(const std::string& axis, std::string value, bool given) {
  values_.emplace_back(axis, std::move(value));
  if (given) given_.push_back(axis);
}

bool AxisPoint::given(std::string_view axis) const {
  return std::find(given_.begin(), given_.end(), axis) != given_.end();
}

bool AxisPoint::has(std::string_view axis) const {
  return std::any_of(values_.begin(), values_.end(), [&](const auto& kv) { return kv.first == axis; });
}

const std::string& AxisPoint::text(std::string_view axis) const {
  for (const auto& [name, value] : values_)
    if (name == axis) return value;
  throw AxesError("axis " + quoted(axis) + " has no value");
}

int AxisPoint::integer(std::string_view axis, int min_value) const { return parse_int(axis, text(axis), min_value); }

bool AxisPoint::flag(std::string_view axis) const {
  const std::string& v = text(axis);
  if (v == "0") return false;
  if (v == "1") return true;
  throw AxesError("axis " + quoted(axis) + ": " + quoted(v) + " is not 0 or 1");
}

DType AxisPoint::dtype(std::string_view axis) const {
  try {
    return parse_dtype(text(axis));
  } catch (const AxesError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw AxesError("axis " + quoted(axis) + ": " + e.what());
  }
}

std::string AxisPoint::describe() const {
  std::string out;
  for (const auto& [name, value] : values_) {
    if (!given(name)) continue;
    if (!out.empty()) out += ";";
    out += name + "=" + value;
  }
  return out.empty() ? "(all defaults)" : out;
}

std::vector<AxisPoint> expand_axes(std::string_view text, const FamilyAxes& family) {
  const std::vector<AxisValues> given = parse_axes(text);
  for (const AxisValues& axis : given) {
    const bool known = std::any_of(family.axes.begin(), family.axes.end(),
                                   [&](const AxisDecl& d) { return d.name == axis.name; });
    if (!known) {
      std::string names;
      for (const AxisDecl& d : family.axes) names += (names.empty() ? "" : ", ") + d.name + " (" + d.meaning + ")";
      throw AxesError("unknown axis " + quoted(axis.name) + " for the " + family.family + " family; its axes are " +
                      names);
    }
  }
  std::vector<AxisPoint> points(1);
  for (const AxisDecl& decl : family.axes) {
    const auto it = std::find_if(given.begin(), given.end(), [&](const AxisValues& a) { return a.name == decl.name; });
    if (it == given.end()) {
      if (!decl.fallback.empty())
        for (AxisPoint& p : points) p.set(decl.name, decl.fallback, false);
      continue;
    }
    std::vector<AxisPoint> next;
    next.reserve(points.size() * it->values.size());
    for (const AxisPoint& p : points) {
      for (const std::string& v : it->values) {
        next.push_back(p);
        next.back().set(decl.name, v, true);
      }
    }
    points = std::move(next);
  }
  return points;
}

int parse_int(std::string_view axis, std::string_view text, int min_value) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  const bool digits_only = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits_only || ec != std::errc() || end != text.data() + text.size())
    throw AxesError("axis " + quoted(axis) + ": " + quoted(text) + " is not a whole number" +
                    (ec == std::errc::result_out_of_range ? " that fits in an int" : ""));
  if (value < min_value)
    throw AxesError("axis " + quoted(axis) + ": " + quoted(text) + " is below " + std::to_string(min_value));
  return value;
}

namespace {

// SIGMA of a lognormal distribution: a decimal number in (0, 10].
double parse_sigma(std::string_view spec, std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !(value > 0 && value <= 10))
    throw AxesError("lengths " + quoted(spec) + ": SIGMA " + quoted(text) + " is not a number in (0, 10]");
  return value;
}

// One named distribution of a `lengths` value (uniform, one_long, lognormal), appended to out.
void draw_lengths(std::string_view spec, std::string_view item, std::vector<int>& out) {
  const auto fields = split(item, ':');
  const std::string_view kind = fields[0];
  const std::size_t want = kind == "uniform" ? 3 : kind == "one_long" ? 4 : kind == "lognormal" ? 5 : 0;
  if (want == 0)
    throw AxesError("lengths " + quoted(spec) + ": unknown distribution " + quoted(kind) +
                    " (expected uniform:BATCH:MIN-MAX, one_long:BATCH:LONG:MIN-MAX, "
                    "lognormal:BATCH:MEDIAN:SIGMA:MIN-MAX, or lengths joined by '+')");
  if (fields.size() != want)
    throw AxesError("lengths " + quoted(spec) + ": expected " +
                    (kind == "uniform"    ? "uniform:BATCH:MIN-MAX"
                     : kind == "one_long" ? "one_long:BATCH:LONG:MIN-MAX"
                                          : "lognormal:BATCH:MEDIAN:SIGMA:MIN-MAX"));
  const int batch = parse_int("lengths", fields[1], 1);
  check_batch(spec, out.size() + std::size_t(batch));
  const auto [lo, hi] = parse_range(spec, fields.back());
  SplitMix64 gen{kLengthsSeed};
  if (kind == "lognormal") {
    const double median = parse_int("lengths", fields[2], 1), sigma = parse_sigma(spec, fields[3]);
    constexpr double kTwoPi = 6.283185307179586, kUnit = 0x1.0p-53;
    for (int i = 0; i < batch; ++i) {
      // Box-Muller on two 53-bit uniforms, u1 in (0, 1]; rounded half up, then clamped
      // (analysis/schedlab_analysis/lengths.py draws the same).
      const double u1 = double((gen.next() >> 11) + 1) * kUnit, u2 = double(gen.next() >> 11) * kUnit;
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
      const double len = std::floor(median * std::exp(sigma * z) + 0.5);
      out.push_back(static_cast<int>(std::clamp(len, double(lo), double(hi))));
    }
    return;
  }
  const std::size_t end = out.size() + std::size_t(batch);
  if (kind == "one_long") out.push_back(parse_int("lengths", fields[2], 1));
  while (out.size() < end) out.push_back(gen.in(lo, hi));
}

}  // namespace

std::vector<int> parse_lengths(std::string_view spec) {
  std::vector<int> out;
  for (std::string_view item : split(spec, '+')) {
    if (item.find(':') != std::string_view::npos) {
      draw_lengths(spec, item, out);
      continue;
    }
    if (!item.empty() && std::isalpha(static_cast<unsigned char>(item.front())))
      draw_lengths(spec, item, out);  // a distribution's name without its fields: the error that lists them
    const std::size_t x = item.find('x');
    const int count = x == std::string_view::npos ? 1 : parse_int("lengths", item.substr(0, x), 1);
    const int length = parse_int("lengths", x == std::string_view::npos ? item : item.substr(x + 1), 1);
    check_batch(spec, out.size() + std::size_t(count));
    out.insert(out.end(), count, length);
  }
  return out;
}

}  // namespace schedlab::harness
