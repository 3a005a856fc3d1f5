#include "visualize/FabricView.h"

#include "tests/support/TestUtil.h"
#include "tests/visualize/TestFabrics.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::viz;
using namespace infracc::test;

namespace {

std::string dotOf(llvm::Expected<Drawing> d) {
  if (!d)
    return "error: " + llvm::toString(d.takeError());
  auto text = render(*d, "dot");
  if (!text)
    return "error: " + llvm::toString(text.takeError());
  return *text;
}

std::string errorOf(llvm::Expected<Drawing> d) {
  if (d)
    return "(no error)";
  return llvm::toString(d.takeError());
}

std::string attr(const Attrs &attrs, llvm::StringRef key) {
  for (const Attr &a : attrs)
    if (a.key == key)
      return a.value;
  return "(unset)";
}

std::vector<std::string> labels(const Drawing &d) {
  std::vector<std::string> out;
  for (const auto &n : d.nodes)
    out.push_back(attr(n.attrs, "label"));
  return out;
}

std::vector<std::string> visibleEdgeLabels(const Drawing &d) {
  std::vector<std::string> out;
  for (const auto &e : d.edges)
    if (attr(e.attrs, "style") != "invis")
      out.push_back(d.nodes[e.tail].id + " -> " + d.nodes[e.head].id + " " +
                    attr(e.attrs, "label"));
  return out;
}

} // namespace

// Two leaves with two hosts each under one spine, leaf-spine pairs joined by 2
// parallel uplinks: one node per box, tiers stacked, the bundles labelled.
TEST(FabricView, OverviewOfASmallFabricIsOneNodePerBox) {
  auto g = expand(leafSpine(2, 1, 2, 2));
  auto d = drawOverview(*g, {});
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(labels(*d), (std::vector<std::string>{"host[0]", "host[1]", "host[2]", "host[3]",
                                                  "leaf[0]", "leaf[1]", "spine[0]"}));
  // Host edges are single (no label: the legend says eth); each leaf-spine bundle
  // carries 2 uplinks. Tails are the lower tier.
  EXPECT_EQ(visibleEdgeLabels(*d),
            (std::vector<std::string>{"host[0] -> leaf[0] (unset)", "host[1] -> leaf[0] (unset)",
                                      "host[2] -> leaf[1] (unset)", "host[3] -> leaf[1] (unset)",
                                      "leaf[0] -> spine[0]   ×2 uplink 400 Gb/s",
                                      "leaf[1] -> spine[0]   ×2 uplink 400 Gb/s"}));
  EXPECT_EQ(d->sameRank.size(), 3u);
  EXPECT_EQ(compareGolden("visualize/leafspine-overview.dot", dotOf(std::move(d))), "");
}

TEST(FabricView, OverviewGroupsHostsUnderOneLeaf) {
  // 64 hosts in one tier are wider than the overview's 32: hosts under one leaf merge.
  auto g = expand(leafSpine(8, 4, 8, 2));
  auto d = drawOverview(*g, {});
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  ASSERT_EQ(d->nodes.size(), 8u + 8u + 4u);
  EXPECT_EQ(attr(d->nodes[0].attrs, "label"), "host[0:8]\\n×8");
  EXPECT_EQ(attr(d->nodes[7].attrs, "label"), "host[56:64]\\n×8");
  EXPECT_EQ(attr(d->nodes[7].attrs, "peripheries"), "2");
  EXPECT_EQ(attr(d->nodes[8].attrs, "label"), "leaf[0]");
  // 8 host bundles + 32 uplink bundles are too many labels; the legend says it:
  // 64 host edges drawn as 8 lines of 8, 8 leaves x 4 spines x 2 uplinks as 32 of 2.
  for (const auto &e : d->edges)
    EXPECT_EQ(attr(e.attrs, "label"), "(unset)");
  std::string title = attr(d->graph, "label");
  EXPECT_NE(title.find("64 edges in 8 lines of ×8"), std::string::npos) << title;
  EXPECT_NE(title.find("64 edges in 32 lines of ×2"), std::string::npos) << title;
  EXPECT_NE(title.find("hosts with the same neighbours are drawn as one node (×N)"),
            std::string::npos);
}

TEST(FabricView, LargeFabricIsSummarisedByClasses) {
  // 1024 hosts, 32 leaves, 16 spines: each host has 1 link to its leaf, each leaf 32
  // hosts and 16 uplinks (one per spine), each spine 32 uplinks (one per leaf).
  auto g = expand(leafSpine(32, 16, 32));
  auto d = drawOverview(*g, {});
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(labels(*d), (std::vector<std::string>{"host\\n×1024", "leaf\\n×32", "spine\\n×16"}));
  EXPECT_EQ(visibleEdgeLabels(*d),
            (std::vector<std::string>{
                "host -> leaf   ×1024 eth 100 Gb/s\\l  1 per host · 32 per leaf\\l",
                "leaf -> spine   ×512 uplink 400 Gb/s\\l  16 per leaf · 32 per spine\\l"}));
}

TEST(FabricView, ForcedOverviewFallsBackToTheAutomaticSummary) {
  auto g = expand(leafSpine(32, 16, 32));
  FabricViewOptions o;
  o.aggregate = Aggregation::None;
  auto d = drawOverview(*g, o);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(labels(*d), (std::vector<std::string>{"host\\n×1024", "leaf\\n×32", "spine\\n×16"}));
  EXPECT_EQ(d->fallbackNote, "-aggregate=none would draw 1072 nodes, more than -max-nodes=1000; "
                             "drawing the automatic summary instead (3 nodes); raise -max-nodes "
                             "to draw it");
  std::string title = attr(d->graph, "label");
  EXPECT_NE(title.find("-aggregate=none would draw 1072 nodes (more than -max-nodes=1000): "
                       "summarised automatically"),
            std::string::npos)
      << title;
  // Only when even the automatic summary is too large is the picture refused.
  o.maxNodes = 2;
  EXPECT_EQ(errorOf(drawOverview(*g, o)),
            "the overview would draw 1072 nodes, more than -max-nodes=2; raise -max-nodes");
}

TEST(FabricView, FullViewBeyondMaxNodesIsTheOverviewWithHowToDrillDown) {
  // Nodes: 1024 hosts x 3 + 32 leaves x (1 asic + 48 ports) + 16 spines x (1 + 32).
  auto g = expand(leafSpine(32, 16, 32));
  auto d = drawFull(*g, {});
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(labels(*d), (std::vector<std::string>{"host\\n×1024", "leaf\\n×32", "spine\\n×16"}));
  EXPECT_EQ(d->fallbackNote,
            "-view=full would draw 5168 nodes, more than -max-nodes=1000; drawing the overview "
            "instead (3 nodes). Drill down with -view=device:server (3 nodes), "
            "-view=device:leafsw (49 nodes), -view=device:spinesw (33 nodes), or raise "
            "-max-nodes");
  std::string title = attr(d->graph, "label");
  EXPECT_NE(title.find("-view=full would draw 5168 nodes (more than -max-nodes=1000): this is "
                       "the overview; -view=device:NAME draws one device"),
            std::string::npos)
      << title;
}

TEST(FabricView, FullViewOfATinyFabric) {
  auto g = expand(tinyFabric());
  auto d = drawFull(*g, {});
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->nodes.size(), 11u);
  EXPECT_EQ(d->clusters.size(), 3u);   // host[0], host[1], tor[0]
  EXPECT_EQ(compareGolden("visualize/tiny-full.dot", dotOf(std::move(d))), "");
}

TEST(FabricView, DeviceViewShowsComposedDevicesAsClusters) {
  auto g = expand(composedFabric());
  auto d = drawDevice(*g, "hgx", {});
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  // 4 xpu, nvswitch, cpu, and per cx7 its endpoint and port.
  EXPECT_EQ(d->nodes.size(), 10u);
  ASSERT_EQ(d->clusters.size(), 2u);
  EXPECT_EQ(attr(d->clusters[0].attrs, "label"), "cx7[0]");
  EXPECT_EQ(compareGolden("visualize/hgx-device.dot", dotOf(std::move(d))), "");
}

TEST(FabricView, DeviceViewAcceptsAnInstanceName) {
  auto g = expand(leafSpine(2, 1, 2));
  auto d = drawDevice(*g, "leaf", {});
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->name, "leafsw");
  EXPECT_EQ(d->nodes.size(), 4u);   // asic + 2 host ports + 1 uplink port
}

TEST(FabricView, DeviceViewMergesManyIdenticalPorts) {
  auto in = tinyFabric();
  in->devices[1] = switchDevice(128);
  auto g = expand(in);
  auto d = drawDevice(*g, "switch", {});
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(labels(*d), (std::vector<std::string>{"asic[0]", "port[0:128]\\n×128"}));
  EXPECT_EQ(visibleEdgeLabels(*d),
            (std::vector<std::string>{"asic.0 -> port.0+127   ×128 ic"}));
}

TEST(FabricView, UnknownDeviceListsTheDevices) {
  auto g = expand(leafSpine(2, 1, 2));
  EXPECT_EQ(errorOf(drawDevice(*g, "nope", {})),
            "-view=device:nope: the fabric has no device (or instance) named 'nope'; its devices "
            "are: server, leafsw, spinesw");
}

TEST(FabricView, DirectNetworkUsesNeato) {
  auto g = expand(torus2d(3, 3));
  auto d = drawOverview(*g, {});
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->engine, "neato");
  EXPECT_TRUE(d->sameRank.empty());
  EXPECT_EQ(d->edges.size(), 18u);   // 9 nodes x 2 directions
}

TEST(FabricView, SwitchTorusFoldsHostsAndIsDrawnAsAGrid) {
  // Drawn one node per box, the torus would be a row of 16 switches joined by 32
  // links: more than half a link per node inside the tier, so the hosts are folded.
  auto g = expand(switchTorus(4, 4));
  auto d = drawOverview(*g, {});
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->engine, "neato");
  ASSERT_EQ(d->nodes.size(), 16u);
  EXPECT_EQ(attr(d->nodes[0].attrs, "label"), "sw[0]\\n+1 srv");
  // Row-major 4x4: sw[5] is row 1, column 1; 1.4 in apart across, 1 in down.
  EXPECT_EQ(attr(d->nodes[5].attrs, "pos"), "1.40,-1.00!");
  EXPECT_EQ(attr(d->nodes[15].attrs, "pos"), "4.20,-3.00!");
  // The 8 wrap-around links (4 per dimension) are faint.
  size_t faint = 0;
  for (const auto &e : d->edges)
    faint += attr(e.attrs, "color") == "#0072B270";
  EXPECT_EQ(d->edges.size(), 32u);
  EXPECT_EQ(faint, 8u);
  std::string title = attr(d->graph, "label");
  EXPECT_NE(title.find("hosts attached to a single switch are drawn inside that switch's node"),
            std::string::npos);
  EXPECT_NE(title.find("drawn as a 4×4 torus in copy order; wrap-around links are faint"),
            std::string::npos);
}

TEST(FabricView, DragonflyGroupsSitOnCircles) {
  auto g = expand(dragonflyLike(3, 4));
  auto d = drawOverview(*g, {});
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  ASSERT_EQ(d->nodes.size(), 12u);
  // Groups of 4 on circles of radius max(0.9, 4 x 1.5 / 2pi) = 0.955 in, centred on
  // a circle of radius max(2 x 0.955 + 1.5, 3 x 3.41 / 2pi) = 3.41 in; group 0 is at
  // the top and its first router faces the centre.
  EXPECT_EQ(attr(d->nodes[0].attrs, "pos"), "0.00,2.45!");
  std::string title = attr(d->graph, "label");
  EXPECT_NE(title.find("drawn as groups of 4 joined by local (its connected parts), arranged in "
                       "a circle"),
            std::string::npos)
      << title;
}

TEST(FabricView, ForcedFoldingShowsHostsInsideTheirLeaf) {
  auto g = expand(leafSpine(2, 1, 2));
  FabricViewOptions o;
  o.aggregate = Aggregation::Switches;
  auto d = drawOverview(*g, o);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(labels(*d),
            (std::vector<std::string>{"leaf[0]\\n+2 host", "leaf[1]\\n+2 host", "spine[0]"}));
  EXPECT_EQ(d->engine, "dot");
}
