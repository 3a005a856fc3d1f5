#include "visualize/Timeline.h"

#include "tests/support/TestUtil.h"

#include <llvm/ADT/StringRef.h>

#include <gtest/gtest.h>

using namespace infracc::viz;

namespace {

TimelineData::Interval iv(uint64_t start, uint64_t end, uint32_t rank, Activity kind,
                          bool critical = false) {
  TimelineData::Interval i;
  i.start = start;
  i.end = end;
  i.rank = rank;
  i.kind = kind;
  i.critical = critical;
  return i;
}

size_t count(llvm::StringRef haystack, llvm::StringRef needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != llvm::StringRef::npos;
       at = haystack.find(needle, at + 1))
    ++n;
  return n;
}

// One eager 1-byte message under LogGOPSim's defaults (L=2500, o=1500, g=1000, G=6):
// rank 0 computes 1000 ns, sends at 1000 (o until 2500, g until 2000); the message
// arrives at 1000+1500+2500 = 5000, rank 1 pays o until 6500 and computes 500 more.
TimelineData pingOne() {
  TimelineData d;
  d.title = "one message";
  d.notes = {"L=2500 o=1500 g=1000 G=6 ns"};
  d.numRanks = 2;
  d.intervals = {
      iv(0, 1000, 0, Activity::Compute, true),          iv(1000, 2500, 0, Activity::SendOverhead, true),
      iv(1000, 2000, 0, Activity::SendGap),             iv(5000, 6500, 1, Activity::RecvOverhead, true),
      iv(5000, 6000, 1, Activity::RecvGap),             iv(6500, 7000, 1, Activity::Compute, true),
  };
  d.intervals[0].tooltip = "calc 1000";
  d.messages = {{1000, 6500, 0, 1, 0, 0, 1, true}};
  d.criticalPath = {{0, 0, 2500}, {1, 5000, 7000}};
  d.makespan = 7000;
  return d;
}

} // namespace

TEST(Timeline, UnitsFollowTheSpan) {
  EXPECT_STREQ(timeUnitFor(9999).first, "ns");
  EXPECT_STREQ(timeUnitFor(1e4).first, "µs");
  EXPECT_EQ(timeUnitFor(9.99e6).second, 1e3);
  EXPECT_STREQ(timeUnitFor(1e7).first, "ms");
  EXPECT_STREQ(timeUnitFor(2.5e10).first, "s");
}

TEST(Timeline, TicksAreOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_EQ(niceTickStep(34914, 10), 5000);   // 3491 per tick -> 5000
  EXPECT_EQ(niceTickStep(7000, 10), 1000);    // 700 -> 1000
  EXPECT_EQ(niceTickStep(95, 10), 10);        // 9.5 -> 10
  EXPECT_EQ(niceTickStep(1.5e6, 10), 200000); // 150000 -> 200000
  EXPECT_EQ(niceTickStep(3, 10), 1);          // never below one ns
}

TEST(Timeline, DetailedSvg) {
  TimelineOptions o;
  o.plotWidth = 700;   // 10 ns per pixel
  std::string svg = renderTimelineSvg(pingOne(), o);
  // Ticks every 1000 ns, labelled in ns (a span under 10 µs).
  EXPECT_EQ(infracc::test::compareGolden("visualize/ping-timeline.svg", svg), "");
  // Four critical boxes get an outline; the message arrow is red.
  EXPECT_EQ(count(svg, "stroke=\"#D62728\" stroke-width=\"1.5\""), 4u);
  EXPECT_EQ(count(svg, "marker-end=\"url(#arrow-critical)\""), 1u);
}

TEST(Timeline, NeighbouringBoxesCloserThanHalfAPixelMerge) {
  TimelineData d;
  d.numRanks = 1;
  d.makespan = 1000;
  // 100 px for 1000 ns: 10 ns per pixel, merged when less than 5 ns apart.
  d.intervals = {iv(0, 10, 0, Activity::Compute), iv(14, 20, 0, Activity::Compute),
                 iv(30, 40, 0, Activity::Compute), iv(40, 50, 0, Activity::SendOverhead)};
  TimelineOptions o;
  o.plotWidth = 100;
  std::string svg = renderTimelineSvg(d, o);
  // One legend swatch + two boxes ([0,20] merged, [30,40]) in the compute colour.
  EXPECT_EQ(count(svg, "fill=\"#59A14F\""), 3u);
  EXPECT_NE(svg.find("<title>2 computation operations</title>"), std::string::npos);
  EXPECT_EQ(count(svg, "fill=\"#F28E2B\""), 2u);
}

TEST(Timeline, ManyRanksAreAggregated) {
  TimelineData d;
  d.title = "many";
  d.numRanks = 100;
  d.makespan = 1000;
  for (uint32_t r = 0; r < 100; ++r)
    d.intervals.push_back(iv(0, r < 50 ? 1000 : 500, r, Activity::Compute));
  d.criticalPath = {{0, 0, 1000}};
  TimelineOptions o;
  o.plotWidth = 40;   // 20 bins of 50 ns
  std::string svg = renderTimelineSvg(d, o);
  EXPECT_EQ(infracc::test::compareGolden("visualize/many-ranks-timeline.svg", svg), "");
  // No message arrows in the aggregated view; one red trail.
  EXPECT_EQ(count(svg, "marker-end"), 0u);
  EXPECT_EQ(count(svg, "stroke=\"#D62728\" stroke-width=\"2\" stroke-linejoin"), 1u);
}
