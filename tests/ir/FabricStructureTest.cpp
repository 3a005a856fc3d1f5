// The structure analysis on small hand-built fabrics: tiers by distance from hosts,
// switches no host reaches, links without bandwidth, disconnected hosts, the diameter's
// lower-bound mode.
#include "ir/FabricStructure.h"
#include "support/Diagnostics.h"

#include <gtest/gtest.h>

using namespace infracc;

namespace {

PathElem elem(std::string name) { return PathElem{std::move(name), std::nullopt, {}}; }
PathElem index(std::string name, int64_t i) {
  Slice s;
  s.isIndex = true;
  s.start = i;
  return PathElem{std::move(name), s, {}};
}

Component comp(std::string name, ComponentKind kind, uint64_t count) {
  Component c;
  c.name = std::move(name);
  c.kind = kind;
  c.count = count;
  return c;
}

// hosts h0..h3 (1 nic), leaves l0, l1 (4 ports), spine s0 (2 ports), and a lone switch
// `spare`. h0, h1 on l0; h2, h3 on l1; l0 and l1 on s0. Host links 100G, leaf-spine
// links without a bandwidth.
std::shared_ptr<Infrastructure> twoTier() {
  auto in = std::make_shared<Infrastructure>();
  in->name = "t";
  in->origin = "t.yaml";
  DeviceDef host;
  host.name = "host";
  host.components = {comp("nic", ComponentKind::Nic, 1)};
  DeviceDef sw;
  sw.name = "sw";
  sw.components = {comp("asic", ComponentKind::Cpu, 1), comp("port", ComponentKind::Port, 4)};
  sw.links = {LinkDef{"ic", "", std::nullopt, std::nullopt, {}}};
  DeviceEdge ic;
  ic.ep1 = {elem("asic")};
  ic.ep2 = {elem("port")};
  ic.scheme = Scheme::Many2Many;
  ic.link = "ic";
  sw.edges = {ic};
  in->devices = {host, sw};
  in->links = {LinkDef{"down", "", Bandwidth::gigabitsPerSec(100), std::nullopt, {}},
               LinkDef{"up", "", std::nullopt, std::nullopt, {}}};
  in->instances = {Instance{"h", "host", "", 4, {}, {}, {}},
                   Instance{"leaf", "sw", "", 2, {}, {}, {}},
                   Instance{"spine", "sw", "", 1, {}, {}, {}},
                   Instance{"spare", "sw", "", 1, {}, {}, {}}};
  auto edge = [&](PathElem i1, PathElem c1, PathElem i2, PathElem c2, const char *link) {
    InfraEdge e;
    e.ep1 = {std::move(i1), {std::move(c1)}};
    e.ep2 = {std::move(i2), {std::move(c2)}};
    e.link = link;
    in->edges.push_back(std::move(e));
  };
  for (int h = 0; h < 4; ++h)
    edge(index("h", h), index("nic", 0), index("leaf", h / 2), index("port", h % 2), "down");
  for (int l = 0; l < 2; ++l)
    edge(index("leaf", l), index("port", 2), index("spine", 0), index("port", l), "up");
  return in;
}

std::unique_ptr<FabricGraph> expand(std::shared_ptr<Infrastructure> in) {
  std::string log;
  llvm::raw_string_ostream os(log);
  DiagEngine diags(os);
  auto g = expandFabric(std::move(in), diags);
  EXPECT_TRUE(g) << log;
  return g;
}

} // namespace

TEST(FabricStructure, TiersAndLinksWithoutBandwidth) {
  auto g = expand(twoTier());
  ASSERT_TRUE(g);
  FabricStructure s = analyzeFabricStructure(*g);
  EXPECT_EQ(s.hosts, 4u);
  EXPECT_EQ(s.nics, 4u);
  EXPECT_EQ(s.hostPorts, 4u);   // each host's nic is linked to a leaf
  EXPECT_EQ(s.switches, 4u);
  EXPECT_EQ(s.unattachedSwitches, 1u);
  ASSERT_EQ(s.tiers.size(), 2u);
  EXPECT_EQ(s.tiers[0].switches, 2u);
  EXPECT_EQ(s.tiers[1].switches, 1u);
  EXPECT_EQ(s.tiers[1].instances, std::vector<uint32_t>{2});
  // Copies: h0-h3, leaf 0-1, spine 0, spare 0.
  EXPECT_EQ(s.copyTier, (std::vector<int32_t>{HostTier, HostTier, HostTier, HostTier, 0, 0, 1,
                                              NoTier}));
  // Tier 0: 4 links down (100G), 2 up without bandwidth: the ratio falls back to counts.
  EXPECT_FALSE(s.tiers[0].bandwidthKnown);
  EXPECT_EQ(s.tiers[0].oversubscription, 2.0);
  EXPECT_FALSE(s.tiers[1].oversubscription);
  ASSERT_EQ(s.linkClasses.size(), 2u);
  EXPECT_EQ(s.linkClasses[0].lower, HostTier);
  EXPECT_EQ(s.linkClasses[0].links, 4u);
  EXPECT_EQ(s.linkClasses[0].uniformBps, 100e9);
  EXPECT_FALSE(s.linkClasses[1].bandwidthKnown);
  EXPECT_EQ(s.linkClasses[1].linkNames, std::vector<std::string>{"up"});
  // Hosts h0, h1 against h2, h3: one leaf uplink each way, counted in links.
  ASSERT_TRUE(s.bisection);
  EXPECT_EQ(s.bisection->links, 1u);
  EXPECT_FALSE(s.bisection->bps);
  EXPECT_TRUE(s.hostsConnected);
  EXPECT_EQ(s.diameterHops, 4u);
}

TEST(FabricStructure, DisconnectedHosts) {
  auto in = twoTier();
  in->edges.pop_back();   // leaf 1 loses its uplink
  auto g = expand(in);
  ASSERT_TRUE(g);
  FabricStructure s = analyzeFabricStructure(*g);
  EXPECT_FALSE(s.hostsConnected);
  EXPECT_FALSE(s.diameterHops);
  ASSERT_TRUE(s.bisection);
  EXPECT_EQ(s.bisection->links, 0u);
}

TEST(FabricStructure, DiameterLowerBoundWhenTooLarge) {
  auto g = expand(twoTier());
  ASSERT_TRUE(g);
  StructureOptions opts;
  opts.diameterWorkLimit = 0;
  FabricStructure s = analyzeFabricStructure(*g, opts);
  EXPECT_TRUE(s.diameterIsLowerBound);
  EXPECT_EQ(s.diameterHops, 4u);   // the sample covers every host of so small a fabric
}

TEST(FabricStructure, CopyGraph) {
  auto g = expand(twoTier());
  ASSERT_TRUE(g);
  CopyGraph cg = buildCopyGraph(*g);
  ASSERT_EQ(cg.numCopies(), 8u);
  // leaf 0 (copy 4): h0, h1 and the spine.
  std::vector<uint32_t> nbrs;
  for (uint32_t k = cg.begin[4]; k < cg.begin[5]; ++k)
    nbrs.push_back(cg.arcs[k].to);
  EXPECT_EQ(nbrs, (std::vector<uint32_t>{0, 1, 6}));
  EXPECT_EQ(cg.arcs[cg.begin[4]].bps, 100e9);
  EXPECT_FALSE(cg.arcs[cg.begin[4] + 2].bandwidthKnown);
  EXPECT_EQ(cg.begin[8] - cg.begin[7], 0u);   // spare
}
