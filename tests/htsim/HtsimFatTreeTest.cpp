// The recognised fat tree is the fabric: with the numbering the backend chose, htsim's
// fixed wiring (FatTreeTopology::init_network) joins exactly the pairs the fabric joins
// (attach points to their ToR, switches to switches), by as many links where the
// fabric's speeds are written as they are. And htsim's arithmetic as the backend
// repeats it.
#include "backends/htsim/FatTree.h"
#include "compiler/frontends/infragraph/InfraGraphReader.h"
#include "support/Diagnostics.h"
#include "tests/blueprints/BlueprintTestUtil.h"
#include "tests/htsim/HtsimTestUtil.h"

#include <llvm/Support/MemoryBuffer.h>

#include <map>
#include <set>

using namespace infracc;
using namespace infracc::test;

namespace {

// Ends of a link: an attach point (node id | AttachKey) or a switch (device copy).
constexpr uint64_t AttachKey = uint64_t(1) << 40;
using LinkCounts = std::map<std::pair<uint64_t, uint64_t>, uint64_t>;

// Links per (lower, upper) pair from the fabric: host side by attach point.
LinkCounts fabricLinks(const FabricGraph &g) {
  LinkCounts m;
  for (const auto &e : g.edges()) {
    uint32_t a = g.deviceCopyOf(e.u), b = g.deviceCopyOf(e.v);
    if (a == b)
      continue;
    auto end = [&](NodeId n, uint32_t copy) -> uint64_t {
      return g.instances()[g.instanceOf(n)].role == InstanceRole::Host ? AttachKey | n : copy;
    };
    uint64_t x = end(e.u, a), y = end(e.v, b);
    ++m[{std::min(x, y), std::max(x, y)}];
  }
  return m;
}

// htsim's wiring for the recognised shape (init_network's loops).
LinkCounts htsimLinks(const htsim::FatTree &ft) {
  const auto &p = ft.params;
  const auto &s = ft.shape;
  LinkCounts m;
  auto add = [&](uint64_t a, uint64_t b, uint64_t n) { m[{std::min(a, b), std::max(a, b)}] += n; };
  const auto &tors = ft.switchesOfTier[0], &aggs = ft.switchesOfTier[1],
             &cores = ft.switchesOfTier[2];
  for (uint64_t tor = 0; tor < s.tors(); ++tor)
    for (uint64_t l = 0; l < p.tier[0].radixDown; ++l)
      add(tors[tor], AttachKey | ft.attachOfNode[tor * p.tier[0].radixDown + l], 1);
  for (uint64_t tor = 0; tor < s.tors(); ++tor) {
    uint64_t pod = tor / s.torsPerPod;
    uint64_t lo = p.tiers == 3 ? pod * s.aggsPerPod : 0;
    uint64_t hi = p.tiers == 3 ? (pod + 1) * s.aggsPerPod : s.aggs();
    for (uint64_t agg = lo; agg < hi; ++agg)
      add(tors[tor], aggs[agg], p.tier[1].bundle);
  }
  if (p.tiers == 3)
    for (uint64_t agg = 0; agg < s.aggs(); ++agg)
      for (uint64_t l = 0; l < p.tier[1].radixUp / p.tier[2].bundle; ++l)
        add(aggs[agg], cores[agg % s.aggsPerPod + s.aggsPerPod * l], p.tier[2].bundle);
  return m;
}

// The linked pairs alone (for fabrics whose uplinks fabric.topo writes as other bundles).
std::set<std::pair<uint64_t, uint64_t>> pairs(const LinkCounts &m) {
  std::set<std::pair<uint64_t, uint64_t>> s;
  for (const auto &[k, n] : m)
    s.insert(k);
  return s;
}

htsim::FatTree recognise(const FabricGraph &g, std::string *warnings = nullptr) {
  std::string log;
  llvm::raw_string_ostream os(log);
  DiagEngine diags(os);
  auto ft = htsim::recogniseFatTree(g, diags, "test", {});
  EXPECT_TRUE(ft.has_value()) << log;
  if (warnings)
    *warnings = log;
  return ft ? *ft : htsim::FatTree();
}

// Exact wiring; returns the fat tree for further checks.
htsim::FatTree expectWiring(const std::string &spec, std::string *warnings = nullptr) {
  Built b = buildFabric(spec);
  EXPECT_TRUE(b.graph) << b.log;
  if (!b.graph)
    return htsim::FatTree();
  htsim::FatTree ft = recognise(*b.graph, warnings);
  EXPECT_EQ(fabricLinks(*b.graph), htsimLinks(ft)) << spec;
  return ft;
}

std::unique_ptr<FabricGraph> fromYaml(const std::string &yaml, std::string &log) {
  llvm::raw_string_ostream os(log);
  DiagEngine diags(os);
  unsigned id = diags.addBuffer(llvm::MemoryBuffer::getMemBufferCopy(yaml, "test.yaml"));
  auto defs = infragraph::read(*diags.sourceMgr().getMemoryBuffer(id), infragraph::Syntax::Yaml,
                               diags);
  return defs ? expandFabric(defs, diags) : nullptr;
}

} // namespace

TEST(HtsimFatTree, LeafSpineWiring) {
  expectWiring("leaf_spine:leaves=4,spines=2,hosts_per_leaf=2,host=simple_host,bw1=100G,"
               "lat0=1us,lat1=1us");
}
TEST(HtsimFatTree, LeafSpineBundlesWiring) {
  expectWiring("leaf_spine:leaves=4,spines=2,hosts_per_leaf=4,bundle=2,host=simple_host,"
               "bw1=100G,lat0=1us,lat1=1us");
}
TEST(HtsimFatTree, OversubscribedClosWiring) {
  expectWiring("clos:radix=8,oversub0=3,host=simple_host,bw1=100G,lat0=1us,lat1=1us");
}
TEST(HtsimFatTree, ThreeTierClosWiring) {
  expectWiring("clos:radix=8,levels=3,host=simple_host,bw1=100G,bw2=100G,lat0=1us,lat1=1us,"
               "lat2=1us");
}
TEST(HtsimFatTree, ThreeTierClosWithCoreBundlesWiring) {
  expectWiring("clos:radix=8,levels=3,bundle2=2,host=simple_host,bw1=100G,bw2=100G,lat0=1us,"
               "lat1=1us,lat2=1us");
}

// NIC level: a DGX H100 host is 8 nodes on 8 ToRs of a rail-optimised fabric, ToRs
// (rails) of a group in order, and 8 nodes on one ToR of a Clos.
TEST(HtsimFatTree, RailWiring) {
  std::string warnings;
  htsim::FatTree ft = expectWiring("rail:radix=16,lat0=500ns,lat1=500ns", &warnings);
  EXPECT_EQ(warnings, "");
  EXPECT_EQ(ft.params.nodes, 128u);
  EXPECT_EQ(ft.params.tier[0].radixDown, 8u);
  EXPECT_EQ(ft.params.tier[0].radixUp, 8u);
  EXPECT_EQ(ft.params.tier[1].speedGbps, 400u);
  Built b = buildFabric("rail:radix=16");
  ASSERT_TRUE(b.graph);
  // Node 8r + h is NIC r of host h (group 0); node 64 starts group 1.
  EXPECT_EQ(b.graph->name(ft.attachOfNode[0]), "dgx_h100.0.cx7.0");
  EXPECT_EQ(b.graph->name(ft.attachOfNode[1]), "dgx_h100.1.cx7.0");
  EXPECT_EQ(b.graph->name(ft.attachOfNode[8]), "dgx_h100.0.cx7.1");
  EXPECT_EQ(b.graph->name(ft.attachOfNode[64]), "dgx_h100.8.cx7.0");
}

TEST(HtsimFatTree, DgxClosWiring) {
  htsim::FatTree ft = expectWiring("clos:radix=16,host=dgx_h100,bw1=100G,lat0=1us,lat1=1us");
  EXPECT_EQ(ft.params.nodes, 128u);
  EXPECT_EQ(ft.params.tier[0].radixDown, 8u);
}

TEST(HtsimFatTree, DgxClosThreeTierWiring) {
  htsim::FatTree ft = expectWiring("clos:radix=16,levels=3,host=dgx_h100,bw1=100G,bw2=100G,"
                                   "lat0=1us,lat1=1us,lat2=1us");
  EXPECT_EQ(ft.params.nodes, 1024u);
  EXPECT_EQ(ft.shape.pods, 16u);
}

TEST(HtsimFatTree, ComposedNicPortsAreNodes) {
  htsim::FatTree ft = expectWiring("clos:radix=32,host=dgx_h100(nic_device=cx5),bw1=100G,"
                                   "lat0=1us,lat1=1us");
  EXPECT_EQ(ft.params.nodes, 512u);   // 32 hosts x 8 NICs x 2 ports
}

// Uplinks 4 times as fast as the attach points' links: written as bundles of 4 links
// at the attach points' speed, the same bandwidth.
TEST(HtsimFatTree, FasterUplinksAsBundles) {
  Built b = buildFabric("leaf_spine:leaves=4,spines=2,hosts_per_leaf=8,host=simple_host,"
                        "bw1=400G,lat0=1us,lat1=1us");
  ASSERT_TRUE(b.graph) << b.log;
  std::string warnings;
  htsim::FatTree ft = recognise(*b.graph, &warnings);
  EXPECT_EQ(warnings, "");
  EXPECT_EQ(pairs(fabricLinks(*b.graph)), pairs(htsimLinks(ft)));
  EXPECT_EQ(ft.params.tier[0].radixUp, 8u);
  EXPECT_EQ(ft.params.tier[0].oversubscribed, 1u);
  EXPECT_EQ(ft.params.tier[1].bundle, 4u);
  EXPECT_EQ(ft.params.tier[1].speedGbps, 100u);
  EXPECT_EQ(ft.upPaths, 8u);
  EXPECT_EQ(ft.notes, (std::vector<std::string>{
                          "tier-1 links: the fabric's 2 uplinks per ToR at 400 Gb/s are written "
                          "as Bundle 4 of 100 Gb/s links per tier-1 switch (the same 800 Gb/s; "
                          "htsim derives the uplinks from the tier-0 speed)"}));
}

// The clos blueprint at radix 8 (100G host links, 200G uplinks, as many as attach points):
// the warning for its capped tier-1 links.
const std::string ClosRadix8Tier1Capped =
    "test: warning: htsim gives no switch more uplink than downlink bandwidth: the tier-0 "
    "switches have 4 attach points at 100 Gb/s (400 Gb/s) and 4 uplinks at 200 Gb/s (800 "
    "Gb/s); fabric.topo gives them 4 uplinks at 100 Gb/s (400 Gb/s), so the uplinks are busier "
    "than in the fabric (tier-1 links of 100 Gb/s, e.g. the blueprints' bw1=100G, avoid "
    "this)\n";

// InfraGraph's reference ClosFatTreeFabric (examples/clos-2tier.yaml): 2 NICs per server
// on one ToR, 100G host links and 200G uplinks, as many uplinks as attach points. htsim
// gives no switch more uplink than downlink bandwidth: the uplinks are capped, with a
// warning.
TEST(HtsimFatTree, ReferenceClosCapped) {
  std::string log;
  auto g = fromYaml(readFile(sourcePath("examples/clos-2tier.yaml")), log);
  ASSERT_TRUE(g) << log;
  std::string warnings;
  htsim::FatTree ft = recognise(*g, &warnings);
  EXPECT_EQ(fabricLinks(*g), htsimLinks(ft));
  EXPECT_EQ(ft.params.nodes, 32u);
  EXPECT_EQ(ft.params.tier[1].speedGbps, 100u);
  EXPECT_EQ(warnings,
            ClosRadix8Tier1Capped +
            "test: warning: links 'tier_0_link', 'tier_1_link' have no latency; fabric.topo "
            "gives them htsim's default hop latency, 1000 ns (-htsim-link-latency=<ns> sets "
            "another; the blueprints' lat0=, lat1=, lat2= give links one)\n");
  EXPECT_EQ(ft.notes, (std::vector<std::string>{
                          "tier-1 links capped: the fabric's 4 uplinks per ToR at 200 Gb/s (800 "
                          "Gb/s) are written as 4 at 100 Gb/s (400 Gb/s, what the ToR's attach "
                          "points can send)"}));
}

// The 3-level reference fabric (clos:radix=8,levels=3: 100G, 200G, 400G): both uplink
// tiers capped to the bandwidth below them.
TEST(HtsimFatTree, ThreeTierClosCappedTwice) {
  std::string warnings;
  Built b = buildFabric("clos:radix=8,levels=3,lat0=1us,lat1=1us,lat2=1us");
  ASSERT_TRUE(b.graph) << b.log;
  htsim::FatTree ft = recognise(*b.graph, &warnings);
  EXPECT_EQ(fabricLinks(*b.graph), htsimLinks(ft));
  EXPECT_EQ(ft.params.tier[1].speedGbps, 100u);
  EXPECT_EQ(ft.params.tier[2].speedGbps, 100u);
  EXPECT_EQ(ft.params.tier[1].oversubscribed, 1u);
  EXPECT_EQ(warnings,
            ClosRadix8Tier1Capped +
            "test: warning: htsim gives no switch more uplink than downlink bandwidth: the "
            "tier-1 switches have 4 downlinks at 100 Gb/s (400 Gb/s in fabric.topo) and 4 "
            "uplinks at 400 Gb/s (1600 Gb/s); fabric.topo gives them 4 uplinks at 100 Gb/s (400 "
            "Gb/s), so the uplinks are busier than in the fabric (tier-2 links of 100 Gb/s, e.g. "
            "the clos blueprint's bw2=100G, avoid this)\n");
}

// Copies numbered against htsim's order: hosts on ToRs in reverse, ToRs of pod 1
// before pod 0, core planes swapped. The backend renumbers; the wiring still matches.
TEST(HtsimFatTree, ScrambledThreeTierWiring) {
  YamlFabric f;
  f.hosts = 8;
  f.links = {{"h"}, {"a"}, {"c"}};
  f.switches = {{"tor", 4}, {"agg", 4}, {"core", 4}};
  const int torOfHost[8] = {3, 0, 1, 1, 2, 2, 0, 3};
  for (int h = 0; h < 8; ++h)
    f.link("host", h, "tor", torOfHost[h], "h");
  // Pods: {tor 0, tor 2; agg 1, agg 2} and {tor 1, tor 3; agg 0, agg 3}.
  const int podOfTor[4] = {0, 1, 0, 1};
  const int aggsOfPod[2][2] = {{1, 2}, {0, 3}};
  for (int t = 0; t < 4; ++t)
    for (int a : aggsOfPod[podOfTor[t]])
      f.link("tor", t, "agg", a, "a");
  // Planes: {agg 1, agg 3} -> cores {2, 3}; {agg 2, agg 0} -> cores {0, 1}.
  for (int a : {1, 3})
    for (int c : {2, 3})
      f.link("agg", a, "core", c, "c");
  for (int a : {2, 0})
    for (int c : {0, 1})
      f.link("agg", a, "core", c, "c");
  std::string log;
  auto g = fromYaml(f.yaml(), log);
  ASSERT_TRUE(g) << log;
  htsim::FatTree ft = recognise(*g);
  EXPECT_EQ(fabricLinks(*g), htsimLinks(ft));
  // Pods in the order of their first host (pod 1: tors 3 and 1 with hosts 0, 7, 2, 3;
  // pod 0: tors 0 and 2 with hosts 1, 6, 4, 5), ToRs likewise, hosts in order on a ToR.
  std::vector<std::string> order;
  for (NodeId n : ft.attachOfNode)
    order.push_back(g->name(n));
  EXPECT_EQ(order, (std::vector<std::string>{"host.0.nic.0", "host.7.nic.0", "host.2.nic.0",
                                             "host.3.nic.0", "host.1.nic.0", "host.6.nic.0",
                                             "host.4.nic.0", "host.5.nic.0"}));
}

// deriveHtsimShape against htsim's own printout ("No of pods", "ToR switches per pod",
// "Agg switches per pod", "No of core switches", "no_of_tor_uplinks"), measured by
// running csg-htsim 841d9e7's htsim_eqds on .topo files with these values.
TEST(HtsimFatTree, DerivationMatchesHtsim) {
  struct Case {
    htsim::TopoParams p;
    uint64_t pods, torsPerPod, aggsPerPod, cores, torUplinks;
  };
  auto tier = [](uint64_t gbps, uint64_t down, uint64_t up, uint64_t os, uint64_t bundle) {
    htsim::TopoTier t;
    t.speedGbps = gbps;
    t.latencyNs = 500;
    t.radixDown = down;
    t.radixUp = up;
    t.oversubscribed = os;
    t.bundle = bundle;
    return t;
  };
  std::vector<Case> cases = {
      // 16 hosts, 4 ToRs x 4 spines: htsim printed 1 pod, 4, 4, 0 cores, 16 uplinks.
      {{16, 2, 16, {tier(100, 4, 4, 1, 1), tier(100, 4, 0, 1, 1)}}, 1, 4, 4, 0, 16},
      // 32 hosts, 4:1 at the ToRs: 1 pod, 4 ToRs, 2 spines, 8 uplinks.
      {{32, 2, 32, {tier(100, 8, 2, 4, 1), tier(100, 4, 0, 1, 1)}}, 1, 4, 2, 0, 8},
      // k=4 3-tier (16 hosts): 4 pods, 2, 2, 4 cores, 16 uplinks.
      {{16, 3, 4, {tier(100, 2, 2, 1, 1), tier(100, 2, 2, 1, 1), tier(100, 4, 0, 1, 1)}},
       4, 2, 2, 4, 16},
      // k=8 3-tier (128 hosts): 8 pods, 4, 4, 16 cores, 128 uplinks.
      {{128, 3, 16, {tier(100, 4, 4, 1, 1), tier(100, 4, 4, 1, 1), tier(100, 8, 0, 1, 1)}},
       8, 4, 4, 16, 128},
  };
  for (const Case &c : cases) {
    std::string why;
    auto s = htsim::deriveHtsimShape(c.p, why);
    ASSERT_TRUE(s.has_value()) << why;
    EXPECT_EQ(s->pods, c.pods);
    EXPECT_EQ(s->torsPerPod, c.torsPerPod);
    EXPECT_EQ(s->aggsPerPod, c.aggsPerPod);
    EXPECT_EQ(s->cores, c.cores);
    EXPECT_EQ(s->torUplinks, c.torUplinks);
  }
}

TEST(HtsimFatTree, DerivationRefusals) {
  htsim::TopoParams p;
  p.nodes = 32;
  p.tiers = 2;
  p.podsize = 32;
  p.tier[0] = {100, 500, 0, 8, 2, 4, 1};
  p.tier[1] = {100, 500, 0, 4, 0, 1, 1};
  std::string why;
  ASSERT_TRUE(htsim::deriveHtsimShape(p, why)) << why;
  p.tier[0].oversubscribed = 3;
  EXPECT_FALSE(htsim::deriveHtsimShape(p, why));
  EXPECT_EQ(why, "ToR uplinks = Nodes x s0 / (s1 x Oversubscribed0) = 32 x 100 / (100 x 3) is not "
                 "a whole number");
  p.tier[0].oversubscribed = 2;
  EXPECT_FALSE(htsim::deriveHtsimShape(p, why));
  EXPECT_EQ(why, "tier 0: Radix_Down / Radix_Up = 8 / 2 = 4 (integer division) differs from "
                 "Oversubscribed 2");
  p.tier[0].oversubscribed = 4;
  p.tier[1].bundle = 2;
  EXPECT_FALSE(htsim::deriveHtsimShape(p, why));
  EXPECT_EQ(why, "8 ToR uplinks in 1 pod give 2 tier-1 switches per pod, which with tier 1's "
                 "Bundle 2 need a tier-0 Radix_Up of 4, not 2");
  p.tier[1].bundle = 1;
  p.podsize = 12;
  EXPECT_FALSE(htsim::deriveHtsimShape(p, why));
  EXPECT_EQ(why, "Nodes 32 is not a multiple of Podsize 12");
  p.podsize = 32;
  p.tier[0].latencyNs = 0;
  EXPECT_FALSE(htsim::deriveHtsimShape(p, why));
  EXPECT_EQ(why, "tier 0: Downlink_Latency_ns is missing or 0");
}
