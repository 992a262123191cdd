// Which shapes a benchmark binary registers, as data. A kernel family names its axes
// (decode: batch, context, page_size, ...; prefill: seq, head_dim, causal, ...) and lists,
// per tier, the shapes it runs in the same syntax a user types on the command line:
//
//   --schedlab_axes='batch=4;q_heads=40;kv_heads=8;context=777,3000;page_size=32'
//
// `name=v1,v2,...` gives an axis its values and `;` separates axes. The shapes are the cross
// product, in the family's axis order with the first axis outermost; an axis not named takes
// the family's default. A tier is a list of such strings and its shapes the union of their
// cross products, so the tier tables and the user's shapes go through one parser.
//
// Ragged sequence lengths (the decode family's `lengths` axis), one value being one batch:
//   1+65536+300              the lengths themselves, one per sequence
//   4x1024+1x65536           COUNTxLENGTH repeats a length (mixable with single lengths)
//   uniform:B:MIN-MAX        B lengths drawn uniformly from [MIN, MAX]
//   one_long:B:LONG:MIN-MAX  one sequence of LONG first, then B-1 drawn from [MIN, MAX]
//   lognormal:B:MEDIAN:SIGMA:MIN-MAX  B lengths MEDIAN * exp(SIGMA * z), z standard normal,
//                            clamped to [MIN, MAX] (a serving batch's prompt lengths)
// Lengths and distributions join with '+': lognormal:30:1536:0.5:256-8192+2x32768.
// The draws use a fixed seed: one spec gives the same lengths in every run.
//
// Errors (an unknown axis, a malformed value, a combination the family cannot form) are
// AxesError, naming the axis, the value and, for the user's string, the shape at fault.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/dtype.hpp"

namespace schedlab::harness {

class AxesError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// How much of a family's shape set a run registers: the headline shapes only (quick), a short
// set that still answers every experiment's question (standard, the default), or all (full).
enum class Tier { quick, standard, full };
Tier parse_tier(std::string_view name);  // "quick", "default" or "full"; else AxesError
std::string_view tier_name(Tier tier);   // as parse_tier reads it

// What a run asked for: --schedlab_tier, and --schedlab_axes (when not empty, its cross
// product replaces the tier's shapes).
struct ShapeSelection {
  Tier tier = Tier::standard;
  std::string axes;
  bool from_axes() const { return !axes.empty(); }
};

// Syntax only: "a=1,2;b=x" -> {{"a", {"1", "2"}}, {"b", {"x"}}}, in the order given.
struct AxisValues {
  std::string name;
  std::vector<std::string> values;
};
std::vector<AxisValues> parse_axes(std::string_view text);

// One axis of a family: its name, the value it takes when not given (empty: none, the family
// derives it from other axes), and what it means (listed when a name is unknown).
struct AxisDecl {
  std::string name, fallback, meaning;
};
struct FamilyAxes {
  std::string family;  // for messages: "decode", "prefill"
  std::vector<AxisDecl> axes;
};

// One point of the cross product: a value for every axis given or with a fallback.
class AxisPoint {
 public:
  void set(const std::string& axis, std::string value, bool given);
  bool given(std::string_view axis) const;  // named in the axes string
  bool has(std::string_view axis) const;    // given, or defaulted by a fallback
  const std::string& text(std::string_view axis) const;  // AxesError if !has(axis)
  int integer(std::string_view axis, int min_value) const;
  bool flag(std::string_view axis) const;  // 0 / 1
  DType dtype(std::string_view axis) const;
  std::string describe() const;  // the given axes, "batch=4;context=777"

 private:
  std::vector<std::pair<std::string, std::string>> values_;
  std::vector<std::string> given_;
};

// Parses `text` against the family's axes and returns the cross product.
std::vector<AxisPoint> expand_axes(std::string_view text, const FamilyAxes& family);

// More sequences than any batch the harness is meant for: a typo, not a batch.
inline constexpr int kMaxBatch = 1 << 16;

// Whole numbers as the axes spell them (decimal digits only), at least min_value.
int parse_int(std::string_view axis, std::string_view text, int min_value);
// One value of the `lengths` axis (syntax above): the sequence lengths of one batch.
std::vector<int> parse_lengths(std::string_view spec);

// A family's shapes per tier, each an axes string as above.
struct TierAxes {
  std::vector<std::string> quick, standard, full;
  const std::vector<std::string>& of(Tier tier) const;
};

// The shapes a selection registers: the --schedlab_axes cross product if one was given, else
// the tier's. `make(point)` forms one shape and throws std::invalid_argument (AxesError,
// InvalidProblem) for a combination it cannot form; that error comes back as an AxesError
// naming the source and the shape.
template <class Make>
auto select_shapes(const ShapeSelection& selection, const FamilyAxes& family, const TierAxes& tiers, Make make)
    -> std::vector<decltype(make(std::declval<const AxisPoint&>()))> {
  std::vector<decltype(make(std::declval<const AxisPoint&>()))> shapes;
  auto expand = [&](std::string_view text, const std::string& source) {
    std::vector<AxisPoint> points;
    try {
      points = expand_axes(text, family);
    } catch (const AxesError& e) {
      throw AxesError(source + ": " + e.what());
    }
    for (const AxisPoint& point : points) {
      try {
        shapes.push_back(make(point));
      } catch (const std::invalid_argument& e) {
        throw AxesError(source + ": " + family.family + " shape " + point.describe() + ": " + e.what());
      }
    }
  };
  if (selection.from_axes()) {
    expand(selection.axes, "--schedlab_axes");
  } else {
    for (const std::string& text : tiers.of(selection.tier))
      expand(text, "tier " + std::string(tier_name(selection.tier)) + " shapes '" + text + "'");
  }
  return shapes;
}

}  // namespace schedlab::harness
