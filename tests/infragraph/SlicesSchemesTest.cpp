// Slices, schemes and composition: the expanded node names and edges.
//
// Expected values follow from the documented rules (docs/infragraph.md): slices are
// Python's range(start, stop, step) with defaults 0, count, 1; endpoints expand
// instance-major, then along the component path; many2many is the cartesian product
// without self pairs; one2one pairs in order; ring pairs element i of ep1 with element
// i+1 (mod n) of ep2. The same documents (except ring, which the reference does not
// implement) were expanded by the reference InfraGraphService (Keysight/infragraph
// 2701fa5, run with a stand-in for its generated data classes) and gave the same
// node names, order and edges.
#include "tests/infragraph/InfraGraphTestUtil.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

namespace {

// A hub joined many2many to `p[<slice>]`: the connected ports are what the slice selects.
std::vector<std::string> portsSelectedBy(const std::string &slice) {
  std::string doc = "devices:\n"
                    "- name: d\n"
                    "  components:\n"
                    "  - {name: hub, count: 1, choice: switch}\n"
                    "  - {name: p, count: 10, choice: port}\n"
                    "  links: [{name: l}]\n"
                    "  edges:\n"
                    "  - {ep1: {component: hub}, ep2: {component: \"p" +
                    slice +
                    "\"}, scheme: many2many, link: l}\n"
                    "instances: [{name: x, device: d, count: 1}]\n";
  Expanded r = expandText(doc);
  EXPECT_TRUE(r.graph) << r.log;
  std::vector<std::string> out;
  if (!r.graph)
    return out;
  NodeId hub = *r.graph->lookup("x.0.hub.0");
  for (const auto &a : r.graph->neighbours(hub))
    out.push_back(r.graph->name(a.node).substr(std::string("x.0.").size()));
  std::sort(out.begin(), out.end());
  return out;
}

using V = std::vector<std::string>;

} // namespace

TEST(Slices, Index) { EXPECT_EQ(portsSelectedBy("[3]"), (V{"p.3"})); }
TEST(Slices, StartStop) { EXPECT_EQ(portsSelectedBy("[2:5]"), (V{"p.2", "p.3", "p.4"})); }
TEST(Slices, Step) { EXPECT_EQ(portsSelectedBy("[1:8:3]"), (V{"p.1", "p.4", "p.7"})); }
TEST(Slices, OpenStop) { EXPECT_EQ(portsSelectedBy("[7:]"), (V{"p.7", "p.8", "p.9"})); }
TEST(Slices, OpenStart) { EXPECT_EQ(portsSelectedBy("[:2]"), (V{"p.0", "p.1"})); }
TEST(Slices, OnlyStep) { EXPECT_EQ(portsSelectedBy("[::4]"), (V{"p.0", "p.4", "p.8"})); }
TEST(Slices, NoSliceIsEveryCopy) { EXPECT_EQ(portsSelectedBy("").size(), 10u); }
TEST(Slices, BlanksInsideBrackets) { EXPECT_EQ(portsSelectedBy("[ 2 : 4 ]"), (V{"p.2", "p.3"})); }
// range(8, 2, -3) = 8, 5; range(3, -1, -1) = 3, 2, 1, 0 (a negative bound is a bound).
TEST(Slices, NegativeStep) { EXPECT_EQ(portsSelectedBy("[8:2:-3]"), (V{"p.5", "p.8"})); }
TEST(Slices, NegativeStopAsRangeBound) {
  EXPECT_EQ(portsSelectedBy("[3:-1:-1]"), (V{"p.0", "p.1", "p.2", "p.3"}));
}

TEST(Schemes, One2OneFollowsSliceOrder) {
  // a[7:3:-1] is 7, 6, 5, 4; b[4:8] is 4..7: pairs in that order.
  Expanded r = expandText("devices:\n"
                          "- name: d\n"
                          "  components: [{name: a, count: 8, choice: cpu}, {name: b, count: 8, "
                          "choice: port}]\n"
                          "  links: [{name: l}]\n"
                          "  edges:\n"
                          "  - {ep1: {component: \"a[7:3:-1]\"}, ep2: {component: \"b[4:8]\"}, "
                          "scheme: one2one, link: l}\n"
                          "instances: [{name: x, device: d, count: 1}]\n");
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(edgeList(*r.graph), (V{"x.0.a.4 -- x.0.b.7 l", "x.0.a.5 -- x.0.b.6 l",
                                   "x.0.a.6 -- x.0.b.5 l", "x.0.a.7 -- x.0.b.4 l"}));
}

TEST(Schemes, InstanceMajorExpansion) {
  // host[0:2] x nic (2 each) = host.0.nic.0, host.0.nic.1, host.1.nic.0, host.1.nic.1.
  Expanded r = expandText("devices:\n"
                          "- name: s\n"
                          "  components: [{name: nic, count: 2, choice: nic}]\n"
                          "- name: w\n"
                          "  components: [{name: port, count: 4, choice: port}]\n"
                          "links: [{name: l}]\n"
                          "instances: [{name: host, device: s, count: 3}, {name: sw, device: w, "
                          "count: 1}]\n"
                          "edges:\n"
                          "- {ep1: {instance: \"host[0:2]\", component: nic}, ep2: {instance: sw, "
                          "component: port}, scheme: one2one, link: l}\n",
                          "t.yaml");
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(edgeList(*r.graph),
            (V{"host.0.nic.0 -- sw.0.port.0 l", "host.0.nic.1 -- sw.0.port.1 l",
               "host.1.nic.0 -- sw.0.port.2 l", "host.1.nic.1 -- sw.0.port.3 l"}));
}

namespace {
Expanded meshOf(const std::string &edges) {
  return expandText("devices:\n"
                    "- name: d\n"
                    "  components: [{name: a, count: 4, choice: cpu}, {name: b, count: 3, choice: "
                    "xpu}]\n"
                    "  links: [{name: l}]\n"
                    "  edges:\n" +
                    edges + "instances: [{name: x, device: d, count: 1}]\n");
}
} // namespace

TEST(Schemes, Many2ManySkipsSelfPairs) {
  // {0,1} x {1,2}: 0-1, 0-2, 1-2 (1-1 skipped).
  Expanded r = meshOf("  - {ep1: {component: \"a[0:2]\"}, ep2: {component: \"a[1:3]\"}, scheme: "
                      "many2many, link: l}\n");
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(edgeList(*r.graph),
            (V{"x.0.a.0 -- x.0.a.1 l", "x.0.a.0 -- x.0.a.2 l", "x.0.a.1 -- x.0.a.2 l"}));
}

TEST(Schemes, Many2ManyOfOneSetIsAFullMesh) {
  Expanded r = meshOf("  - {ep1: {component: a}, ep2: {component: a}, scheme: many2many, link: "
                      "l}\n");
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(r.graph->numEdges(), 6u);   // K4
}

TEST(Schemes, DuplicatePairsCollapse) {
  // The same pairs declared three ways (twice as many2many, once reversed) are 3 edges.
  Expanded r = meshOf(
      "  - {ep1: {component: \"a[0]\"}, ep2: {component: b}, scheme: many2many, link: l}\n"
      "  - {ep1: {component: b}, ep2: {component: \"a[0]\"}, scheme: many2many, link: l}\n"
      "  - {ep1: {component: \"a[0:1]\"}, ep2: {component: \"b[0:3]\"}, scheme: many2many, link: "
      "l}\n");
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(edgeList(*r.graph),
            (V{"x.0.a.0 -- x.0.b.0 l", "x.0.a.0 -- x.0.b.1 l", "x.0.a.0 -- x.0.b.2 l"}));
}

TEST(Schemes, RingWithinOneSet) {
  Expanded r = meshOf("  - {ep1: {component: a}, ep2: {component: a}, scheme: ring, link: l}\n");
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(edgeList(*r.graph), (V{"x.0.a.0 -- x.0.a.1 l", "x.0.a.0 -- x.0.a.3 l",
                                   "x.0.a.1 -- x.0.a.2 l", "x.0.a.2 -- x.0.a.3 l"}));
}

TEST(Schemes, RingBetweenTwoSetsRotatesTheSecond) {
  // a0-b1, a1-b2, a2-b0.
  Expanded r = meshOf("  - {ep1: {component: \"a[0:3]\"}, ep2: {component: b}, scheme: ring, "
                      "link: l}\n");
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(edgeList(*r.graph),
            (V{"x.0.a.0 -- x.0.b.1 l", "x.0.a.1 -- x.0.b.2 l", "x.0.a.2 -- x.0.b.0 l"}));
}

TEST(Schemes, RingOfTwoIsOneEdge) {
  Expanded r = meshOf("  - {ep1: {component: \"a[0:2]\"}, ep2: {component: \"a[0:2]\"}, scheme: "
                      "ring, link: l}\n");
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(edgeList(*r.graph), (V{"x.0.a.0 -- x.0.a.1 l"}));
}

// --- Composition -------------------------------------------------------------------

namespace {
const char *ComposedDoc = R"(name: composed
devices:
- name: xcvr
  components:
  - {name: lane, count: 2, choice: port}
  links: [{name: e}]
  edges:
  - {ep1: {component: "lane[0]"}, ep2: {component: "lane[1]"}, scheme: one2one, link: e}
- name: nic
  components:
  - {name: pe, count: 1, choice: custom, custom: {type: pcie_endpoint}}
  - {name: xcvr, count: 2, choice: device}
  links: [{name: s}]
  edges:
  - {ep1: {component: pe}, ep2: {device: xcvr, component: "lane[0]"}, scheme: many2many, link: s}
- name: host
  components:
  - {name: cpu, count: 1, choice: cpu}
  - {name: nic, count: 2, choice: device}
  - {name: slot, count: 2, choice: custom, custom: {type: pcie_slot}}
  links: [{name: pcie}]
  edges:
  - {ep1: {device: "nic[0:2]", component: "pe[0]"}, ep2: {component: slot}, scheme: one2one, link: pcie}
instances: [{name: h, device: host, count: 1}]
)";
} // namespace

TEST(Composition, NodesAreNamedAndOrderedDepthFirst) {
  Expanded r = expandText(ComposedDoc);
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(nodeNames(*r.graph),
            (V{"h.0.cpu.0", "h.0.nic.0.pe.0", "h.0.nic.0.xcvr.0.lane.0", "h.0.nic.0.xcvr.0.lane.1",
               "h.0.nic.0.xcvr.1.lane.0", "h.0.nic.0.xcvr.1.lane.1", "h.0.nic.1.pe.0",
               "h.0.nic.1.xcvr.0.lane.0", "h.0.nic.1.xcvr.0.lane.1", "h.0.nic.1.xcvr.1.lane.0",
               "h.0.nic.1.xcvr.1.lane.1", "h.0.slot.0", "h.0.slot.1"}));
}

TEST(Composition, EdgesOfEveryLevel) {
  Expanded r = expandText(ComposedDoc);
  ASSERT_TRUE(r.graph) << r.log;
  EXPECT_EQ(edgeList(*r.graph),
            (V{"h.0.nic.0.pe.0 -- h.0.nic.0.xcvr.0.lane.0 s",
               "h.0.nic.0.pe.0 -- h.0.nic.0.xcvr.1.lane.0 s", "h.0.nic.0.pe.0 -- h.0.slot.0 pcie",
               "h.0.nic.0.xcvr.0.lane.0 -- h.0.nic.0.xcvr.0.lane.1 e",
               "h.0.nic.0.xcvr.1.lane.0 -- h.0.nic.0.xcvr.1.lane.1 e",
               "h.0.nic.1.pe.0 -- h.0.nic.1.xcvr.0.lane.0 s",
               "h.0.nic.1.pe.0 -- h.0.nic.1.xcvr.1.lane.0 s", "h.0.nic.1.pe.0 -- h.0.slot.1 pcie",
               "h.0.nic.1.xcvr.0.lane.0 -- h.0.nic.1.xcvr.0.lane.1 e",
               "h.0.nic.1.xcvr.1.lane.0 -- h.0.nic.1.xcvr.1.lane.1 e"}));
}

TEST(Composition, DeviceFieldEqualsDottedPath) {
  std::string dotted = ComposedDoc;
  std::string from = "{device: \"nic[0:2]\", component: \"pe[0]\"}";
  dotted.replace(dotted.find(from), from.size(), "{component: \"nic[0:2].pe[0]\"}");
  Expanded a = expandText(ComposedDoc), b = expandText(dotted);
  ASSERT_TRUE(a.graph && b.graph) << a.log << b.log;
  EXPECT_EQ(edgeList(*a.graph), edgeList(*b.graph));
}

TEST(Composition, NodeAttributes) {
  // As the reference sets them: `device` is the definition holding the leaf,
  // `composed_device` that device copy's name.
  Expanded r = expandText(ComposedDoc);
  ASSERT_TRUE(r.graph) << r.log;
  const FabricGraph &g = *r.graph;
  NodeId lane = *g.lookup("h.0.nic.1.xcvr.0.lane.1");
  EXPECT_EQ(g.deviceName(lane), "xcvr");
  EXPECT_EQ(g.composedDeviceName(lane), "h.0.nic.1.xcvr.0");
  EXPECT_EQ(g.typeName(lane), "port");
  EXPECT_EQ(g.instances()[g.instanceOf(lane)].name, "h");
  NodeId slot = *g.lookup("h.0.slot.1");
  EXPECT_EQ(g.deviceName(slot), "host");
  EXPECT_EQ(g.composedDeviceName(slot), "h.0");
  EXPECT_EQ(g.typeName(slot), "pcie_slot");
}

TEST(Composition, InfrastructureEdgeIntoComposedDevice) {
  std::string doc = ComposedDoc;
  doc += "links: [{name: eth}]\n"
         "edges:\n"
         "- {ep1: {instance: \"h[0]\", component: \"nic[1].xcvr.lane[1]\"}, ep2: {instance: h, "
         "component: \"slot[0:2]\"}, scheme: one2one, link: eth}\n";
  Expanded r = expandText(doc);
  ASSERT_TRUE(r.graph) << r.log;
  const FabricGraph &g = *r.graph;
  auto joined = [&](const char *a, const char *b) {
    for (const auto &adj : g.neighbours(*g.lookup(a)))
      if (adj.node == *g.lookup(b))
        return g.link(g.edge(adj.edge).link).name;
    return std::string("none");
  };
  EXPECT_EQ(joined("h.0.nic.1.xcvr.0.lane.1", "h.0.slot.0"), "eth");
  EXPECT_EQ(joined("h.0.nic.1.xcvr.1.lane.1", "h.0.slot.1"), "eth");
}

// --- Prefix ranges (used by annotations) --------------------------------------------

TEST(PrefixRange, EveryLevelIsContiguous) {
  Expanded r = expandText(ComposedDoc);
  ASSERT_TRUE(r.graph) << r.log;
  const FabricGraph &g = *r.graph;
  auto range = [&](const char *p) {
    auto x = g.prefixRange(p);
    return x ? std::to_string(x->first) + ".." + std::to_string(x->second) : std::string("none");
  };
  EXPECT_EQ(range("h"), "0..13");
  EXPECT_EQ(range("h.0"), "0..13");
  EXPECT_EQ(range("h.0.nic"), "1..11");
  EXPECT_EQ(range("h.0.nic.1"), "6..11");
  EXPECT_EQ(range("h.0.nic.1.xcvr.1"), "9..11");
  EXPECT_EQ(range("h.0.nic.1.xcvr.1.lane.0"), "9..10");
  EXPECT_EQ(range("h.0.slot"), "11..13");
  EXPECT_EQ(range("h.1"), "none");
  EXPECT_EQ(range("h.00"), "none");
  EXPECT_EQ(range("h.0.cpu.0.x"), "none");
  EXPECT_EQ(range("hh"), "none");
}

// The reference's documentation example ClosFabric (blueprints/fabrics/closfabric.py):
// each host's 2 NICs one2one to all 16 ports of its leaf. The reference zips the two
// sides, so NIC j meets port j and ports 2-15 stay free; infracc does the same and
// says so once per such edge.
TEST(Schemes, One2OneUnequalSidesAsTheReferenceClosFabric) {
  std::string doc = R"(name: closfabric
devices:
- name: server
  components:
  - {name: xpu, count: 2, choice: xpu}
  - {name: nic, count: 2, choice: nic}
  links: [{name: pcie}]
  edges:
  - {ep1: {component: xpu}, ep2: {component: nic}, scheme: one2one, link: pcie}
- name: switch
  components:
  - {name: asic, count: 1, choice: cpu}
  - {name: port, count: 16, choice: port}
  links: [{name: ic}]
  edges:
  - {ep1: {component: asic}, ep2: {component: port}, scheme: many2many, link: ic}
links: [{name: leaf-link}, {name: spine-link}]
instances:
- {name: host, device: server, count: 4}
- {name: leafsw, device: switch, count: 4}
- {name: spinesw, device: switch, count: 3}
edges:
)";
  for (int h = 0; h < 4; ++h)
    doc += "- {ep1: {instance: \"host[" + std::to_string(h) + "]\", component: nic}, ep2: "
           "{instance: \"leafsw[" + std::to_string(h) + "]\", component: port}, scheme: one2one, "
           "link: leaf-link}\n";
  for (int l = 0; l < 4; ++l)
    for (int s = 0; s < 3; ++s)
      doc += "- {ep1: {instance: \"leafsw[" + std::to_string(l) + "]\", component: \"port[" +
             std::to_string(2 + s) + "]\"}, ep2: {instance: \"spinesw[" + std::to_string(s) +
             "]\", component: \"port[" + std::to_string(l) + "]\"}, scheme: one2one, link: "
             "spine-link}\n";
  Expanded r = expandText(doc);
  ASSERT_TRUE(r.graph) << r.log;
  std::vector<std::string> expected;
  for (int h = 0; h < 4; ++h)
    for (int j = 0; j < 2; ++j) {
      std::string x = "host." + std::to_string(h);
      expected.push_back(x + ".xpu." + std::to_string(j) + " -- " + x + ".nic." +
                         std::to_string(j) + " pcie");
      expected.push_back(x + ".nic." + std::to_string(j) + " -- leafsw." + std::to_string(h) +
                         ".port." + std::to_string(j) + " leaf-link");
    }
  for (const char *sw : {"leafsw", "spinesw"})
    for (int c = 0; c < (sw[0] == 'l' ? 4 : 3); ++c)
      for (int p = 0; p < 16; ++p)
        expected.push_back(std::string(sw) + "." + std::to_string(c) + ".asic.0 -- " + sw + "." +
                           std::to_string(c) + ".port." + std::to_string(p) + " ic");
  for (int l = 0; l < 4; ++l)
    for (int s = 0; s < 3; ++s)
      expected.push_back("leafsw." + std::to_string(l) + ".port." + std::to_string(2 + s) +
                         " -- spinesw." + std::to_string(s) + ".port." + std::to_string(l) +
                         " spine-link");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(edgeList(*r.graph), expected);
  size_t warnings = 0;
  for (size_t at = r.log.find("warning: one2one"); at != std::string::npos;
       at = r.log.find("warning: one2one", at + 1))
    ++warnings;
  EXPECT_EQ(warnings, 4u);
  EXPECT_NE(r.log.find("warning: one2one edge joins 2 nodes to 16: made 2 pairs up to the shorter "
                       "side, as InfraGraph's reference does; 14 nodes of the longer side got no "
                       "partner: leafsw.0.port.2, leafsw.0.port.3, leafsw.0.port.4 and 11 more\n"),
            std::string::npos)
      << r.log;
}
