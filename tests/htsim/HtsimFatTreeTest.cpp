// The recognised fat tree is the fabric: with the numbering the backend chose, htsim's
// fixed wiring (FatTreeTopology::init_network) joins exactly the pairs the fabric joins,
// by as many links. And htsim's arithmetic as the backend repeats it.
#include "backends/htsim/FatTree.h"
#include "compiler/frontends/infragraph/InfraGraphReader.h"
#include "support/Diagnostics.h"
#include "tests/blueprints/BlueprintTestUtil.h"
#include "tests/htsim/HtsimTestUtil.h"

#include <llvm/Support/MemoryBuffer.h>

#include <map>

using namespace infracc;
using namespace infracc::test;

namespace {

// Links between device copies per (lower, upper) pair, from the fabric.
std::map<std::pair<uint32_t, uint32_t>, uint64_t> copyLinks(const FabricGraph &g) {
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> m;
  for (const auto &e : g.edges()) {
    uint32_t a = g.deviceCopyOf(e.u), b = g.deviceCopyOf(e.v);
    if (a != b)
      ++m[{std::min(a, b), std::max(a, b)}];
  }
  return m;
}

// htsim's wiring for the recognised shape, in device copies (init_network's loops).
std::map<std::pair<uint32_t, uint32_t>, uint64_t> htsimLinks(const htsim::FatTree &ft) {
  const auto &p = ft.params;
  const auto &s = ft.shape;
  std::map<std::pair<uint32_t, uint32_t>, uint64_t> m;
  auto add = [&](uint32_t a, uint32_t b, uint64_t n) { m[{std::min(a, b), std::max(a, b)}] += n; };
  const auto &tors = ft.switchesOfTier[0], &aggs = ft.switchesOfTier[1],
             &cores = ft.switchesOfTier[2];
  for (uint64_t tor = 0; tor < s.tors(); ++tor)
    for (uint64_t l = 0; l < p.tier[0].radixDown; ++l)
      add(tors[tor], ft.hostOfNode[tor * p.tier[0].radixDown + l], 1);
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

htsim::FatTree recognise(const FabricGraph &g) {
  std::string log;
  llvm::raw_string_ostream os(log);
  DiagEngine diags(os);
  auto ft = htsim::recogniseFatTree(g, diags, "test", {});
  EXPECT_TRUE(ft.has_value()) << log;
  return ft ? *ft : htsim::FatTree{};
}

void expectWiring(const std::string &spec) {
  Built b = buildFabric(spec);
  ASSERT_TRUE(b.graph) << b.log;
  htsim::FatTree ft = recognise(*b.graph);
  EXPECT_EQ(copyLinks(*b.graph), htsimLinks(ft)) << spec;
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
  EXPECT_EQ(copyLinks(*g), htsimLinks(ft));
  // Pods in the order of their first host (pod 1: tors 3 and 1 with hosts 0, 7, 2, 3;
  // pod 0: tors 0 and 2 with hosts 1, 6, 4, 5), ToRs likewise, hosts in order on a ToR.
  std::vector<uint32_t> hostIndex;
  for (uint32_t c : ft.hostOfNode)
    hostIndex.push_back(c);   // hosts are copies 0..7 (first instance)
  EXPECT_EQ(hostIndex, (std::vector<uint32_t>{0, 7, 2, 3, 1, 6, 4, 5}));
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
