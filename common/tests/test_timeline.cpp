#include "common/harness/timeline.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>

namespace schedlab::harness {
namespace {

CtaSpan span(std::uint64_t start, std::uint64_t end, std::uint32_t sm) { return {start, end, sm, 1}; }

TEST(CtaTimeline, SummarizesTwoKernelsFromTheFirstStart) {
  // Two SMs: SM 0 runs CTAs ending at 10 and 30 us, SM 1 one ending at 20 us; an unwritten
  // slot between them is skipped. The second kernel starts at 25 us and ends at 40 us.
  const std::vector<CtaSpan> first = {span(1000, 10000, 0), {}, span(1200, 20000, 1), span(10000, 30000, 0)};
  const std::vector<CtaSpan> second = {span(25000, 40000, 1), {}};
  const auto c = summarize_timeline(first, second);
  EXPECT_EQ(c.at("tl_k0_ctas"), 3);
  EXPECT_EQ(c.at("tl_k0_sms"), 2);
  EXPECT_DOUBLE_EQ(c.at("tl_k0_start_last"), 9.0);
  EXPECT_DOUBLE_EQ(c.at("tl_k0_end_p10"), 9.0);
  EXPECT_DOUBLE_EQ(c.at("tl_k0_end_p50"), 19.0);
  EXPECT_DOUBLE_EQ(c.at("tl_k0_end"), 29.0);
  EXPECT_DOUBLE_EQ(c.at("tl_k0_cta_p50"), 18.8);
  EXPECT_DOUBLE_EQ(c.at("tl_k0_cta_max"), 20.0);
  // SM 1 idles from 20 to 30 us of a 29 us span; SM 0 not at all.
  EXPECT_DOUBLE_EQ(c.at("tl_k0_tail_idle"), 10.0 / (29.0 * 2));
  EXPECT_EQ(c.at("tl_k1_ctas"), 1);
  EXPECT_DOUBLE_EQ(c.at("tl_k1_end"), 39.0);
  EXPECT_DOUBLE_EQ(c.at("tl_gap"), -5.0);
  EXPECT_DOUBLE_EQ(c.at("tl_span"), 39.0);
}

// The raw spans as CSV: written slots only, each with its grid index, kernel and launch.
TEST(CtaTimeline, WritesTheWrittenSpansAsCsv) {
  const std::vector<CtaSpan> first = {span(1000, 10000, 3), {}, span(1200, 20000, 7)};
  const std::vector<CtaSpan> second = {{}, span(25000, 40000, 1)};
  std::ostringstream out;
  write_timeline_csv(out, first, second, 4, true);
  EXPECT_EQ(out.str(),
            "launch,kernel,cta,sm,start_ns,end_ns\n4,0,0,3,1000,10000\n4,0,2,7,1200,20000\n4,1,1,1,25000,40000\n");
  std::ostringstream rows;
  write_timeline_csv(rows, first, {}, 0, false);
  EXPECT_EQ(rows.str(), "0,0,0,3,1000,10000\n0,0,2,7,1200,20000\n");
}

TEST(CtaTimeline, OneKernelHasNoSecondKernelCounters) {
  const auto c = summarize_timeline({span(0, 5000, 3)}, std::vector<CtaSpan>(4));
  EXPECT_EQ(c.count("tl_k1_ctas"), 0u);
  EXPECT_EQ(c.count("tl_gap"), 0u);
  EXPECT_DOUBLE_EQ(c.at("tl_span"), 5.0);
  EXPECT_DOUBLE_EQ(c.at("tl_k0_tail_idle"), 0.0);
}

TEST(CtaTimeline, NothingWrittenGivesNoCounters) {
  EXPECT_TRUE(summarize_timeline(std::vector<CtaSpan>(8), {}).empty());
}

TEST(CtaTimeline, RejectsASpanThatEndsBeforeItStartsOrNever) {
  EXPECT_THROW(summarize_timeline({span(5000, 4000, 0)}, {}), std::invalid_argument);
  EXPECT_THROW(summarize_timeline({span(5000, 0, 0)}, {}), std::invalid_argument);
  EXPECT_THROW(summarize_timeline({span(0, 1000, 0)}, {span(2000, 1000, 0)}), std::invalid_argument);
}

}  // namespace
}  // namespace schedlab::harness
