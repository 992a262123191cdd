// The prefill benchmark shapes, as data: the axes a prefill benchmark takes on the command
// line (--schedlab_axes, syntax in common/harness/axes.hpp) and the shapes of each tier.
// Host-only, so the host tests check the tables and the errors.
//
// The default setting is the FlashAttention-3 paper's: 16k tokens in total and hidden 2048,
// so batch = 16384 / q_len and q_heads = 2048 / head_dim (16 at head dim 128, 32 at 64).
// Axes (default in brackets): dtype [bf16], head_dim [128], causal [0], seq [8192: sets
// q_len and kv_len], q_len and kv_len [each the other's when one is given], window [0: none],
// batch [FA3], q_heads [FA3], kv_heads [q_heads], lengths [none: every sequence has seq
// tokens]. `lengths` (the decode family's syntax, common/harness/axes.hpp) gives a ragged batch,
// queries and keys alike per sequence; it sets batch and seq, so it takes neither.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "common/harness/axes.hpp"
#include "common/problem.hpp"

namespace schedlab::kernels {

// A prefill shape is the whole problem (every axis is one of its fields) and, for a ragged
// batch, the `lengths` value that drew it, which names it.
struct PrefillShape : PrefillProblem {
  std::string lengths_spec;
};

inline constexpr int kFa3TotalTokens = 16384, kFa3Hidden = 2048;
inline int fa3_batch(int q_len) { return std::max(1, kFa3TotalTokens / q_len); }
inline int fa3_heads(int head_dim) { return kFa3Hidden / head_dim; }

inline const harness::FamilyAxes& prefill_axes() {
  // Declaration order is the cross product's nesting, the first outermost.
  static const harness::FamilyAxes axes{
      "prefill",
      {{"dtype", "bf16", "Q/K/V dtype: bf16, f16, fp8 (OCP e4m3 with per-head scales; O in bf16)"},
       {"head_dim", "128", "head dimension"},
       {"causal", "0", "0 or 1, bottom-right aligned"},
       {"seq", "8192", "q_len = kv_len"},
       {"q_len", "", "query length"},
       {"kv_len", "", "key length"},
       {"window", "0", "sliding window, 0 for none"},
       {"batch", "", "default 16384 / q_len"},
       {"q_heads", "", "default 2048 / head_dim"},
       {"kv_heads", "", "default q_heads"},
       {"lengths", "", "ragged batch: 1000+8192, 4x1024+1x32768, lognormal:B:MEDIAN:SIGMA:MIN-MAX+2x32768"}}};
  return axes;
}

// Per tier: quick is the headline (head dim 128, 8k, causal and not); default keeps both
// head dims, both masks, and the short and long ends of the FA3 sweep; full is the sweep.
inline const harness::TierAxes& prefill_tiers() {
  static const harness::TierAxes tiers{
      .quick = {"head_dim=128;causal=0,1;seq=8192"},
      .standard = {"head_dim=128,64;causal=0,1;seq=512,8192"},
      .full = {"head_dim=128,64;causal=0,1;seq=512,1024,2048,4096,8192,16384"},
  };
  return tiers;
}

// The tiers above plus fp8 e4m3 at head dim 128, seq 8192, non-causal (FA3 batch and heads:
// 2 x 16): the fp8 forward setting of the K/V register-tile experiments. Its bf16 twin (the
// same shape in bf16) is in every tier already, so one run gives the fp8 / bf16 ratio.
inline const harness::TierAxes& prefill_tiers_with_fp8() {
  static const harness::TierAxes tiers = [] {
    const std::string fp8 = "dtype=fp8;head_dim=128;causal=0;seq=8192";
    harness::TierAxes t = prefill_tiers();
    for (auto* tier : {&t.quick, &t.standard, &t.full}) tier->push_back(fp8);
    return t;
  }();
  return tiers;
}

// One point of the axes as a shape; throws for a combination that forms no valid problem.
inline PrefillShape prefill_shape_at(const harness::AxisPoint& at) {
  if (at.given("seq") && (at.given("q_len") || at.given("kv_len")))
    throw harness::AxesError("seq sets both q_len and kv_len; give seq or q_len/kv_len");
  if (at.given("lengths")) {
    for (const char* axis : {"seq", "q_len", "kv_len", "batch"})
      if (at.given(axis))
        throw harness::AxesError(std::string("lengths sets the batch and every sequence's length; it takes no ") + axis);
    const int head_dim = at.integer("head_dim", 1);
    const int q_heads = at.has("q_heads") ? at.integer("q_heads", 1) : fa3_heads(head_dim);
    PrefillShape p{make_ragged_prefill(harness::parse_lengths(at.text("lengths")), q_heads,
                                       at.has("kv_heads") ? at.integer("kv_heads", 1) : q_heads, head_dim,
                                       at.flag("causal"), at.dtype("dtype")),
                   at.text("lengths")};
    p.window = at.integer("window", 0);
    p.validate();
    return p;
  }
  PrefillShape p;
  p.dtype = at.dtype("dtype");
  p.head_dim = at.integer("head_dim", 1);
  p.causal = at.flag("causal");
  p.window = at.integer("window", 0);
  if (at.has("q_len") || at.has("kv_len")) {
    p.q_len = at.integer(at.has("q_len") ? "q_len" : "kv_len", 1);
    p.kv_len = at.integer(at.has("kv_len") ? "kv_len" : "q_len", 1);
  } else {
    p.q_len = p.kv_len = at.integer("seq", 1);
  }
  p.batch = at.has("batch") ? at.integer("batch", 1) : fa3_batch(p.q_len);
  if (p.batch > harness::kMaxBatch)
    throw harness::AxesError("batch " + std::to_string(p.batch) + " is above " + std::to_string(harness::kMaxBatch));
  p.q_heads = at.has("q_heads") ? at.integer("q_heads", 1) : fa3_heads(p.head_dim);
  p.kv_heads = at.has("kv_heads") ? at.integer("kv_heads", 1) : p.q_heads;
  p.validate();  // InvalidProblem names the field
  return p;
}

inline std::vector<PrefillShape> prefill_shapes(const harness::ShapeSelection& selection,
                                                const harness::TierAxes& tiers = prefill_tiers()) {
  return harness::select_shapes(selection, prefill_axes(), tiers, prefill_shape_at);
}

// The shape's part of a benchmark name: "bf16/seq:8192/head_dim:128/causal:0" (q_len and
// kv_len when they differ), then any axis off its FA3 default ("/window:256", "/batch:4").
// A ragged batch names its lengths (the `lengths` value as given) instead of seq and batch.
inline std::string prefill_shape_name(const PrefillShape& p) {
  std::string name(dtype_name(p.dtype));
  if (p.ragged()) name += "/lengths:" + p.lengths_spec;
  else if (p.q_len == p.kv_len) name += "/seq:" + std::to_string(p.q_len);
  else name += "/q_len:" + std::to_string(p.q_len) + "/kv_len:" + std::to_string(p.kv_len);
  name += "/head_dim:" + std::to_string(p.head_dim) + "/causal:" + std::to_string(int(p.causal));
  if (p.window != kNoWindow) name += "/window:" + std::to_string(p.window);
  if (!p.ragged() && p.batch != fa3_batch(p.q_len)) name += "/batch:" + std::to_string(p.batch);
  if (p.q_heads != fa3_heads(p.head_dim)) name += "/q_heads:" + std::to_string(p.q_heads);
  if (p.kv_heads != p.q_heads) name += "/kv_heads:" + std::to_string(p.kv_heads);
  return name;
}

}  // namespace schedlab::kernels
