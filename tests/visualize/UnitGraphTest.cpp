#include "visualize/UnitGraph.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::viz;

namespace {

// Four hosts (0-3, two under each of the leaves 4 and 5) and the two leaves joined by
// two parallel links of link 1.
UnitGraph twoLeaves() {
  UnitGraph g;
  g.kind = {0, 0, 0, 0, 1, 1};
  g.tier = {0, 0, 0, 0, 1, 1};
  g.edges = {{0, 4, 0, 1}, {1, 4, 0, 1}, {2, 5, 0, 1}, {3, 5, 0, 1}, {4, 5, 1, 1}, {4, 5, 1, 1}};
  g.normaliseEdges();
  return g;
}

using Members = std::vector<std::vector<uint32_t>>;

} // namespace

TEST(UnitGraph, NormaliseMergesParallelEdges) {
  UnitGraph g = twoLeaves();
  ASSERT_EQ(g.edges.size(), 5u);
  EXPECT_EQ(g.edges[4].a, 4u);
  EXPECT_EQ(g.edges[4].b, 5u);
  EXPECT_EQ(g.edges[4].count, 2u);
}

TEST(UnitGraph, HostsUnderTheSameSwitchShareAGroup) {
  UnitGraph g = twoLeaves();
  Grouping gr = groupByNeighbours(g, {true, true, true, true, false, false});
  EXPECT_EQ(gr.members, (Members{{0, 1}, {2, 3}, {4}, {5}}));
  EXPECT_EQ(gr.groupOf, (std::vector<uint32_t>{0, 0, 1, 1, 2, 3}));
}

TEST(UnitGraph, ClassesOfEqualStructure) {
  UnitGraph g = twoLeaves();
  Grouping gr = groupByClasses(g, 100);
  EXPECT_EQ(gr.members, (Members{{0, 1, 2, 3}, {4, 5}}));
  auto edges = groupEdges(g, gr);
  ASSERT_EQ(edges.size(), 2u);
  // Hosts to leaves: 4 edges, 1 per host, 2 per leaf.
  EXPECT_EQ(edges[0].ga, 0u);
  EXPECT_EQ(edges[0].gb, 1u);
  EXPECT_EQ(edges[0].total, 4u);
  EXPECT_EQ(edges[0].minA, 1u);
  EXPECT_EQ(edges[0].maxA, 1u);
  EXPECT_EQ(edges[0].minB, 2u);
  EXPECT_EQ(edges[0].maxB, 2u);
  // Inside the leaf class: the 2 parallel links, each leaf has both.
  EXPECT_EQ(edges[1].ga, 1u);
  EXPECT_EQ(edges[1].gb, 1u);
  EXPECT_EQ(edges[1].link, 1u);
  EXPECT_EQ(edges[1].total, 2u);
  EXPECT_EQ(edges[1].minA, 2u);
  EXPECT_EQ(edges[1].maxA, 2u);
}

TEST(UnitGraph, RefinementSeparatesDifferentPositions) {
  // A path 0-1-2-3-4: ends, their neighbours and the middle differ.
  UnitGraph g;
  g.kind.assign(5, 0);
  g.tier.assign(5, 0);
  g.edges = {{0, 1, 0, 1}, {1, 2, 0, 1}, {2, 3, 0, 1}, {3, 4, 0, 1}};
  EXPECT_EQ(groupByClasses(g, 3).members, (Members{{0, 4}, {1, 3}, {2}}));
  // With room for only 2 groups it falls back to (kind, tier): one group.
  EXPECT_EQ(groupByClasses(g, 2).members, (Members{{0, 1, 2, 3, 4}}));
}

TEST(UnitGraph, GroupEdgeCountsMembersWithoutEdges) {
  // Group {0, 1} where only unit 0 touches unit 2.
  UnitGraph g;
  g.kind = {0, 0, 1};
  g.tier = {0, 0, 1};
  g.edges = {{0, 2, 0, 3}};
  Grouping gr = groupByNeighbours(g, {false, false, false});
  gr.groupOf = {0, 0, 1};
  gr.members = {{0, 1}, {2}};
  auto edges = groupEdges(g, gr);
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges[0].minA, 0u);
  EXPECT_EQ(edges[0].maxA, 3u);
}
