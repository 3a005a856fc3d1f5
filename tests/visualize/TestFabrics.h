// Small fabrics built in C++ for the visualisation tests (written by hand here, so
// the expected pictures can be derived by counting).
#pragma once

#include "ir/FabricGraph.h"
#include "support/Diagnostics.h"

#include <memory>
#include <string>

namespace infracc::test {

inline PathElem elem(std::string name) { return PathElem{std::move(name), std::nullopt, {}}; }
inline PathElem elem(std::string name, int64_t a, int64_t b) {
  Slice s;
  s.start = a;
  s.stop = b;
  return PathElem{std::move(name), s, {}};
}
inline PathElem at(std::string name, int64_t i) {
  Slice s;
  s.isIndex = true;
  s.start = i;
  return PathElem{std::move(name), s, {}};
}

inline Component comp(std::string name, ComponentKind k, uint64_t count) {
  Component c;
  c.name = std::move(name);
  c.kind = k;
  c.count = count;
  return c;
}

inline InfraEdge infraEdge(PathElem inst1, PathElem comp1, PathElem inst2, PathElem comp2,
                           std::string link) {
  InfraEdge e;
  e.ep1 = {std::move(inst1), {std::move(comp1)}};
  e.ep2 = {std::move(inst2), {std::move(comp2)}};
  e.link = std::move(link);
  return e;
}

/// A server: `xpus` xpus and `nics` nics, every xpu wired to every nic over pcie.
inline DeviceDef server(uint64_t xpus, uint64_t nics) {
  DeviceDef d;
  d.name = "server";
  d.components = {comp("xpu", ComponentKind::Xpu, xpus), comp("nic", ComponentKind::Nic, nics)};
  d.links = {{"pcie", "", Bandwidth::gigabitsPerSec(256), Duration::nanoseconds(100), {}}};
  d.edges.push_back({{elem("xpu")}, {elem("nic")}, Scheme::Many2Many, "pcie", {}, {}});
  return d;
}

/// A switch: one asic and `ports` ports, each port wired to the asic.
inline DeviceDef switchDevice(uint64_t ports, std::string name = "switch") {
  DeviceDef d;
  d.name = std::move(name);
  d.components = {comp("asic", ComponentKind::Switch, 1), comp("port", ComponentKind::Port, ports)};
  d.links = {{"ic", "", std::nullopt, std::nullopt, {}}};
  d.edges.push_back({{elem("asic")}, {elem("port")}, Scheme::Many2Many, "ic", {}, {}});
  return d;
}

/// Leaf-spine: `leaves` leaves with `hostsPerLeaf` single-nic servers each, every
/// leaf joined to every spine by `parallel` links.
inline std::shared_ptr<Infrastructure> leafSpine(uint64_t leaves, uint64_t spines,
                                                 uint64_t hostsPerLeaf, uint64_t parallel = 1) {
  auto in = std::make_shared<Infrastructure>();
  in->name = "leafspine";
  in->origin = "leafspine";
  uint64_t leafPorts = hostsPerLeaf + spines * parallel;
  in->devices = {server(2, 1), switchDevice(leafPorts, "leafsw"),
                 switchDevice(leaves * parallel, "spinesw")};
  in->links = {{"eth", "", Bandwidth::gigabitsPerSec(100), Duration::microseconds(1), {}},
               {"uplink", "", Bandwidth::gigabitsPerSec(400), Duration::microseconds(1), {}}};
  in->instances = {{"host", "server", "", leaves * hostsPerLeaf, {}, {}, {}},
                   {"leaf", "leafsw", "", leaves, {}, {}, {}},
                   {"spine", "spinesw", "", spines, {}, {}, {}}};
  for (uint64_t l = 0; l < leaves; ++l) {
    in->edges.push_back(infraEdge(elem("host", int64_t(l * hostsPerLeaf),
                                       int64_t((l + 1) * hostsPerLeaf)),
                                  at("nic", 0), at("leaf", int64_t(l)),
                                  elem("port", 0, int64_t(hostsPerLeaf)), "eth"));
    for (uint64_t s = 0; s < spines; ++s)
      for (uint64_t p = 0; p < parallel; ++p)
        in->edges.push_back(infraEdge(
            at("leaf", int64_t(l)), at("port", int64_t(hostsPerLeaf + s * parallel + p)),
            at("spine", int64_t(s)), at("port", int64_t(l * parallel + p)), "uplink"));
  }
  return in;
}

/// A 2-D torus of `x` × `y` hosts with 4 nics each (no switches).
inline std::shared_ptr<Infrastructure> torus2d(uint64_t x, uint64_t y) {
  auto in = std::make_shared<Infrastructure>();
  in->name = "torus";
  in->origin = "torus";
  in->devices = {server(1, 4)};
  in->links = {{"torus", "", Bandwidth::gigabitsPerSec(200), Duration::nanoseconds(500), {}}};
  in->instances = {{"node", "server", "", x * y, {}, {}, {}}};
  for (uint64_t i = 0; i < x; ++i)
    for (uint64_t j = 0; j < y; ++j) {
      int64_t here = int64_t(i * y + j);
      int64_t right = int64_t(((i + 1) % x) * y + j), up = int64_t(i * y + (j + 1) % y);
      in->edges.push_back(infraEdge(at("node", here), at("nic", 0), at("node", right),
                                    at("nic", 1), "torus"));
      in->edges.push_back(infraEdge(at("node", here), at("nic", 2), at("node", up),
                                    at("nic", 3), "torus"));
    }
  return in;
}

/// Two servers (2 xpus, 1 nic) on one 4-port top-of-rack switch.
inline std::shared_ptr<Infrastructure> tinyFabric() {
  auto in = std::make_shared<Infrastructure>();
  in->name = "tiny";
  in->origin = "tiny";
  in->devices = {server(2, 1), switchDevice(4)};
  in->links = {{"eth", "", Bandwidth::gigabitsPerSec(100), Duration::microseconds(1), {}}};
  in->instances = {{"host", "server", "", 2, {}, {}, {}}, {"tor", "switch", "", 1, {}, {}, {}}};
  in->edges = {infraEdge(elem("host"), at("nic", 0), at("tor", 0), elem("port", 0, 2), "eth")};
  return in;
}

/// A host built by composition: 4 xpus on an nvswitch, one cpu, and two "cx7" nic
/// devices (each a pcie endpoint and a network port), the cpu wired to both
/// endpoints, plus a switch for the two hosts' ports.
inline std::shared_ptr<Infrastructure> composedFabric() {
  auto in = std::make_shared<Infrastructure>();
  in->name = "composed";
  in->origin = "composed";
  DeviceDef nic;
  nic.name = "cx7";
  Component ep = comp("pcie_ep", ComponentKind::Custom, 1);
  ep.customType = "pcie_endpoint";
  nic.components = {ep, comp("port", ComponentKind::Nic, 1)};
  nic.links = {{"internal", "", std::nullopt, std::nullopt, {}}};
  nic.edges.push_back({{elem("pcie_ep")}, {elem("port")}, Scheme::One2One, "internal", {}, {}});
  DeviceDef host;
  host.name = "hgx";
  host.components = {comp("xpu", ComponentKind::Xpu, 4), comp("nvswitch", ComponentKind::Switch, 1),
                     comp("cpu", ComponentKind::Cpu, 1), comp("cx7", ComponentKind::Device, 2)};
  host.links = {{"nvlink", "", Bandwidth::gigabytesPerSec(50), Duration::nanoseconds(150), {}},
                {"pcie", "", Bandwidth::gigabitsPerSec(256), Duration::nanoseconds(100), {}}};
  host.edges.push_back({{elem("xpu")}, {elem("nvswitch")}, Scheme::Many2Many, "nvlink", {}, {}});
  host.edges.push_back({{elem("cpu")}, {elem("cx7"), at("pcie_ep", 0)}, Scheme::Many2Many,
                        "pcie", {}, {}});
  host.edges.push_back({{elem("cpu")}, {elem("xpu")}, Scheme::Many2Many, "pcie", {}, {}});
  in->devices = {nic, host, switchDevice(4)};
  in->links = {{"ib", "", Bandwidth::gigabitsPerSec(400), Duration::microseconds(1), {}}};
  in->instances = {{"node", "hgx", "", 2, {}, {}, {}}, {"tor", "switch", "", 1, {}, {}, {}}};
  InfraEdge e;
  e.ep1 = {elem("node"), {elem("cx7"), at("port", 0)}};
  e.ep2 = {at("tor", 0), {elem("port", 0, 4)}};
  e.link = "ib";
  in->edges = {e};
  return in;
}

/// A 2-D torus of `x` × `y` 5-port switches, each with one single-nic server.
inline std::shared_ptr<Infrastructure> switchTorus(uint64_t x, uint64_t y) {
  auto in = std::make_shared<Infrastructure>();
  in->name = "switchtorus";
  in->origin = "switchtorus";
  in->devices = {server(1, 1), switchDevice(5)};
  in->links = {{"host", "", Bandwidth::gigabitsPerSec(100), std::nullopt, {}},
               {"torus", "", Bandwidth::gigabitsPerSec(200), std::nullopt, {}}};
  in->instances = {{"srv", "server", "", x * y, {}, {}, {}},
                   {"sw", "switch", "", x * y, {}, {}, {}}};
  in->edges.push_back(infraEdge(elem("srv"), at("nic", 0), elem("sw"), at("port", 4), "host"));
  for (uint64_t i = 0; i < x; ++i)
    for (uint64_t j = 0; j < y; ++j) {
      int64_t here = int64_t(i * y + j);
      int64_t right = int64_t(((i + 1) % x) * y + j), up = int64_t(i * y + (j + 1) % y);
      in->edges.push_back(infraEdge(at("sw", here), at("port", 0), at("sw", right),
                                    at("port", 1), "torus"));
      in->edges.push_back(infraEdge(at("sw", here), at("port", 2), at("sw", up),
                                    at("port", 3), "torus"));
    }
  return in;
}

/// `groups` groups of `a` routers, all-to-all inside a group ("local"), router r of
/// group g joined to router r of group (g+1) mod groups ("global"); one server per
/// router.
inline std::shared_ptr<Infrastructure> dragonflyLike(uint64_t groups, uint64_t a) {
  auto in = std::make_shared<Infrastructure>();
  in->name = "dragonflylike";
  in->origin = "dragonflylike";
  in->devices = {server(1, 1), switchDevice(a + 2)};
  in->links = {{"host", "", std::nullopt, std::nullopt, {}},
               {"local", "", std::nullopt, std::nullopt, {}},
               {"global", "", std::nullopt, std::nullopt, {}}};
  uint64_t n = groups * a;
  in->instances = {{"srv", "server", "", n, {}, {}, {}}, {"rt", "switch", "", n, {}, {}, {}}};
  in->edges.push_back(infraEdge(elem("srv"), at("nic", 0), elem("rt"), at("port", 0), "host"));
  for (uint64_t g = 0; g < groups; ++g)
    for (uint64_t r = 0; r < a; ++r) {
      int64_t me = int64_t(g * a + r);
      for (uint64_t q = r + 1; q < a; ++q)
        in->edges.push_back(infraEdge(at("rt", me), at("port", int64_t(q + 1)),
                                      at("rt", int64_t(g * a + q)), at("port", int64_t(r + 1)),
                                      "local"));
      // Ports 1..a hold the local links (own index unused); port a+1 is global out.
      int64_t next = int64_t(((g + 1) % groups) * a + r);
      in->edges.push_back(infraEdge(at("rt", me), at("port", int64_t(a + 1)), at("rt", next),
                                    at("port", int64_t(r + 1)), "global"));
    }
  return in;
}

inline std::unique_ptr<FabricGraph> expand(std::shared_ptr<Infrastructure> in) {
  std::string log;
  llvm::raw_string_ostream os(log);
  DiagEngine diags(os);
  auto g = expandFabric(std::move(in), diags, ExpandOptions{false});
  if (!g)
    throw std::runtime_error("test fabric does not expand: " + log);
  return g;
}

} // namespace infracc::test
