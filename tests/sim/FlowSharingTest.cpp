// Max-min fair sharing (backends/sim/FlowSharing.h) on hand-computed cases.
#include "backends/sim/FlowSharing.h"

#include <gtest/gtest.h>

#include <map>

using namespace infracc::sim;

namespace {

/// Runs every step; token -> delivery time.
std::map<uint32_t, uint64_t> runAll(FlowSharing &fs) {
  std::map<uint32_t, uint64_t> out;
  while (fs.nextTime() != FlowSharing::Never)
    fs.advance([&](uint32_t token, uint64_t t) { out[token] = t; });
  return out;
}

} // namespace

TEST(FlowSharing, TwoFlowsOnOneLinkGetHalfEach) {
  // 10 bytes/ns; two flows of 1000 bytes at 5 bytes/ns each: both drain at 200 ns,
  // delivered 7 ns later (their latency).
  FlowSharing fs({10.0});
  uint32_t r = fs.addRoute({{0, 1.0}});
  fs.start(1, 1, r, 0, 1000, 7);
  fs.start(2, 2, r, 0, 1000, 7);
  auto d = runAll(fs);
  EXPECT_EQ(d[1], 207u);
  EXPECT_EQ(d[2], 207u);
  EXPECT_EQ(fs.recomputations(), 2u);   // both start at once; both end at once
}

TEST(FlowSharing, AFlowSpeedsUpWhenTheOtherEnds) {
  // 1000 and 3000 bytes on 10 bytes/ns: 5 each until 200 ns (the first drains), then
  // 2000 bytes left at 10: the second drains at 400.
  FlowSharing fs({10.0});
  uint32_t r = fs.addRoute({{0, 1.0}});
  fs.start(1, 1, r, 0, 1000, 0);
  fs.start(2, 2, r, 0, 3000, 0);
  auto d = runAll(fs);
  EXPECT_EQ(d[1], 200u);
  EXPECT_EQ(d[2], 400u);
}

TEST(FlowSharing, LateStarterSharesFromItsStart) {
  // A alone from 0 to 100 (1000 of 3000 bytes sent), then A and B at 5 each: B (1000
  // bytes) drains at 300, A has 1000 left at 300 and drains at 400.
  FlowSharing fs({10.0});
  uint32_t r = fs.addRoute({{0, 1.0}});
  fs.start(1, 1, r, 0, 3000, 0);
  fs.start(2, 2, r, 100, 1000, 0);
  auto d = runAll(fs);
  EXPECT_EQ(d[2], 300u);
  EXPECT_EQ(d[1], 400u);
}

TEST(FlowSharing, ParkingLotGetsTheMaxMinRates) {
  // Links 0 (12.5 bytes/ns) and 1 (5 bytes/ns). A crosses both, B link 0, C and D
  // link 1. Link 1 is the tightest: A, C, D get 5/3 each; B gets 12.5 - 5/3 = 65/6.
  // 1e6 bytes each: B drains at 1e6 / (65/6) = 92307.69 ns, the others at 600000
  // (B's end frees link 0 only, which does not limit A).
  FlowSharing fs({12.5, 5.0});
  uint32_t both = fs.addRoute({{0, 1.0}, {1, 1.0}});
  uint32_t first = fs.addRoute({{0, 1.0}});
  uint32_t second = fs.addRoute({{1, 1.0}});
  fs.start(1, 1, both, 0, 1000000, 0);
  fs.start(2, 2, first, 0, 1000000, 0);
  fs.start(3, 3, second, 0, 1000000, 0);
  fs.start(4, 4, second, 0, 1000000, 0);
  auto d = runAll(fs);
  EXPECT_EQ(d[2], 92308u);
  EXPECT_EQ(d[1], 600000u);
  EXPECT_EQ(d[3], 600000u);
  EXPECT_EQ(d[4], 600000u);
}

TEST(FlowSharing, SprayedFlowLoadsEachPathByItsShare) {
  // Two paths of 10 bytes/ns each (links 0 and 1), one flow split half/half and one
  // flow on link 0 only. Filling: link 0 carries 0.5 r1 + r2, link 1 0.5 r1. Link 0
  // saturates first at r = 10 / 1.5 = 6.667 for both; then link 1 has 10 - 3.333 left
  // but its only flow is frozen. 2000 bytes each: both drain at 300 ns.
  FlowSharing fs({10.0, 10.0});
  uint32_t sprayed = fs.addRoute({{0, 0.5}, {1, 0.5}});
  uint32_t single = fs.addRoute({{0, 1.0}});
  fs.start(1, 1, sprayed, 0, 2000, 0);
  fs.start(2, 2, single, 0, 2000, 0);
  auto d = runAll(fs);
  EXPECT_EQ(d[1], 300u);
  EXPECT_EQ(d[2], 300u);
}

TEST(FlowSharing, IndependentFlowsAreNotRecomputedTogether) {
  // Two links, one flow each: the second flow's start does not touch the first's.
  FlowSharing fs({10.0, 10.0});
  uint32_t a = fs.addRoute({{0, 1.0}});
  uint32_t b = fs.addRoute({{1, 1.0}});
  fs.start(1, 1, a, 0, 1000, 0);
  fs.start(2, 2, b, 50, 1000, 0);
  auto d = runAll(fs);
  EXPECT_EQ(d[1], 100u);
  EXPECT_EQ(d[2], 150u);
  EXPECT_EQ(fs.flowRateUpdates(), 2u);   // each flow's rate was set once
}

TEST(FlowSharing, EmptyRoutesAndEmptyMessagesArriveAfterTheirLatency) {
  FlowSharing fs({10.0});
  uint32_t none = fs.addRoute({});
  uint32_t r = fs.addRoute({{0, 1.0}});
  fs.start(1, 1, none, 40, 5000, 3);
  fs.start(2, 2, r, 10, 0, 9);
  auto d = runAll(fs);
  EXPECT_EQ(d[1], 43u);
  EXPECT_EQ(d[2], 19u);
}

TEST(FlowSharing, LinkStatistics) {
  FlowSharing fs({10.0});
  uint32_t r = fs.addRoute({{0, 1.0}});
  fs.start(1, 1, r, 0, 1000, 0);
  fs.start(2, 2, r, 0, 1000, 0);
  fs.start(3, 3, r, 500, 1000, 0);
  runAll(fs);
  const auto &st = fs.linkStats()[0];
  EXPECT_EQ(st.bytes, 3000);
  EXPECT_EQ(st.busy, 200 + 100);   // 0..200, 500..600
  EXPECT_EQ(st.peakFlows, 2u);
  EXPECT_EQ(fs.peakFlowsInFlight(), 2u);
}

TEST(FlowSharing, AStartWithSpareCapacityNeedsNoRecomputation) {
  // Link 0 (10 bytes/ns), link 1 (4): A over both runs at 4, leaving 6 on link 0. B
  // starts on link 0 at 100: it takes the 6 without touching A (A, at 4, is not faster
  // than B on B's bottleneck): 600 bytes drain at 200; A's 4000 at 1000.
  FlowSharing fs({10.0, 4.0});
  uint32_t both = fs.addRoute({{0, 1.0}, {1, 1.0}});
  uint32_t first = fs.addRoute({{0, 1.0}});
  fs.start(1, 1, both, 0, 4000, 0);
  fs.start(2, 2, first, 100, 600, 0);
  auto d = runAll(fs);
  EXPECT_EQ(d[2], 200u);
  EXPECT_EQ(d[1], 1000u);
  EXPECT_EQ(fs.startsAlone(), 2u);   // A on idle links too
}

TEST(FlowSharing, AStartThatWouldBeSlowerThanItsNeighbourIsRecomputed) {
  // Link 1 is 8 bytes/ns: A runs at 8, leaving 2 on link 0. B alone would get 2 while A
  // has 8 on the same link, which is not max-min: both get 5. B's 1000 bytes drain at
  // 100 + 200 = 300; A sent 800 by 100, then 5 until 300 (1000 more), then 8: its 4000
  // bytes drain at 300 + 2200/8 = 575.
  FlowSharing fs({10.0, 8.0});
  uint32_t both = fs.addRoute({{0, 1.0}, {1, 1.0}});
  uint32_t first = fs.addRoute({{0, 1.0}});
  fs.start(1, 1, both, 0, 4000, 0);
  fs.start(2, 2, first, 100, 1000, 0);
  auto d = runAll(fs);
  EXPECT_EQ(d[2], 300u);
  EXPECT_EQ(d[1], 575u);
  EXPECT_EQ(fs.startsAlone(), 1u);   // A's start only
}

TEST(FlowSharing, FlowsOfOneRouteDrainByTheirBytes) {
  // One route, 10 bytes/ns, three flows from 0: 10/3 each until the 1000-byte one drains
  // at 300; then 5 each: the 2000-byte one (1000 left) drains at 500; the 3000-byte one
  // had 1000 left at 500 and drains alone at 600. (The flows of one route are served as
  // one class: the three drains come from one entry of the drain queue in turn.)
  FlowSharing fs({10.0});
  uint32_t r = fs.addRoute({{0, 1.0}});
  fs.start(1, 1, r, 0, 3000, 0);
  fs.start(2, 2, r, 0, 1000, 0);
  fs.start(3, 3, r, 0, 2000, 0);
  auto d = runAll(fs);
  EXPECT_EQ(d[2], 300u);
  EXPECT_EQ(d[3], 500u);
  EXPECT_EQ(d[1], 600u);
  EXPECT_EQ(fs.recomputations(), 4u);   // the start, then each drain
  // The first start alone on the link (10), then the three, two, one flows left.
  EXPECT_EQ(fs.flowRateUpdates(), 1u + 3u + 2u + 1u);
}

TEST(FlowSharing, AFlowJoiningItsRouteBetweenRecomputationsWaits) {
  // -flow-resolution: rates are recomputed at most every 100 ns. A (3000 bytes) runs
  // alone at 10 from 0; B, on the same route, starts at 50 but sends nothing until the
  // recomputation at 100 (A has sent 1000). Then 5 each: B's 1000 bytes drain at 300, A
  // has 1000 left then; its rate is recomputed at 300 (the drain) to 10: it drains at 400.
  FlowSharing fs({10.0});
  fs.setResolution(100);
  uint32_t r = fs.addRoute({{0, 1.0}});
  fs.start(1, 1, r, 0, 3000, 0);
  fs.start(2, 2, r, 50, 1000, 0);
  auto d = runAll(fs);
  EXPECT_EQ(d[2], 300u);
  EXPECT_EQ(d[1], 400u);
}
