// Helpers for blueprint tests: build a fabric from a -fabric= spec and expand it, and
// view the expansion as sets of node names and edges.
#pragma once

#include "blueprints/Blueprint.h"
#include "ir/FabricGraph.h"
#include "support/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

#include <map>
#include <memory>
#include <set>
#include <string>

namespace infracc::test {

struct Built {
  std::shared_ptr<Infrastructure> defs;
  std::unique_ptr<FabricGraph> graph;
  std::string log;   // diagnostics
};

/// Parses and instantiates `spec` (the -fabric= text) and expands it.
inline Built buildFabric(const std::string &spec) {
  Built b;
  llvm::raw_string_ostream os(b.log);
  DiagEngine diags(os);
  auto s = blueprints::parseFabricSpec(spec, {}, diags);
  if (!s)
    return b;
  s->origin = "-fabric";
  b.defs = blueprints::instantiateFabric(*s, diags);
  if (!b.defs)
    return b;
  b.graph = expandFabric(b.defs, diags);
  return b;
}

/// One copy of the device named by a device spec (e.g. "dgx_h100(nic=cx7_400g)"),
/// instance named after the device, expanded on its own.
inline Built buildDevice(const std::string &spec) {
  Built b;
  llvm::raw_string_ostream os(b.log);
  DiagEngine diags(os);
  auto s = blueprints::parseDeviceSpec(spec, {}, diags);
  if (!s)
    return b;
  s->origin = "device";
  auto d = blueprints::instantiateDevice(*s, diags);
  if (!d)
    return b;
  b.defs = std::make_shared<Infrastructure>();
  b.defs->name = "device";
  b.defs->origin = "device";
  b.defs->devices = d->parts;
  b.defs->devices.push_back(d->device);
  Instance inst;
  inst.name = d->device.name;
  inst.device = d->device.name;
  inst.count = 1;
  b.defs->instances.push_back(inst);
  b.graph = expandFabric(b.defs, diags);
  return b;
}

/// "a -- b link" with a < b, for every edge.
inline std::set<std::string> edgeSet(const FabricGraph &g) {
  std::set<std::string> out;
  for (const auto &e : g.edges()) {
    std::string a = g.name(e.u), b = g.name(e.v);
    if (b < a)
      std::swap(a, b);
    out.insert(a + " -- " + b + " " + g.link(e.link).name);
  }
  return out;
}

inline std::set<std::string> nodeSet(const FabricGraph &g) {
  std::set<std::string> out;
  for (NodeId n = 0; n < g.numNodes(); ++n)
    out.insert(g.name(n));
  return out;
}

inline std::string edgeText(const std::string &a, const std::string &b, const std::string &link) {
  return a < b ? a + " -- " + b + " " + link : b + " -- " + a + " " + link;
}

/// Number of expanded edges per link name.
inline std::map<std::string, uint64_t> edgesPerLink(const FabricGraph &g) {
  std::map<std::string, uint64_t> out;
  for (const auto &e : g.edges())
    ++out[g.link(e.link).name];
  return out;
}

/// Copies per instance name.
inline std::map<std::string, uint64_t> instanceCounts(const FabricGraph &g) {
  std::map<std::string, uint64_t> out;
  for (const auto &i : g.instances())
    out[i.name] = i.count;
  return out;
}

} // namespace infracc::test
