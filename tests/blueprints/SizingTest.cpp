// Sizing formulas across parameter grids: the number of copies of every instance and the
// number of expanded edges of every link, against the closed-form expressions of
// docs/blueprints.md; plus structural properties of every generated fabric (hosts all
// reach each other, no port or NIC cabled twice) and the structure analysis (tiers,
// oversubscription, bisection, diameter) where it has a closed form.
#include "ir/FabricStructure.h"
#include "tests/blueprints/BlueprintTestUtil.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

using namespace infracc;
using namespace infracc::test;

namespace {

using Counts = std::map<std::string, uint64_t>;

// No port and no NIC has more than one edge leaving its device copy; `allUsed` also
// requires exactly one for every port.
void expectPortsUsedOnce(const FabricGraph &g, bool allUsed, const std::string &what) {
  uint64_t unused = 0;
  for (NodeId v = 0; v < g.numNodes(); ++v) {
    ComponentKind k = g.kind(v);
    if (k != ComponentKind::Port && k != ComponentKind::Nic)
      continue;
    uint32_t outside = 0;
    for (const auto &a : g.neighbours(v))
      outside += g.deviceCopyOf(a.node) != g.deviceCopyOf(v);
    ASSERT_LE(outside, 1u) << what << ": " << g.name(v) << " is cabled " << outside << " times";
    unused += outside == 0 && k == ComponentKind::Port;
  }
  if (allUsed) {
    EXPECT_EQ(unused, 0u) << what;
  }
}

struct ClosCase {
  uint64_t k, levels, n, os0, os1, b1, b2;
};

std::string closSpec(const ClosCase &c) {
  return fmt::format("clos:radix={},levels={},host=simple_host(nics={}),oversub0={},bundle1={},"
                     "bw0=100G,bw1=100G{}",
                     c.k, c.levels, c.n, c.os0, c.b1,
                     c.levels == 3
                         ? fmt::format(",oversub1={},bundle2={},bw2=100G", c.os1, c.b2)
                         : std::string());
}

} // namespace

TEST(BlueprintSizing, ClosGrid) {
  unsigned valid = 0, invalid = 0;
  for (uint64_t k : {4, 6, 8, 10, 12, 16, 24})
    for (uint64_t levels : {2, 3})
      for (uint64_t n : {1, 2, 3, 4})
        for (uint64_t os0 : {1, 2, 3})
          for (uint64_t os1 : {1, 3})
            for (uint64_t b1 : {1, 2})
              for (uint64_t b2 : {1, 2}) {
                if (levels == 2 && (os1 != 1 || b2 != 1))
                  continue;
                ClosCase c{k, levels, n, os0, os1, b1, b2};
                std::string spec = closSpec(c);
                // Closed forms (docs/blueprints.md, "clos").
                uint64_t down0 = k * os0 / (os0 + 1), up0 = k / (os0 + 1);
                uint64_t down1 = k * os1 / (os1 + 1), up1 = k / (os1 + 1);
                bool ok = k % (os0 + 1) == 0 && down0 % n == 0 && up0 % b1 == 0;
                if (levels == 3)
                  ok = ok && k % (os1 + 1) == 0 && down1 % b1 == 0 && up1 % b2 == 0;
                Built b = buildFabric(spec);
                if (!ok) {
                  EXPECT_FALSE(b.defs) << spec;
                  EXPECT_NE(b.log.find("error: "), std::string::npos) << spec;
                  ++invalid;
                  continue;
                }
                ++valid;
                ASSERT_TRUE(b.graph) << spec << "\n" << b.log;
                EXPECT_EQ(b.log, "") << spec;
                uint64_t t0, t1, t2 = 0;
                Counts links;
                if (levels == 2) {
                  t0 = k / b1;
                  t1 = up0 / b1;
                } else {
                  uint64_t leavesPerPod = down1 / b1, aggsPerPod = up0 / b1, pods = k / b2;
                  t0 = pods * leavesPerPod;
                  t1 = pods * aggsPerPod;
                  t2 = aggsPerPod * (up1 / b2);
                  links["tier_2_link"] = t1 * up1;
                  EXPECT_EQ(t2 * k, t1 * up1) << spec;   // every core port used
                }
                uint64_t hosts = t0 * down0 / n;
                links["tier_0_link"] = hosts * n;
                links["tier_1_link"] = t0 * up0;
                links["ic"] = (t0 + t1 + t2) * k;
                links["pcie"] = hosts * n;
                Counts inst{{"simple_host", hosts}, {"tier_0", t0}, {"tier_1", t1}};
                if (levels == 3)
                  inst["tier_2"] = t2;
                EXPECT_EQ(instanceCounts(*b.graph), inst) << spec;
                EXPECT_EQ(edgesPerLink(*b.graph), links) << spec;
                EXPECT_EQ(b.graph->numNodes(), hosts * (1 + n) + (t0 + t1 + t2) * (k + 1)) << spec;
                expectPortsUsedOnce(*b.graph, true, spec);

                FabricStructure s = analyzeFabricStructure(*b.graph);
                EXPECT_TRUE(s.hostsConnected) << spec;
                EXPECT_EQ(s.hosts, hosts) << spec;
                ASSERT_EQ(s.tiers.size(), levels) << spec;
                EXPECT_EQ(s.tiers[0].switches, t0) << spec;
                EXPECT_EQ(s.tiers[1].switches, t1) << spec;
                EXPECT_EQ(s.tiers[0].downLinks, hosts * n) << spec;
                EXPECT_EQ(s.tiers[0].upLinks, t0 * up0) << spec;
                EXPECT_EQ(s.tiers[0].oversubscription, double(os0)) << spec;
                if (levels == 3) {
                  EXPECT_EQ(s.tiers[1].oversubscription, double(os1)) << spec;
                  EXPECT_EQ(s.tiers[2].switches, t2) << spec;
                }
                EXPECT_FALSE(s.tiers.back().oversubscription) << spec;
                EXPECT_EQ(s.diameterHops, levels == 2 ? 4u : 6u) << spec;
                EXPECT_FALSE(s.diameterIsLowerBound);
                // Hosts split at a tier-0 (2 levels) or pod (3 levels) boundary: the tier-0
                // uplinks of one half carry everything across.
                uint64_t units = levels == 2 ? t0 : k / b2;
                if (units % 2 == 0 && (levels == 2 || os1 == 1)) {
                  ASSERT_TRUE(s.bisection && s.bisection->bps) << spec;
                  EXPECT_EQ(*s.bisection->bps, double(t0 / 2 * up0) * 100e9) << spec;
                }
              }
  EXPECT_GT(valid, 100u);
  EXPECT_GT(invalid, 100u);
}

TEST(BlueprintSizing, DragonflyGrid) {
  unsigned valid = 0;
  for (uint64_t a : {1, 2, 3, 4, 5})
    for (uint64_t p : {1, 2, 4})
      for (uint64_t h : {1, 2, 3})
        for (uint64_t n : {1, 2})
          for (uint64_t groupsChoice : {0, 1, 2}) {
            uint64_t maxGroups = a * h + 1;
            uint64_t groups = groupsChoice == 0 ? maxGroups
                              : groupsChoice == 1 ? 2
                                                  : (maxGroups + 2) / 2;
            if (p % n != 0 || groups < 2)
              continue;
            std::string spec = fmt::format("dragonfly:a={},p={},h={},host=simple_host(nics={}){}",
                                           a, p, h, n,
                                           groupsChoice ? fmt::format(",groups={}", groups) : "");
            Built b = buildFabric(spec);
            ASSERT_TRUE(b.graph) << spec << "\n" << b.log;
            ++valid;
            uint64_t routers = groups * a, ports = p + a - 1 + h;
            uint64_t perPair = a * h / (groups - 1);
            Counts links{{"host_switch_link", routers * p},
                         {"inter_switch_link", perPair * groups * (groups - 1) / 2},
                         {"ic", routers * ports},
                         {"pcie", routers * p}};
            if (a > 1)
              links["intra_switch_link"] = groups * a * (a - 1) / 2;
            EXPECT_EQ(instanceCounts(*b.graph),
                      (Counts{{"simple_host", routers * p / n}, {"router", routers}}))
                << spec;
            EXPECT_EQ(edgesPerLink(*b.graph), links) << spec;
            // Global ports left over when a*h is not a multiple of groups-1.
            uint64_t unusedPorts = groups * (a * h - perPair * (groups - 1));
            expectPortsUsedOnce(*b.graph, unusedPorts == 0, spec);
            EXPECT_EQ(b.log, "") << spec;   // unused ports still hang off their ASIC
            FabricStructure s = analyzeFabricStructure(*b.graph);
            EXPECT_TRUE(s.hostsConnected) << spec;
            ASSERT_EQ(s.tiers.size(), 1u) << spec;
            EXPECT_EQ(s.tiers[0].peerLinks,
                      links["inter_switch_link"] + (a > 1 ? links["intra_switch_link"] : 0))
                << spec;
            // Balanced, full size: local, global, local hops between routers at most.
            if (a == 2 * p && a == 2 * h && groups == maxGroups) {
              EXPECT_EQ(s.diameterHops, 5u) << spec;
            }
          }
  EXPECT_GT(valid, 100u);
}

TEST(BlueprintSizing, TorusAndMeshGrid) {
  const std::vector<std::vector<uint64_t>> dimsList = {
      {5}, {2}, {4, 4}, {2, 3}, {3, 1, 4}, {3, 4, 5}, {2, 2, 2, 2}, {6, 2}};
  for (bool torus : {true, false})
    for (const auto &dims : dimsList)
      for (int of = 0; of < 3; ++of) {   // xpus; switches with 1 host; switches with 2 hosts
        std::string dimText;
        uint64_t v = 1;
        for (uint64_t d : dims) {
          dimText += (dimText.empty() ? "" : "x") + std::to_string(d);
          v *= d;
        }
        std::string spec = fmt::format("{}:dims={}", torus ? "torus" : "mesh", dimText);
        if (of)
          spec += fmt::format(",of=switch,host=simple_host(nics={}),hosts_per_switch={}", of, of);
        Built b = buildFabric(spec);
        ASSERT_TRUE(b.graph) << spec << "\n" << b.log;
        uint64_t gridLinks = 0, hopSum = 0, active = 0;
        for (uint64_t d : dims) {
          if (d < 2)
            continue;
          ++active;
          // Torus: one link per position (xpu tori: one per pair when d = 2).
          gridLinks += torus ? (of == 0 && d == 2 ? v / 2 : v) : v / d * (d - 1);
          hopSum += torus ? d / 2 : d - 1;
        }
        std::string linkName = torus ? "torus_link" : "mesh_link";
        FabricStructure s = analyzeFabricStructure(*b.graph);
        EXPECT_TRUE(s.hostsConnected) << spec;
        if (of == 0) {
          EXPECT_EQ(instanceCounts(*b.graph), (Counts{{"node", v}})) << spec;
          EXPECT_EQ(edgesPerLink(*b.graph), (Counts{{linkName, gridLinks}})) << spec;
          EXPECT_EQ(s.diameterHops, hopSum) << spec;
          EXPECT_TRUE(s.tiers.empty());
        } else {
          uint64_t hps = of, nics = of, down = hps * nics;
          EXPECT_EQ(instanceCounts(*b.graph), (Counts{{"simple_host", v * hps}, {"switch", v}}))
              << spec;
          EXPECT_EQ(edgesPerLink(*b.graph),
                    (Counts{{"host_link", v * down},
                            {linkName, gridLinks},
                            {"ic", v * (down + 2 * active)},
                            {"pcie", v * hps * nics}}))
              << spec;
          EXPECT_EQ(s.diameterHops, hopSum + 2) << spec;
          ASSERT_EQ(s.tiers.size(), 1u) << spec;
          EXPECT_EQ(s.tiers[0].peerLinks, gridLinks) << spec;
          expectPortsUsedOnce(*b.graph, torus, spec);
        }
        // Hosts in index order: the first half is the lower half of the last dimension.
        uint64_t last = dims.back();
        if (last % 2 == 0 && last > 1 && of == 0) {
          uint64_t layer = v / last;
          uint64_t cut = torus && last > 2 ? 2 * layer : layer;
          ASSERT_TRUE(s.bisection) << spec;
          EXPECT_EQ(s.bisection->links, cut) << spec;
          EXPECT_EQ(s.bisection->bps, double(cut) * 100e9) << spec;
        }
      }
}

TEST(BlueprintSizing, LeafSpineGrid) {
  for (uint64_t leaves : {1, 3, 4})
    for (uint64_t spines : {1, 2, 5})
      for (uint64_t hpl : {1, 3})
        for (uint64_t bundle : {1, 2})
          for (uint64_t n : {1, 2}) {
            std::string spec = fmt::format("leaf_spine:leaves={},spines={},hosts_per_leaf={},"
                                           "bundle={},host=simple_host(nics={})",
                                           leaves, spines, hpl, bundle, n);
            Built b = buildFabric(spec);
            ASSERT_TRUE(b.graph) << spec << "\n" << b.log;
            EXPECT_EQ(b.log, "") << spec;
            uint64_t leafPorts = hpl * n + spines * bundle, spinePorts = leaves * bundle;
            EXPECT_EQ(instanceCounts(*b.graph),
                      (Counts{{"simple_host", leaves * hpl}, {"leaf", leaves}, {"spine", spines}}))
                << spec;
            EXPECT_EQ(edgesPerLink(*b.graph),
                      (Counts{{"leaf_link", leaves * hpl * n},
                              {"spine_link", leaves * spines * bundle},
                              {"ic", leaves * leafPorts + spines * spinePorts},
                              {"pcie", leaves * hpl * n}}))
                << spec;
            expectPortsUsedOnce(*b.graph, true, spec);
            FabricStructure s = analyzeFabricStructure(*b.graph);
            EXPECT_TRUE(s.hostsConnected) << spec;
            EXPECT_EQ(s.tiers.size(), 2u) << spec;
            // Oversubscription of the leaves: host links (100G) over spine links (400G).
            EXPECT_EQ(s.tiers[0].oversubscription,
                      double(hpl * n) * 100 / (double(spines * bundle) * 400))
                << spec;
            if (leaves * hpl > 1) {
              EXPECT_EQ(s.diameterHops, leaves > 1 ? 4u : 2u) << spec;
            }
          }
}

// planes = P: P disjoint leaf-spines; NIC i of host h on plane i % P, leaf h / hosts_per_leaf
// of it, port (h % hosts_per_leaf) * n/P + i/P.
TEST(BlueprintSizing, LeafSpinePlanes) {
  for (uint64_t planes : {2, 4})
    for (uint64_t n : {4, 8}) {
      const uint64_t leaves = 3, spines = 2, hpl = 2, npp = n / planes;
      std::string spec = fmt::format("leaf_spine:planes={},leaves={},spines={},hosts_per_leaf={},"
                                     "host=simple_host(xpus={},nics={})",
                                     planes, leaves, spines, hpl, n, n);
      Built b = buildFabric(spec);
      ASSERT_TRUE(b.graph) << spec << "\n" << b.log;
      const FabricGraph &g = *b.graph;
      EXPECT_EQ(instanceCounts(g), (Counts{{"simple_host", leaves * hpl},
                                           {"leaf", leaves * planes},
                                           {"spine", spines * planes}}))
          << spec;
      expectPortsUsedOnce(g, true, spec);
      for (uint64_t h = 0; h < leaves * hpl; ++h)
        for (uint64_t i = 0; i < n; ++i) {
          auto nic = g.lookup(fmt::format("simple_host.{}.nic.{}", h, i));
          ASSERT_TRUE(nic) << spec;
          std::vector<std::string> leafSide;
          for (auto adj : g.neighbours(*nic))
            if (g.kind(adj.node) == ComponentKind::Port)
              leafSide.push_back(g.name(adj.node));
          EXPECT_EQ(leafSide, std::vector<std::string>{fmt::format(
                                  "leaf.{}.port.{}", (i % planes) * leaves + h / hpl,
                                  (h % hpl) * npp + i / planes)})
              << spec << " host " << h << " nic " << i;
        }
      FabricStructure s = analyzeFabricStructure(g);
      EXPECT_TRUE(s.hostsConnected) << spec;   // through the hosts, whose xpus reach every NIC
      EXPECT_EQ(s.tiers.size(), 2u) << spec;
    }
}

TEST(BlueprintSizing, RailGrid) {
  for (uint64_t k : {8, 16})
    for (uint64_t n : {1, 2, 4})
      for (uint64_t spinesDiv : {1, 2}) {
        uint64_t hpg = k / 2, up = k - hpg, spines = up / spinesDiv, bundle = up / spines;
        uint64_t groups = k / (bundle * n);
        if (groups == 0)
          continue;
        std::string spec = fmt::format("rail:radix={},host=simple_host(nics={}),spines={}", k, n,
                                       spines);
        Built b = buildFabric(spec);
        ASSERT_TRUE(b.graph) << spec << "\n" << b.log;
        uint64_t rails = groups * n;
        EXPECT_EQ(instanceCounts(*b.graph),
                  (Counts{{"simple_host", groups * hpg}, {"rail", rails}, {"spine", spines}}))
            << spec;
        EXPECT_EQ(edgesPerLink(*b.graph),
                  (Counts{{"rail_link", groups * hpg * n},
                          {"spine_link", rails * up},
                          {"ic", (rails + spines) * k},
                          {"pcie", groups * hpg * n}}))
            << spec;
        // NIC i of host h of group u on rail switch u*n + i, port h.
        auto edges = edgeSet(*b.graph);
        uint64_t h = groups * hpg - 1, u = h / hpg;
        EXPECT_TRUE(edges.count(edgeText(fmt::format("simple_host.{}.nic.{}", h, n - 1),
                                         fmt::format("rail.{}.port.{}", u * n + n - 1, h % hpg),
                                         "rail_link")))
            << spec;
        expectPortsUsedOnce(*b.graph, rails * bundle == k, spec);
        FabricStructure s = analyzeFabricStructure(*b.graph);
        EXPECT_TRUE(s.hostsConnected) << spec;
        EXPECT_EQ(s.tiers.size(), 2u) << spec;
        // Same group: via a rail switch they share; other groups: up to a spine and down.
        EXPECT_EQ(s.diameterHops, groups > 1 ? 4u : 2u) << spec;
      }
}

TEST(BlueprintSizing, HammingMeshGrid) {
  using P = std::pair<uint64_t, uint64_t>;
  for (auto [a, b] : {P{1, 1}, P{2, 2}, P{2, 3}, P{3, 1}})
    for (auto [x, y] : {P{1, 2}, P{2, 2}, P{3, 5}})
      for (uint64_t k : {4, 8, 16}) {
        std::string spec =
            fmt::format("hammingmesh:board={}x{},grid={}x{},radix={}", a, b, x, y, k);
        Built built = buildFabric(spec);
        uint64_t rowEnds = 2 * y, colEnds = 2 * x, half = k / 2;
        auto leaves = [&](uint64_t ends) { return ends <= k ? 0 : (ends + half - 1) / half; };
        if ((leaves(rowEnds) > k) || (leaves(colEnds) > k)) {
          EXPECT_FALSE(built.defs) << spec;
          continue;
        }
        ASSERT_TRUE(built.graph) << spec << "\n" << built.log;
        const FabricGraph &g = *built.graph;
        Counts inst{{"board", x * y}};
        uint64_t tree = 0, switchPorts = 0;
        using T = std::tuple<const char *, uint64_t, uint64_t>;
        for (auto [kind, nets, ends] : {T{"row", x * a, rowEnds}, T{"col", y * b, colEnds}}) {
          uint64_t l = leaves(ends);
          if (l == 0) {
            inst[std::string(kind) + "_switch"] = nets;
            switchPorts += nets * ends;
          } else {
            inst[std::string(kind) + "_leaf"] = nets * l;
            inst[std::string(kind) + "_spine"] = nets * half;
            tree += nets * l * half;
            switchPorts += nets * (l * k + half * l);
          }
        }
        EXPECT_EQ(instanceCounts(g), inst) << spec;
        Counts links{{"hm_link", 2 * x * y * (a + b)}, {"ic", switchPorts}};
        uint64_t onBoard = a * (b - 1) + (a - 1) * b;
        if (onBoard)
          links["board_link"] = x * y * onBoard;
        if (tree)
          links["tree_link"] = tree;
        EXPECT_EQ(edgesPerLink(g), links) << spec;
        expectPortsUsedOnce(g, false, spec);
        FabricStructure s = analyzeFabricStructure(g);
        EXPECT_TRUE(s.hostsConnected) << spec;
        EXPECT_EQ(s.hosts, x * y) << spec;
        EXPECT_EQ(s.xpus, x * y * a * b) << spec;
      }
}

TEST(BlueprintSizing, SingleTierGrid) {
  for (uint64_t hosts : {1, 2, 7})
    for (uint64_t f : {1, 2}) {
      std::string spec = fmt::format("single_tier:hosts={},host=server(npu_factor={})", hosts, f);
      Built b = buildFabric(spec);
      ASSERT_TRUE(b.graph) << spec << "\n" << b.log;
      EXPECT_EQ(edgesPerLink(*b.graph)["switch-link"], hosts * 2 * f) << spec;
      EXPECT_EQ(b.graph->numNodes(), hosts * (6 * f + 2) + 1 + hosts * 2 * f) << spec;
      expectPortsUsedOnce(*b.graph, true, spec);
      FabricStructure s = analyzeFabricStructure(*b.graph);
      EXPECT_EQ(s.diameterHops, hosts > 1 ? std::optional<uint32_t>(2) : std::nullopt) << spec;
    }
}
