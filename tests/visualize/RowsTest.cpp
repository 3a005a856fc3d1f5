// Rows of the layered overview, from the tiers of ir/FabricStructure.h.
#include "visualize/ViewCommon.h"

#include "tests/visualize/TestFabrics.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;
using infracc::viz::boxOfNodes;
using infracc::viz::drawingRows;

TEST(DrawingRows, LeafSpineStacksHostsLeavesSpines) {
  // Boxes: host 0-3, leaf 0-1, spine 0.
  EXPECT_EQ(drawingRows(*expand(leafSpine(2, 1, 2))),
            (std::vector<uint32_t>{0, 0, 0, 0, 1, 1, 2}));
}

TEST(DrawingRows, DirectNetworkIsOneRow) {
  EXPECT_EQ(drawingRows(*expand(torus2d(2, 3))), std::vector<uint32_t>(6, 0));
}

TEST(DrawingRows, UnreachableSwitchGoesAboveTheTop) {
  auto in = leafSpine(2, 1, 2);
  in->instances.push_back({"spare", "spinesw", "", 1, {}, {}, {}});
  EXPECT_EQ(drawingRows(*expand(in)), (std::vector<uint32_t>{0, 0, 0, 0, 1, 1, 2, 3}));
}

TEST(DrawingRows, WithoutHostsEverythingIsOneRow) {
  auto in = std::make_shared<Infrastructure>();
  in->name = "switches";
  in->origin = "switches";
  in->devices = {switchDevice(2)};
  in->links = {{"eth", "", std::nullopt, std::nullopt, {}}};
  in->instances = {{"sw", "switch", "", 2, {}, {}, {}}};
  in->edges = {infraEdge(at("sw", 0), at("port", 0), at("sw", 1), at("port", 0), "eth")};
  auto g = expand(in);
  EXPECT_EQ(drawingRows(*g), (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(boxOfNodes(*g), (std::vector<uint32_t>{0, 0, 0, 1, 1, 1}));
}
