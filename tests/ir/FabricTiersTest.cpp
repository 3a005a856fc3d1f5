#include "ir/FabricTiers.h"

#include "tests/visualize/TestFabrics.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

TEST(FabricTiers, LeafSpineStacksHostsLeavesSpines) {
  auto g = expand(leafSpine(2, 1, 2));
  FabricTiers t = detectTiers(*g);
  // Boxes: host 0-3, leaf 0-1, spine 0.
  EXPECT_EQ(t.tierOfBox, (std::vector<uint32_t>{0, 0, 0, 0, 1, 1, 2}));
  EXPECT_EQ(t.numTiers, 3u);
}

TEST(FabricTiers, DirectNetworkIsOneTier) {
  auto g = expand(torus2d(2, 3));
  FabricTiers t = detectTiers(*g);
  EXPECT_EQ(t.tierOfBox, std::vector<uint32_t>(6, 0));
  EXPECT_EQ(t.numTiers, 1u);
}

TEST(FabricTiers, UnreachableSwitchGoesAboveTheTop) {
  auto in = leafSpine(2, 1, 2);
  in->instances.push_back({"spare", "spinesw", "", 1, {}, {}, {}});
  auto g = expand(in);
  FabricTiers t = detectTiers(*g);
  EXPECT_EQ(t.tierOfBox, (std::vector<uint32_t>{0, 0, 0, 0, 1, 1, 2, 3}));
  EXPECT_EQ(t.numTiers, 4u);
}

TEST(FabricTiers, WithoutHostsEverythingIsTierZero) {
  auto in = std::make_shared<Infrastructure>();
  in->name = "switches";
  in->origin = "switches";
  in->devices = {switchDevice(2)};
  in->links = {{"eth", "", std::nullopt, std::nullopt, {}}};
  in->instances = {{"sw", "switch", "", 2, {}, {}, {}}};
  in->edges = {infraEdge(at("sw", 0), at("port", 0), at("sw", 1), at("port", 0), "eth")};
  auto g = expand(in);
  FabricTiers t = detectTiers(*g);
  EXPECT_EQ(t.tierOfBox, (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(t.numTiers, 1u);
  EXPECT_EQ(boxOfNodes(*g), (std::vector<uint32_t>{0, 0, 0, 1, 1, 1}));
}
