// ir/Paths.h on small fabrics whose paths are derived by hand.
#include "ir/Paths.h"
#include "passes/FabricCosts.h"
#include "tests/infragraph/InfraGraphTestUtil.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

namespace {

NodeId node(const FabricGraph &g, const char *name) {
  auto n = g.lookup(name);
  EXPECT_TRUE(n.has_value()) << name;
  return n.value_or(0);
}

PathFinder finder(const Expanded &e) {
  auto lat = switchLatencies(*e.graph, *e.diags, "t.yaml");
  EXPECT_TRUE(lat.has_value());
  return PathFinder(*e.graph, std::move(*lat));
}

} // namespace

TEST(Paths, SmallCluster) {
  Expanded e = expandText(readFile(sourcePath("tests/passes/inputs/small_cluster.yaml")));
  ASSERT_TRUE(e.graph) << e.log;
  PathFinder p = finder(e);
  // Across hosts: xpu - pciesw - nic - port - asic - port - nic - pciesw - xpu, links
  // 200 + 200 + 1000 + 0 + 0 + 1000 + 200 + 200 = 2800 ns, plus the leaf's 300 ns
  // (once for the whole switch) and the PCIe switches' 0: three switches charged.
  PathInfo a = p.between(node(*e.graph, "host.0.xpu.0"), node(*e.graph, "host.1.xpu.1"));
  EXPECT_TRUE(a.reachable);
  EXPECT_EQ(a.latencyPs, 3100000);
  EXPECT_EQ(a.links, 8u);
  EXPECT_EQ(a.switches, 3u);
  EXPECT_TRUE(a.latencyKnown);
  ASSERT_TRUE(a.bottleneckBps);
  EXPECT_EQ(*a.bottleneckBps, 100e9);
  // Inside a host: over the NVSwitch (100 + 50 + 100), not PCIe (200 + 200).
  PathInfo b = p.between(node(*e.graph, "host.2.xpu.0"), node(*e.graph, "host.2.xpu.1"));
  EXPECT_EQ(b.latencyPs, 250000);
  EXPECT_EQ(b.links, 2u);
  EXPECT_EQ(b.switches, 1u);
  EXPECT_EQ(*b.bottleneckBps, 800e9);
  PathInfo c = p.withinCopy(node(*e.graph, "host.2.xpu.0"), node(*e.graph, "host.2.xpu.1"));
  EXPECT_EQ(c.latencyPs, 250000);
  EXPECT_FALSE(p.withinCopy(node(*e.graph, "host.0.xpu.0"), node(*e.graph, "host.1.xpu.0"))
                   .reachable);
  // The same node: no link.
  PathInfo self = p.between(node(*e.graph, "host.0.xpu.0"), node(*e.graph, "host.0.xpu.0"));
  EXPECT_TRUE(self.reachable);
  EXPECT_EQ(self.links, 0u);
  EXPECT_FALSE(self.bottleneckBps);
  // precompute gives what between() gives.
  NodeId x = node(*e.graph, "host.1.xpu.0");
  std::vector<NodeId> targets{node(*e.graph, "host.0.xpu.0"), node(*e.graph, "host.2.xpu.1")};
  PathFinder q = finder(e);
  q.precompute({x}, {targets});
  EXPECT_EQ(q.cachedPairs(), 2u);
  EXPECT_EQ(q.between(x, targets[1]).latencyPs, 3100000);
}

TEST(Paths, NoTransitThroughOtherHostsUnlessThereIsNoOtherWay) {
  // Hosts h0, h1, h2 in a chain (nic1 of one to nic0 of the next, 10 ns each) and a
  // switch joining h0.nic0 and h2.nic1 (100 ns links). h0 -> h2 through h1 would take
  // 20 ns but crosses a host: the switch path, 200 ns, is used. h3 hangs off h2 only.
  const char *text = R"(name: chain
devices:
- name: h
  components:
  - {name: xpu, count: 1, choice: xpu}
  - {name: nic, count: 2, choice: nic}
  links: [{name: pcie}]
  edges:
  - {ep1: {component: xpu}, ep2: {component: nic}, scheme: many2many, link: pcie}
- name: s
  components:
  - {name: port, count: 2, choice: port}
  links: [{name: ic}]
  edges:
  - {ep1: {component: "port[0]"}, ep2: {component: "port[1]"}, scheme: one2one, link: ic}
links:
- {name: short, physical: {latency: {choice: ns, ns: 10}}}
- {name: long, physical: {latency: {choice: ns, ns: 100}}}
instances:
- {name: h, device: h, count: 4}
- {name: s, device: s, count: 1}
edges:
- {ep1: {instance: "h[0:3]", component: "nic[1]"}, ep2: {instance: "h[1:4]", component: "nic[0]"}, scheme: one2one, link: short}
- {ep1: {instance: "h[0]", component: "nic[0]"}, ep2: {instance: "s[0]", component: "port[0]"}, scheme: one2one, link: long}
- {ep1: {instance: "h[2]", component: "nic[1]"}, ep2: {instance: "s[0]", component: "port[1]"}, scheme: one2one, link: long}
)";
  Expanded e = expandText(text);
  ASSERT_TRUE(e.graph) << e.log;
  PathFinder p = finder(e);
  EXPECT_EQ(p.between(node(*e.graph, "h.0.xpu.0"), node(*e.graph, "h.1.xpu.0")).latencyPs, 10000);
  EXPECT_EQ(p.between(node(*e.graph, "h.0.xpu.0"), node(*e.graph, "h.2.xpu.0")).latencyPs,
            200000);
  // h3 is reached only through h2 (or h1 and h2): 10 + 10 + 10 = 30 ns unrestricted.
  EXPECT_EQ(p.between(node(*e.graph, "h.0.xpu.0"), node(*e.graph, "h.3.xpu.0")).latencyPs, 30000);
}

TEST(Paths, EqualLatencyPathsTakeTheWidest) {
  // a and b joined through two switches with equal latency; one path is 100 Gb/s, the
  // other 200 Gb/s: the bottleneck reported is 200 Gb/s, in either direction.
  const char *text = R"(name: ecmp
devices:
- name: h
  components: [{name: xpu, count: 1, choice: xpu}]
- name: s
  components: [{name: sw, count: 1, choice: switch}]
links:
- {name: slow, physical: {bandwidth: {gigabits_per_second: 100}, latency: {ns: 5}}}
- {name: fast, physical: {bandwidth: {gigabits_per_second: 200}, latency: {ns: 5}}}
instances:
- {name: h, device: h, count: 2}
- {name: s, device: s, count: 2}
edges:
- {ep1: {instance: h, component: xpu}, ep2: {instance: "s[0]", component: sw}, scheme: many2many, link: slow}
- {ep1: {instance: h, component: xpu}, ep2: {instance: "s[1]", component: sw}, scheme: many2many, link: fast}
)";
  Expanded e = expandText(text);
  ASSERT_TRUE(e.graph) << e.log;
  PathFinder p = finder(e);
  PathInfo ab = p.between(node(*e.graph, "h.0.xpu.0"), node(*e.graph, "h.1.xpu.0"));
  PathInfo ba = p.between(node(*e.graph, "h.1.xpu.0"), node(*e.graph, "h.0.xpu.0"));
  EXPECT_EQ(ab.latencyPs, 10000);
  EXPECT_EQ(*ab.bottleneckBps, 200e9);
  EXPECT_EQ(*ba.bottleneckBps, 200e9);
}

