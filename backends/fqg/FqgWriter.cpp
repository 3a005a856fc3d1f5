// -emit=fqg: the fully qualified graph, node by node and edge by edge.
//
// JSON (default): {"name", "description", "graph": {annotation attributes},
// "node_count", "edge_count", "nodes": [...], "edges": [...]} with one
// node or edge object per line (a graph of millions of nodes is written without
// building it in memory first):
//   {"name":"host.0.xpu.1","kind":"xpu","type":"xpu","instance":"host","instance_idx":0,
//    "device":"server","composed_device":"host.0","attributes":{...}}
//   {"ep1":"host.0.nic.0","ep2":"tor.0.port.0","link":"eth","bandwidth_gbps":100,
//    "latency_ns":500,"attributes":{...}}
// Nodes come in node-id order, edges sorted by (ep1 id, ep2 id) with ep1 < ep2.
// "attributes" appears only when annotations set some; "bandwidth_gbps" and
// "latency_ns" are null when the link has none.
//
// TSV (-format=tsv): the same rows without attributes, first column `node` or `edge`:
//   node  <name> <kind> <type> <instance> <instance_idx> <device>
//   edge  <ep1> <ep2> <link> <bandwidth_gbps|-> <latency_ns|->
#include "backends/infragraph/CanonicalDocument.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace infracc {
namespace {

using ojson = nlohmann::ordered_json;

std::string dumpLine(const ojson &j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

ojson attributes(const std::vector<Attribute> *attrs) {
  ojson out = ojson::object();
  if (attrs)
    for (const Attribute &a : *attrs)
      out[a.key] = a.value;
  return out;
}

void writeJson(const FabricGraph &g, llvm::raw_ostream &os) {
  const Infrastructure &defs = g.definitions();
  ojson head = ojson::object();
  head["name"] = defs.name;
  head["description"] = defs.description;
  ojson graph = ojson::object();
  for (const Attribute &a : g.graphAttributes())
    graph[a.key] = a.value;
  head["graph"] = graph;
  head["node_count"] = g.numNodes();
  head["edge_count"] = g.numEdges();
  std::string h = dumpLine(head);
  h.pop_back();   // reopen the object to append the two arrays
  os << h << ",\n\"nodes\": [";
  for (NodeId v = 0; v < g.numNodes(); ++v) {
    FabricGraph::NodePath p = g.decode(v);
    ojson n = ojson::object();
    n["name"] = g.name(v);
    n["kind"] = componentKindName(p.leaf().kind).str();
    n["type"] = g.typeName(v).str();
    n["instance"] = g.instances()[p.instance].name;
    n["instance_idx"] = p.copy;
    n["device"] = g.deviceName(v).str();
    n["composed_device"] = g.composedDeviceName(v);
    if (const auto *attrs = g.nodeAttributes(v))
      n["attributes"] = attributes(attrs);
    os << (v ? ",\n" : "\n") << dumpLine(n);
  }
  os << "\n],\n\"edges\": [";
  for (EdgeId e = 0; e < g.numEdges(); ++e) {
    const auto &rec = g.edge(e);
    const auto &link = g.link(rec.link);
    ojson j = ojson::object();
    j["ep1"] = g.name(rec.u);
    j["ep2"] = g.name(rec.v);
    j["link"] = link.name;
    j["bandwidth_gbps"] =
        link.bandwidth ? canonicalNumber(link.bandwidth->inGigabitsPerSecExact()) : nullptr;
    j["latency_ns"] = link.latency ? canonicalNumber(link.latency->ns) : nullptr;
    if (const auto *attrs = g.edgeAttributes(e))
      j["attributes"] = attributes(attrs);
    os << (e ? ",\n" : "\n") << dumpLine(j);
  }
  os << "\n]}\n";
}

void writeTsv(const FabricGraph &g, llvm::raw_ostream &os) {
  os << "# node\tname\tkind\ttype\tinstance\tinstance_idx\tdevice\n";
  os << "# edge\tep1\tep2\tlink\tbandwidth_gbps\tlatency_ns\n";
  for (NodeId v = 0; v < g.numNodes(); ++v) {
    FabricGraph::NodePath p = g.decode(v);
    os << "node\t" << g.name(v) << '\t' << componentKindName(p.leaf().kind) << '\t'
       << g.typeName(v) << '\t' << g.instances()[p.instance].name << '\t' << p.copy << '\t'
       << g.deviceName(v) << '\n';
  }
  for (EdgeId e = 0; e < g.numEdges(); ++e) {
    const auto &rec = g.edge(e);
    const auto &link = g.link(rec.link);
    os << "edge\t" << g.name(rec.u) << '\t' << g.name(rec.v) << '\t' << link.name << '\t'
       << (link.bandwidth ? fmt::format("{}", link.bandwidth->inGigabitsPerSecExact())
                          : std::string("-"))
       << '\t' << (link.latency ? fmt::format("{}", link.latency->ns) : std::string("-"))
       << '\n';
  }
}

RegisterTarget FqgTarget({
    .name = "fqg",
    .description = "the fully qualified graph: nodes and edges as JSON, or TSV (-format=tsv)",
    .needs = TargetNeeds::Fabric,
    .defaultPipeline = {},
    .run = [](TargetContext &ctx) -> llvm::Error {
      std::string format = opts::outputFormat();
      if (format.empty())
        format = "json";
      if (format != "json" && format != "tsv")
        return usageError("-emit=fqg writes json or tsv, not '" + format + "'");
      auto os = ctx.output.stream();
      if (!os)
        return os.takeError();
      if (format == "tsv")
        writeTsv(*ctx.module.fabric, *os);
      else
        writeJson(*ctx.module.fabric, *os);
      return llvm::Error::success();
    },
});

} // namespace
} // namespace infracc
