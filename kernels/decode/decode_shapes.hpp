// The decode benchmark shapes, as data: the axes a decode benchmark takes on the command line
// (--schedlab_axes, syntax in common/harness/axes.hpp) and the shapes of each tier. Host-only,
// so the host tests check the tables and the errors.
//
// Axes (default in brackets): kv_dtype [bf16], batch [16], context [16384], page_size [16],
// q_heads [32], kv_heads [8], head_dim [128], window [0: none], lengths [none: every
// sequence has `context` keys]. `lengths` gives a ragged batch and sets both batch and
// context, so it cannot be combined with either.
#pragma once
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "common/harness/axes.hpp"
#include "common/problem.hpp"

namespace schedlab::kernels {

struct DecodeShape {
  DType kv_dtype = DType::bf16;
  int batch = 16, page_size = 16, q_heads = 32, kv_heads = 8, head_dim = 128, window = kNoWindow;
  std::vector<int> context_lens;  // one per sequence
  std::string lengths;            // the `lengths` value as given (the ragged batch's name); empty: uniform
};

inline const harness::FamilyAxes& decode_axes() {
  // Declaration order is the cross product's nesting, the first outermost.
  static const harness::FamilyAxes axes{
      "decode",
      {{"kv_dtype", "bf16", "K/V cache dtype: bf16, f16, fp8_e4m3"},
       {"batch", "16", "sequences"},
       {"context", "16384", "keys per sequence"},
       {"page_size", "16", "keys per page"},
       {"q_heads", "32", "query heads"},
       {"kv_heads", "8", "K/V heads"},
       {"head_dim", "128", "head dimension"},
       {"window", "0", "sliding window, 0 for none"},
       {"lengths", "", "ragged batch: 1+65536+300, 4x1024+1x65536, uniform:B:MIN-MAX, one_long:B:LONG:MIN-MAX"}}};
  return axes;
}

// Per tier: quick is the headline shapes (bf16 and fp8 at batch 16, context 16k; bf16 at
// batch 1, context 64k). Default answers each decode experiment's question with six: the
// headline three, batch 1 at 1k (where one or two buffers and the tile schedules differ
// most), fp8 at batch 64 and 4k (where the schedules and buffer counts part for fp8), and
// page 64. Full is the whole grid (25 shapes).
inline const harness::TierAxes& decode_tiers() {
  static const harness::TierAxes tiers{
      .quick = {"kv_dtype=bf16,fp8_e4m3;batch=16;context=16384", "kv_dtype=bf16;batch=1;context=65536"},
      .standard = {"kv_dtype=bf16;batch=1;context=1024,65536", "kv_dtype=bf16,fp8_e4m3;batch=16;context=16384",
                   "kv_dtype=fp8_e4m3;batch=64;context=4096", "kv_dtype=bf16;batch=16;context=16384;page_size=64"},
      .full = {"kv_dtype=bf16,fp8_e4m3;batch=1,16,64;context=1024,4096,16384,65536",
               "kv_dtype=bf16;batch=16;context=16384;page_size=64"},
  };
  return tiers;
}

// The ragged batches of decode_work_partition and decode_partial_merge, only there (the other
// decode experiments keep the tiers above). Each ragged batch sits beside a uniform batch of the same heads and total
// keys (or one key fewer, where the total does not divide), so the bandwidth a ragged batch
// reaches can be read against the uniform one from a single run:
//   31x1024+1x51200 (one long among short, 82944 keys) beside batch 32 x 2592;
//   1+16+...+65536 at page 32 (lengths 1 to 65536, 125201 keys) beside batch 8 x 15650 at page 32;
//   16x128+8x512+4x2048+2x8192+1x32768 (geometric, long-tailed, 63488 keys) beside batch 31 x 2048;
//   8x2048 (uniform, given as a list).
// GQA groups above 16 (one CTA of several row tiles, DecodePolicy::RowTiles::kMaxRowTiles), each beside a
// GQA 32/8 batch of the same KV bytes (keys x KV heads), so their bandwidth reads against the
// 32/8 one from the same run:
//   MQA 64/1, batch 128 x 16384, beside the 32/8 headline (batch 16 x 16384);
//   group 32 (64/2) on the one-long batch, beside its uniform twin 64/2 batch 32 x 2592 and the
//   32/8 batch 8 x 2592.
// One key a page (a radix cache's layout, what SGLang and FlashInfer serve): the headline and
// the one-long batch with its twin again at page 1, where each tile's rows are gathered from
// 16 pages.
// Quick: the headline bf16 shape (at pages 16 and 1), the one-long batch with its twin, and MQA.
// Default: both KV dtypes of the headline at pages 16 and 1, the one-long and the 1-to-65536
// batches and their twins, the one-long batch and its twin at page 1 in bf16, MQA in both, and
// the group-32 batch with its twins in bf16 (19 configurations). Full: adds the geometric
// batch, its twin, the uniform list, the group-32 batches and the page-1 one-long batch in fp8.
inline const harness::TierAxes& decode_ragged_tiers() {
  static const std::string one_long = "lengths=31x1024+1x51200", one_long_twin = "batch=32;context=2592";
  static const std::string span = "lengths=1+16+256+2048+8192+16384+32768+65536;page_size=32",
                           span_twin = "batch=8;context=15650;page_size=32";
  static const std::string geometric = "lengths=16x128+8x512+4x2048+2x8192+1x32768", geometric_twin = "batch=31;context=2048";
  static const std::string mqa = "q_heads=64;kv_heads=1;batch=128;context=16384";
  static const std::string group32 = "q_heads=64;kv_heads=2;";
  static const std::string group32_gqa_twin = "batch=8;context=2592";  // 20736 keys x 8 KV heads
  static const std::string both = "kv_dtype=bf16,fp8_e4m3;", bf16 = "kv_dtype=bf16;", page1 = ";page_size=1";
  static const std::string headline = "batch=16;context=16384";
  static const harness::TierAxes tiers{
      .quick = {bf16 + headline, bf16 + headline + page1, bf16 + one_long, bf16 + one_long_twin, bf16 + mqa},
      .standard = {both + headline, both + headline + page1, both + one_long, both + one_long_twin, both + span,
                   both + span_twin, bf16 + one_long + page1, bf16 + one_long_twin + page1, both + mqa,
                   bf16 + group32 + one_long, bf16 + group32 + one_long_twin, bf16 + group32_gqa_twin},
      .full = {both + headline, both + headline + page1, both + one_long, both + one_long_twin, both + span,
               both + span_twin, both + one_long + page1, both + one_long_twin + page1, both + geometric,
               both + geometric_twin, both + "lengths=8x2048", both + mqa, both + group32 + one_long,
               both + group32 + one_long_twin, both + group32_gqa_twin},
  };
  return tiers;
}

// GQA groups above 16 (decode_row_tile_body), each beside a GQA 32/8 batch of the same KV bytes,
// as in decode_ragged_tiers: MQA 64/1 batch 128 x 16384 beside the 32/8 headline; group 32
// (64/2) on the one-long batch and its uniform twin, beside the 32/8 batch 8 x 2592.
// Quick: MQA and its twin in bf16. Default: both KV dtypes of MQA and its twin, the group-32
// batches in bf16. Full: the group-32 batches in both.
inline const harness::TierAxes& decode_group_tiers() {
  static const std::string mqa = "q_heads=64;kv_heads=1;batch=128;context=16384", mqa_twin = "batch=16;context=16384";
  static const std::string group32 = "q_heads=64;kv_heads=2;";
  static const std::string one_long = "lengths=31x1024+1x51200", one_long_twin = "batch=32;context=2592";
  static const std::string group32_gqa_twin = "batch=8;context=2592";
  static const std::string both = "kv_dtype=bf16,fp8_e4m3;", bf16 = "kv_dtype=bf16;";
  static const harness::TierAxes tiers{
      .quick = {bf16 + mqa, bf16 + mqa_twin},
      .standard = {both + mqa, both + mqa_twin, bf16 + group32 + one_long, bf16 + group32 + one_long_twin,
                   bf16 + group32_gqa_twin},
      .full = {both + mqa, both + mqa_twin, both + group32 + one_long, both + group32 + one_long_twin,
               both + group32_gqa_twin},
  };
  return tiers;
}

// A problem for the shape: the block table a random permutation of the pool's pages.
inline DecodeProblem decode_problem_for(const DecodeShape& s, std::uint64_t seed = 1) {
  return make_decode_problem(s.batch, s.q_heads, s.kv_heads, s.head_dim, s.page_size, s.context_lens, s.kv_dtype, seed,
                             0, s.window);
}

// One point of the axes as a shape; throws for a combination that forms no valid problem.
inline DecodeShape decode_shape_at(const harness::AxisPoint& at) {
  constexpr std::int64_t kMaxTotalKeys = std::int64_t(1) << 30;  // far past any device's memory
  DecodeShape s;
  s.kv_dtype = at.dtype("kv_dtype");
  s.page_size = at.integer("page_size", 1);
  s.q_heads = at.integer("q_heads", 1);
  s.kv_heads = at.integer("kv_heads", 1);
  s.head_dim = at.integer("head_dim", 1);
  s.window = at.integer("window", 0);
  if (at.given("lengths")) {
    if (at.given("batch") || at.given("context"))
      throw harness::AxesError("lengths sets the batch and every sequence's context; give lengths or batch/context");
    s.lengths = at.text("lengths");
    s.context_lens = harness::parse_lengths(s.lengths);
    s.batch = static_cast<int>(s.context_lens.size());
  } else {
    s.batch = at.integer("batch", 1);
    if (s.batch > harness::kMaxBatch)
      throw harness::AxesError("batch " + std::to_string(s.batch) + " is above " + std::to_string(harness::kMaxBatch));
    s.context_lens.assign(s.batch, at.integer("context", 1));
  }
  const std::int64_t keys = std::accumulate(s.context_lens.begin(), s.context_lens.end(), std::int64_t(0));
  if (keys > kMaxTotalKeys)
    throw harness::AxesError(std::to_string(keys) + " keys in the batch, more than " + std::to_string(kMaxTotalKeys));
  decode_problem_for(s).validate();  // InvalidProblem names the field
  return s;
}

inline std::vector<DecodeShape> decode_shapes(const harness::ShapeSelection& selection,
                                              const harness::TierAxes& tiers = decode_tiers()) {
  return harness::select_shapes(selection, decode_axes(), tiers, decode_shape_at);
}

// The shape's part of a benchmark name: "bf16/batch:16/context:16384/page:16", then any axis
// off its default ("/q_heads:40"); a ragged batch names its lengths instead of a context.
inline std::string decode_shape_name(const DecodeShape& s) {
  std::string name = std::string(dtype_name(s.kv_dtype)) + "/batch:" + std::to_string(s.batch);
  name += s.lengths.empty() ? "/context:" + std::to_string(s.context_lens.at(0)) : "/lengths:" + s.lengths;
  name += "/page:" + std::to_string(s.page_size);
  const DecodeShape defaults;
  if (s.q_heads != defaults.q_heads) name += "/q_heads:" + std::to_string(s.q_heads);
  if (s.kv_heads != defaults.kv_heads) name += "/kv_heads:" + std::to_string(s.kv_heads);
  if (s.head_dim != defaults.head_dim) name += "/head_dim:" + std::to_string(s.head_dim);
  if (s.window != defaults.window) name += "/window:" + std::to_string(s.window);
  return name;
}

}  // namespace schedlab::kernels
