// The benchmark axes: the parser, the tiers' shape tables of the decode and prefill families,
// and the errors a user gets for an unknown axis, a malformed value or an impossible shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "common/harness/axes.hpp"
#include "kernels/decode/decode_shapes.hpp"
#include "kernels/prefill/prefill_shapes.hpp"

namespace schedlab::harness {
namespace {

using kernels::DecodeShape;
using kernels::PrefillShape;

// The message of the AxesError `f` throws; fails the test if it throws nothing or another type.
template <class F>
std::string axes_error(F f) {
  try {
    f();
  } catch (const AxesError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an AxesError: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no error";
  return {};
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

ShapeSelection axes(std::string text) { return ShapeSelection{Tier::standard, std::move(text)}; }
ShapeSelection tier(Tier t) { return ShapeSelection{t, {}}; }

TEST(ParseAxes, NamesValuesAndOrder) {
  const auto a = parse_axes(" batch = 4 ; context=777, 3000;kv_dtype=fp8_e4m3;");
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].name, "batch");
  EXPECT_EQ(a[0].values, std::vector<std::string>{"4"});
  EXPECT_EQ(a[1].name, "context");
  EXPECT_EQ(a[1].values, (std::vector<std::string>{"777", "3000"}));
  EXPECT_EQ(a[2].values, std::vector<std::string>{"fp8_e4m3"});
}

TEST(ParseAxes, MalformedStringsNameTheirFault) {
  EXPECT_CONTAINS(axes_error([] { parse_axes("batch"); }), "expected name=value");
  EXPECT_CONTAINS(axes_error([] { parse_axes("=4"); }), "missing axis name");
  EXPECT_CONTAINS(axes_error([] { parse_axes("context=1,,2"); }), "empty value");
  EXPECT_CONTAINS(axes_error([] { parse_axes("context="); }), "empty value");
  EXPECT_CONTAINS(axes_error([] { parse_axes("batch=1;batch=2"); }), "'batch' given twice");
  EXPECT_CONTAINS(axes_error([] { parse_axes("context=5,5"); }), "value '5' given twice");
  EXPECT_CONTAINS(axes_error([] { parse_axes(";;"); }), "no axes");
}

TEST(ParseInt, DigitsOnlyAndInRange) {
  EXPECT_EQ(parse_int("batch", "64", 1), 64);
  EXPECT_EQ(parse_int("window", "0", 0), 0);
  for (const char* bad : {"", "4x", "-1", "+4", "1e3", "0x10", "4.0", " 4"})
    EXPECT_CONTAINS(axes_error([&] { parse_int("batch", bad, 1); }), "is not a whole number");
  EXPECT_CONTAINS(axes_error([] { parse_int("batch", "99999999999", 1); }), "fits in an int");
  EXPECT_CONTAINS(axes_error([] { parse_int("batch", "0", 1); }), "'batch': '0' is below 1");
}

TEST(Tiers, ParseTheirNames) {
  EXPECT_EQ(parse_tier("quick"), Tier::quick);
  EXPECT_EQ(parse_tier("default"), Tier::standard);
  EXPECT_EQ(parse_tier("full"), Tier::full);
  EXPECT_EQ(tier_name(Tier::standard), "default");
  EXPECT_CONTAINS(axes_error([] { parse_tier("fast"); }), "unknown tier 'fast'");
}

TEST(Lengths, ListsRepeatsAndNamedDistributions) {
  EXPECT_EQ(parse_lengths("1+65536+300"), (std::vector<int>{1, 65536, 300}));
  EXPECT_EQ(parse_lengths("3x7+1x9+2"), (std::vector<int>{7, 7, 7, 9, 2}));
  EXPECT_EQ(parse_lengths("4096"), std::vector<int>{4096});

  const auto u = parse_lengths("uniform:100:256-4096");
  ASSERT_EQ(u.size(), 100u);
  EXPECT_TRUE(std::all_of(u.begin(), u.end(), [](int n) { return n >= 256 && n <= 4096; }));
  EXPECT_GT(*std::max_element(u.begin(), u.end()) - *std::min_element(u.begin(), u.end()), 1000);
  EXPECT_EQ(u, parse_lengths("uniform:100:256-4096"));  // fixed seed: the same every time

  const auto o = parse_lengths("one_long:32:131072:256-4096");
  ASSERT_EQ(o.size(), 32u);
  EXPECT_EQ(o[0], 131072);
  EXPECT_TRUE(std::all_of(o.begin() + 1, o.end(), [](int n) { return n >= 256 && n <= 4096; }));
  EXPECT_EQ(parse_lengths("one_long:1:5000:1-2"), std::vector<int>{5000});
  EXPECT_EQ(parse_lengths("uniform:3:9-9"), (std::vector<int>{9, 9, 9}));
}

// The serving batch's draws, pinned: analysis/tests/test_lengths.py pins the same list for
// the Python twin that the peers read names with, so the two cannot drift apart.
TEST(Lengths, LognormalIsPinnedAndJoinsWithLists) {
  const auto l = parse_lengths("lognormal:8:1536:0.5:256-8192");
  EXPECT_EQ(l, (std::vector<int>{1514, 1371, 1617, 1193, 1906, 903, 829, 2117}));
  const auto many = parse_lengths("lognormal:2000:1536:0.5:256-8192");
  std::vector<int> sorted = many;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NEAR(sorted[1000], 1536, 100);  // the median
  EXPECT_EQ(parse_lengths("lognormal:4:1000:3:500-600").size(), 4u);
  for (int n : parse_lengths("lognormal:50:1000:3:500-600")) EXPECT_TRUE(n >= 500 && n <= 600) << n;  // clamped
  auto joined = parse_lengths("lognormal:8:1536:0.5:256-8192+2x32768");
  ASSERT_EQ(joined.size(), 10u);
  EXPECT_EQ(std::vector<int>(joined.begin(), joined.begin() + 8), l);
  EXPECT_EQ(joined[8], 32768);
  EXPECT_EQ(parse_lengths("7+uniform:3:9-9"), (std::vector<int>{7, 9, 9, 9}));
}

TEST(Lengths, MalformedSpecsNameTheirFault) {
  EXPECT_CONTAINS(axes_error([] { parse_lengths("zipf:4:1-9"); }), "unknown distribution 'zipf'");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("uniform:4"); }), "uniform:BATCH:MIN-MAX");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("one_long:4:100"); }), "one_long:BATCH:LONG:MIN-MAX");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("uniform:4:9-1"); }), "MIN > MAX");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("uniform:4:9"); }), "expected a range MIN-MAX");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("1+0+3"); }), "below 1");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("1++3"); }), "not a whole number");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("0x5"); }), "below 1");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("70000x1"); }), "more than 65536");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("lognormal:4:100:1-9"); }), "lognormal:BATCH:MEDIAN:SIGMA:MIN-MAX");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("lognormal:4:100:x:1-9"); }), "SIGMA 'x'");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("lognormal:4:100:0:1-9"); }), "not a number in (0, 10]");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("lognormal"); }), "lognormal:BATCH:MEDIAN:SIGMA:MIN-MAX");
  EXPECT_CONTAINS(axes_error([] { parse_lengths("60000x1+uniform:9000:1-2"); }), "more than 65536");
}

// The whole-grid tiers are the shape lists the benchmarks registered before tiers existed, in
// the same order.
TEST(DecodeShapes, FullTierIsTheWholeGrid) {
  std::vector<std::string> expected;
  for (const char* kv : {"bf16", "fp8_e4m3"})
    for (int batch : {1, 16, 64})
      for (int context : {1024, 4096, 16384, 65536})
        expected.push_back(std::string(kv) + "/batch:" + std::to_string(batch) + "/context:" + std::to_string(context) +
                           "/page:16");
  expected.push_back("bf16/batch:16/context:16384/page:64");
  std::vector<std::string> names;
  for (const DecodeShape& s : kernels::decode_shapes(tier(Tier::full))) names.push_back(kernels::decode_shape_name(s));
  EXPECT_EQ(names, expected);
}

TEST(DecodeShapes, QuickIsTheHeadlineAndDefaultSitsBetween) {
  std::vector<std::string> quick, standard, full;
  for (const auto& s : kernels::decode_shapes(tier(Tier::quick))) quick.push_back(kernels::decode_shape_name(s));
  for (const auto& s : kernels::decode_shapes(tier(Tier::standard))) standard.push_back(kernels::decode_shape_name(s));
  for (const auto& s : kernels::decode_shapes(tier(Tier::full))) full.push_back(kernels::decode_shape_name(s));
  EXPECT_EQ(quick, (std::vector<std::string>{"bf16/batch:16/context:16384/page:16",
                                             "fp8_e4m3/batch:16/context:16384/page:16",
                                             "bf16/batch:1/context:65536/page:16"}));
  for (const auto& q : quick) EXPECT_NE(std::find(standard.begin(), standard.end(), q), standard.end()) << q;
  for (const auto& d : standard) EXPECT_NE(std::find(full.begin(), full.end(), d), full.end()) << d;
  EXPECT_LT(standard.size(), full.size() / 2);
}

TEST(DecodeShapes, CrossProductOfTheGivenAxesWithDefaults) {
  const auto shapes =
      kernels::decode_shapes(axes("batch=4;q_heads=40;kv_heads=8;context=777,3000;page_size=32;kv_dtype=fp8_e4m3"));
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(kernels::decode_shape_name(shapes[0]), "fp8_e4m3/batch:4/context:777/page:32/q_heads:40");
  EXPECT_EQ(kernels::decode_shape_name(shapes[1]), "fp8_e4m3/batch:4/context:3000/page:32/q_heads:40");
  EXPECT_EQ(shapes[1].context_lens, std::vector<int>(4, 3000));
  EXPECT_EQ(shapes[1].head_dim, 128);
  const DecodeProblem p = kernels::decode_problem_for(shapes[1]);
  EXPECT_EQ(p.q_heads, 40);
  EXPECT_EQ(p.kv_heads, 8);
  EXPECT_EQ(p.page_size, 32);
  EXPECT_EQ(p.kv_dtype, DType::fp8_e4m3);

  const auto dflt = kernels::decode_shapes(axes("context=1024"));
  ASSERT_EQ(dflt.size(), 1u);
  EXPECT_EQ(kernels::decode_shape_name(dflt[0]), "bf16/batch:16/context:1024/page:16");
}

TEST(DecodeShapes, RaggedBatches) {
  const auto shapes = kernels::decode_shapes(axes("lengths=1+65536+300,one_long:32:131072:256-4096"));
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].context_lens, (std::vector<int>{1, 65536, 300}));
  EXPECT_EQ(shapes[0].batch, 3);
  EXPECT_EQ(kernels::decode_shape_name(shapes[0]), "bf16/batch:3/lengths:1+65536+300/page:16");
  EXPECT_EQ(shapes[1].batch, 32);
  EXPECT_EQ(kernels::decode_shape_name(shapes[1]), "bf16/batch:32/lengths:one_long:32:131072:256-4096/page:16");
  EXPECT_EQ(kernels::decode_problem_for(shapes[1]).context_lens.at(0), 131072);
}

TEST(DecodeShapes, ErrorsNameTheAxisAndTheShape) {
  const auto err = [](const char* text) { return axes_error([&] { kernels::decode_shapes(axes(text)); }); };
  std::string e = err("qheads=40");
  EXPECT_CONTAINS(e, "--schedlab_axes: unknown axis 'qheads' for the decode family");
  EXPECT_CONTAINS(e, "q_heads (query heads)");
  EXPECT_CONTAINS(err("batch=4x"), "axis 'batch': '4x' is not a whole number");
  EXPECT_CONTAINS(err("kv_dtype=fp9"), "axis 'kv_dtype': unknown dtype 'fp9'");
  e = err("q_heads=40;kv_heads=6,8");
  EXPECT_CONTAINS(e, "decode shape q_heads=40;kv_heads=6");
  EXPECT_CONTAINS(e, "invalid problem: q_heads");
  EXPECT_CONTAINS(err("lengths=1+2;batch=2"), "give lengths or batch/context");
  EXPECT_CONTAINS(err("lengths=1+2;context=2"), "give lengths or batch/context");
  EXPECT_CONTAINS(err("context=0"), "'context': '0' is below 1");
  EXPECT_CONTAINS(err("batch=100000"), "batch 100000 is above 65536");
  EXPECT_CONTAINS(err("batch=65536;context=65536"), "keys in the batch");
  EXPECT_CONTAINS(err("window=-1"), "not a whole number");
}

TEST(PrefillShapes, FullTierIsTheFa3Sweep) {
  std::vector<std::string> expected;
  for (int head_dim : {128, 64})
    for (int causal : {0, 1})
      for (int seq : {512, 1024, 2048, 4096, 8192, 16384})
        expected.push_back("bf16/seq:" + std::to_string(seq) + "/head_dim:" + std::to_string(head_dim) +
                           "/causal:" + std::to_string(causal));
  std::vector<std::string> names;
  for (const PrefillShape& s : kernels::prefill_shapes(tier(Tier::full))) {
    names.push_back(kernels::prefill_shape_name(s));
    EXPECT_EQ(s.batch * s.q_len, 16384);
    EXPECT_EQ(s.q_heads * s.head_dim, 2048);
    EXPECT_EQ(s.kv_heads, s.q_heads);
  }
  EXPECT_EQ(names, expected);
  const auto quick = kernels::prefill_shapes(tier(Tier::quick));
  ASSERT_EQ(quick.size(), 2u);
  EXPECT_EQ(kernels::prefill_shape_name(quick[0]), "bf16/seq:8192/head_dim:128/causal:0");
  EXPECT_EQ(kernels::prefill_shape_name(quick[1]), "bf16/seq:8192/head_dim:128/causal:1");
  EXPECT_LT(kernels::prefill_shapes(tier(Tier::standard)).size(), names.size() / 2);
}

// The fp8 setting of the K/V register-tile experiments: one more shape per tier, whose bf16
// twin (same shape) is in the tier already.
TEST(PrefillShapes, Fp8TiersAddTheFp8SettingBesideItsBf16Twin) {
  for (Tier t : {Tier::quick, Tier::standard, Tier::full}) {
    const auto plain = kernels::prefill_shapes(tier(t));
    const auto with_fp8 = kernels::prefill_shapes(tier(t), kernels::prefill_tiers_with_fp8());
    ASSERT_EQ(with_fp8.size(), plain.size() + 1);
    const PrefillShape& fp8 = with_fp8.back();
    EXPECT_EQ(kernels::prefill_shape_name(fp8), "fp8_e4m3/seq:8192/head_dim:128/causal:0");
    EXPECT_EQ(fp8.batch, 2);
    EXPECT_EQ(fp8.q_heads, 16);
    PrefillShape twin = fp8;
    twin.dtype = DType::bf16;
    int twins = 0;
    for (const PrefillShape& s : plain) twins += kernels::prefill_shape_name(s) == kernels::prefill_shape_name(twin);
    EXPECT_EQ(twins, 1);
  }
}

TEST(PrefillShapes, CrossProductWithDerivedDefaults) {
  auto s = kernels::prefill_shapes(axes("q_len=1,128;kv_len=4096;head_dim=64;q_heads=32;kv_heads=8;causal=1"));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].q_len, 1);
  EXPECT_EQ(s[0].kv_len, 4096);
  EXPECT_EQ(s[0].batch, 16384);  // FA3: 16k query tokens
  EXPECT_EQ(s[1].batch, 128);
  EXPECT_EQ(kernels::prefill_shape_name(s[1]), "bf16/q_len:128/kv_len:4096/head_dim:64/causal:1/kv_heads:8");

  s = kernels::prefill_shapes(axes("seq=777;dtype=f16;batch=3;window=256"));
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].q_len, 777);
  EXPECT_EQ(s[0].kv_len, 777);
  EXPECT_EQ(s[0].q_heads, 16);
  EXPECT_EQ(s[0].dtype, DType::f16);
  EXPECT_EQ(kernels::prefill_shape_name(s[0]), "f16/seq:777/head_dim:128/causal:0/window:256/batch:3");

  s = kernels::prefill_shapes(axes("kv_len=2048"));  // q_len follows
  EXPECT_EQ(s.at(0).q_len, 2048);
  EXPECT_EQ(kernels::prefill_shape_name(s.at(0)), "bf16/seq:2048/head_dim:128/causal:0");
}

TEST(PrefillShapes, RaggedBatchesAreNamedByTheirLengths) {
  auto s = kernels::prefill_shapes(axes("lengths=100+300,3x64;q_heads=64;kv_heads=8;causal=1;dtype=fp8"));
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].lengths, (std::vector<int>{100, 300}));
  EXPECT_EQ(s[0].batch, 2);
  EXPECT_EQ(s[0].q_len, 300);
  EXPECT_EQ(s[0].kv_heads, 8);
  EXPECT_EQ(kernels::prefill_shape_name(s[0]),
            "fp8_e4m3/lengths:100+300/head_dim:128/causal:1/q_heads:64/kv_heads:8");
  EXPECT_EQ(kernels::prefill_shape_name(s[1]), "fp8_e4m3/lengths:3x64/head_dim:128/causal:1/q_heads:64/kv_heads:8");
  s = kernels::prefill_shapes(axes("lengths=lognormal:8:1536:0.5:256-8192+2x32768;head_dim=64"));
  EXPECT_EQ(s.at(0).batch, 10);
  EXPECT_EQ(s.at(0).q_heads, 32);  // FA3 heads at head dim 64
  EXPECT_EQ(s.at(0).q_len, 32768);
}

TEST(PrefillShapes, ErrorsNameTheAxisAndTheShape) {
  const auto err = [](const char* text) { return axes_error([&] { kernels::prefill_shapes(axes(text)); }); };
  EXPECT_CONTAINS(err("sequence=8192"), "unknown axis 'sequence' for the prefill family");
  EXPECT_CONTAINS(err("seq=8192;q_len=1"), "give seq or q_len/kv_len");
  EXPECT_CONTAINS(err("causal=2"), "'causal': '2' is not 0 or 1");
  EXPECT_CONTAINS(err("dtype=int8"), "unknown dtype 'int8'");
  std::string e = err("head_dim=128;q_heads=16;kv_heads=5");
  EXPECT_CONTAINS(e, "prefill shape head_dim=128;q_heads=16;kv_heads=5");
  EXPECT_CONTAINS(e, "invalid problem: q_heads");
  EXPECT_CONTAINS(err("head_dim=4096"), "invalid problem");  // no FA3 head count fits
  EXPECT_CONTAINS(err("lengths=5+9;seq=512"), "it takes no seq");
  EXPECT_CONTAINS(err("lengths=5+9;batch=2"), "it takes no batch");
  EXPECT_CONTAINS(err("lengths=5+0"), "below 1");
}

TEST(ExpandAxes, FamilyOrderNotTheUsersOrder) {
  const FamilyAxes family{"test", {{"a", "1", ""}, {"b", "", ""}, {"c", "x", ""}}};
  const auto points = expand_axes("c=y,z;a=1,2", family);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].describe(), "a=1;c=y");
  EXPECT_EQ(points[1].describe(), "a=1;c=z");
  EXPECT_EQ(points[3].describe(), "a=2;c=z");
  EXPECT_FALSE(points[0].has("b"));
  EXPECT_TRUE(points[0].given("a"));
  const auto defaults = expand_axes("b=5", family);
  ASSERT_EQ(defaults.size(), 1u);
  EXPECT_EQ(defaults[0].text("a"), "1");
  EXPECT_FALSE(defaults[0].given("a"));
  EXPECT_EQ(defaults[0].describe(), "b=5");
}

}  // namespace
}  // namespace schedlab::harness
