#include "ir/FabricGraph.h"
#include "support/Diagnostics.h"

#include <gtest/gtest.h>

#include <set>

using namespace infracc;

namespace {

PathElem elem(std::string name) { return PathElem{std::move(name), std::nullopt, {}}; }
PathElem elem(std::string name, int64_t a, int64_t b) {
  Slice s;
  s.start = a;
  s.stop = b;
  return PathElem{std::move(name), s, {}};
}
PathElem index(std::string name, int64_t i) {
  Slice s;
  s.isIndex = true;
  s.start = i;
  return PathElem{std::move(name), s, {}};
}

// Two servers (2 xpus + 1 nic each, xpus wired to the nic) on one 4-port switch.
std::shared_ptr<Infrastructure> smallFabric() {
  auto in = std::make_shared<Infrastructure>();
  in->name = "small";
  in->origin = "small.yaml";
  DeviceDef server;
  server.name = "server";
  server.components = {{"xpu", "", ComponentKind::Xpu, "", 2, {}, {}},
                       {"nic", "", ComponentKind::Nic, "", 1, {}, {}}};
  server.links = {{"pcie", "", Bandwidth::gigabitsPerSec(256), Duration::nanoseconds(100), {}}};
  server.edges.push_back({{elem("xpu")}, {elem("nic")}, Scheme::Many2Many, "pcie", {}, {}});
  DeviceDef sw;
  sw.name = "switch";
  sw.components = {{"asic", "", ComponentKind::Cpu, "", 1, {}, {}},
                   {"port", "", ComponentKind::Port, "", 4, {}, {}}};
  sw.links = {{"ic", "", std::nullopt, std::nullopt, {}}};
  sw.edges.push_back({{elem("asic")}, {elem("port")}, Scheme::Many2Many, "ic", {}, {}});
  in->devices = {server, sw};
  in->links = {{"eth", "", Bandwidth::gigabitsPerSec(100), Duration::microseconds(1), {}}};
  in->instances = {{"host", "server", "", 2, {}, {}, {}}, {"tor", "switch", "", 1, {}, {}, {}}};
  InfraEdge e;
  e.ep1 = {elem("host"), {index("nic", 0)}};
  e.ep2 = {index("tor", 0), {elem("port", 0, 2)}};
  e.link = "eth";
  in->edges = {e};
  return in;
}

} // namespace

TEST(FabricGraph, ExpandsNamesEdgesAndEndpoints) {
  std::string log;
  llvm::raw_string_ostream os(log);
  DiagEngine diags(os);
  auto g = expandFabric(smallFabric(), diags);
  ASSERT_TRUE(g) << log;
  EXPECT_EQ(log, "");
  ASSERT_EQ(g->numNodes(), 11u);   // 2 x (2 xpu + 1 nic) + asic + 4 ports
  std::vector<std::string> names;
  for (NodeId n = 0; n < g->numNodes(); ++n)
    names.push_back(g->name(n));
  EXPECT_EQ(names, (std::vector<std::string>{
                       "host.0.xpu.0", "host.0.xpu.1", "host.0.nic.0", "host.1.xpu.0",
                       "host.1.xpu.1", "host.1.nic.0", "tor.0.asic.0", "tor.0.port.0",
                       "tor.0.port.1", "tor.0.port.2", "tor.0.port.3"}));
  std::set<std::string> edges;
  for (const auto &e : g->edges())
    edges.insert(g->name(e.u) + " -- " + g->name(e.v) + " " + g->link(e.link).name);
  EXPECT_EQ(edges, (std::set<std::string>{
                       "host.0.xpu.0 -- host.0.nic.0 pcie", "host.0.xpu.1 -- host.0.nic.0 pcie",
                       "host.1.xpu.0 -- host.1.nic.0 pcie", "host.1.xpu.1 -- host.1.nic.0 pcie",
                       "tor.0.asic.0 -- tor.0.port.0 ic", "tor.0.asic.0 -- tor.0.port.1 ic",
                       "tor.0.asic.0 -- tor.0.port.2 ic", "tor.0.asic.0 -- tor.0.port.3 ic",
                       "host.0.nic.0 -- tor.0.port.0 eth", "host.1.nic.0 -- tor.0.port.1 eth"}));
  ASSERT_EQ(g->endpoints().size(), 4u);
  EXPECT_TRUE(g->endpointsAreXpus());
  EXPECT_EQ(g->name(g->endpoints()[3]), "host.1.xpu.1");
  EXPECT_EQ(g->instanceOf(*g->lookup("tor.0.port.3")), 1u);
  EXPECT_EQ(g->deviceCopyOf(*g->lookup("host.1.nic.0")), 1u);
  EXPECT_EQ(g->typeName(*g->lookup("tor.0.asic.0")), "cpu");
  EXPECT_FALSE(g->lookup("tor.0.port.4"));
  EXPECT_FALSE(g->lookup("host.0.xpu"));
}

TEST(FabricGraph, UnknownComponentNamesWhatExists) {
  auto in = smallFabric();
  in->edges[0].ep1.component[0].name = "nicc";
  std::string log;
  llvm::raw_string_ostream os(log);
  DiagEngine diags(os);
  EXPECT_FALSE(expandFabric(in, diags));
  EXPECT_EQ(log, "small.yaml: error: component 'nicc' is not a component of device 'server' "
                 "(it has: xpu, nic); did you mean 'nic'?\n");
}

TEST(FabricGraph, One2OneUnequalSidesWarnAndWerrorRefuses) {
  auto in = smallFabric();
  in->edges[0].ep2.component[0] = elem("port", 0, 4);
  std::string log;
  llvm::raw_string_ostream os(log);
  DiagEngine diags(os);
  auto g = expandFabric(in, diags);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->numEdges(), 2u * 2 + 4 + 2);   // pcie per host, asic-port, two host links
  EXPECT_TRUE(log.starts_with("small.yaml: warning: one2one edge joins 2 nodes to 4: made 2 pairs "
                              "up to the shorter side, as InfraGraph's reference does; 2 nodes of "
                              "the longer side got no partner: tor.0.port.2, tor.0.port.3\n"))
      << log;
  log.clear();
  DiagEngine strict(os);
  strict.setWarningsAsErrors(true);
  EXPECT_FALSE(expandFabric(in, strict));
  EXPECT_TRUE(log.starts_with("small.yaml: error: one2one edge joins 2 nodes to 4")) << log;
}
