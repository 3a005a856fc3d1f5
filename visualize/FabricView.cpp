#include "visualize/FabricView.h"

#include "support/Diagnostics.h"
#include "visualize/Style.h"
#include "visualize/UnitGraph.h"
#include "visualize/ViewCommon.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <map>

namespace infracc::viz {

// The device and full views: nodes of a fully qualified graph drawn one by one (the
// overview is in Overview.cpp).

namespace {

/// Clusters for boxes and composed devices, keyed by the node-path prefix.
class ClusterMap {
public:
  /// `labelloc`: where cluster labels go; with rankdir=BT, "b" puts them on top.
  ClusterMap(Drawing &d, const char *labelloc) : d_(d), labelloc_(labelloc) {}
  /// The cluster for `key` (created with `label` under `parent` if new).
  int get(const std::string &key, llvm::StringRef label, int parent, llvm::StringRef fill) {
    auto [it, fresh] = ids_.try_emplace(key, -1);
    if (fresh)
      it->second = d_.addCluster(fmt::format("{}", d_.clusters.size()),
                                 {{"label", label.str()},
                                  {"style", "rounded,filled"},
                                  {"fillcolor", fill.str()},
                                  {"color", "#999999"},
                                  {"labelloc", labelloc_},
                                  {"fontsize", "10"}},
                                 parent);
    return it->second;
  }

private:
  Drawing &d_;
  const char *labelloc_;
  std::map<std::string, int> ids_;
};

std::string componentLabel(const Component &c, llvm::StringRef slice) {
  std::string s = c.name + slice.str();
  if (c.kind == ComponentKind::Custom && !c.customType.empty() && c.customType != c.name)
    s += "\\n(" + c.customType + ")";
  return s;
}

/// The cluster a node belongs to: the composed devices on its path, inside the box
/// cluster when `boxCluster` >= 0.
int clusterOfPath(const FabricGraph::NodePath &p, ClusterMap &clusters, std::string prefix,
                  int boxCluster) {
  int cluster = boxCluster;
  for (size_t i = 0; i + 1 < p.components.size(); ++i) {
    const auto &[comp, idx] = p.components[i];
    prefix += fmt::format(".{}.{}", comp->name, idx);
    cluster = clusters.get(prefix, fmt::format("{}[{}]", comp->name, idx), cluster, "#FAFAF5");
  }
  return cluster;
}

} // namespace

llvm::Expected<Drawing> drawDevice(const FabricGraph &g, llvm::StringRef name,
                                   const FabricViewOptions &o) {
  const Infrastructure &defs = g.definitions();
  const DeviceDef *dev = defs.findDevice(name);
  if (!dev)
    for (const auto &inst : g.instances())
      if (inst.name == name)
        dev = &defs.devices[inst.device];
  if (!dev) {
    std::vector<std::string> names;
    for (const DeviceDef &dd : defs.devices)
      names.push_back(dd.name);
    return usageError(fmt::format("-view=device:{}: the fabric has no device (or instance) named "
                                  "'{}'; its devices are: {}",
                                  name.str(), name.str(), llvm::join(names, ", ")));
  }

  // Expand a fabric holding one copy of the device: the expansion already knows how
  // to resolve slices and composition, so the picture shows exactly what it builds.
  auto one = std::make_shared<Infrastructure>();
  one->name = defs.name;
  one->origin = defs.origin;
  one->devices = defs.devices;
  one->instances.push_back({dev->name, dev->name, "", 1, {}, {}, {}});
  std::string log;
  llvm::raw_string_ostream logStream(log);
  DiagEngine quiet(logStream);
  auto dg = expandFabric(one, quiet, ExpandOptions{false});
  if (!dg)
    return inputError("device '" + dev->name + "' cannot be expanded on its own: " +
                      llvm::StringRef(log).trim());

  // Units: the component copies; a unit's kind is its component within its cluster.
  UnitGraph units;
  std::vector<FabricGraph::NodePath> paths;
  std::map<std::string, uint32_t> kinds;
  for (NodeId n = 0; n < dg->numNodes(); ++n) {
    paths.push_back(dg->decode(n));
    std::string key;
    const auto &p = paths.back();
    for (size_t i = 0; i + 1 < p.components.size(); ++i)
      key += fmt::format("{}.{}.", p.components[i].first->name, p.components[i].second);
    key += p.leaf().name;
    units.kind.push_back(kinds.try_emplace(key, kinds.size()).first->second);
    units.tier.push_back(0);
  }
  for (const auto &e : dg->edges())
    units.edges.push_back({e.u, e.v, e.link, 1});
  units.normaliseEdges();
  Grouping gr = groupNone(units);
  bool aggregated = false;
  if (o.aggregate == Aggregation::Hosts || o.aggregate == Aggregation::Classes ||
      (o.aggregate == Aggregation::Auto && units.numUnits() > OverviewTargetNodes)) {
    gr = groupByNeighbours(units, std::vector<bool>(units.numUnits(), true));
    aggregated = gr.numGroups() < units.numUnits();
  }
  if (gr.numGroups() > o.maxNodes)
    return refuse(gr.numGroups(), "-view=device:" + name.str(), o.maxNodes, "raise -max-nodes");

  Drawing d;
  d.name = dev->name;
  ClusterMap clusters(d, "t");
  for (uint32_t k = 0; k < gr.numGroups(); ++k) {
    const auto &members = gr.members[k];
    const auto &p = paths[members.front()];
    const Component &leaf = p.leaf();
    std::vector<uint64_t> idx;
    for (uint32_t u : members)
      idx.push_back(paths[u].components.back().second);
    std::string slice = sliceOf(idx, leaf.count);
    if (slice.empty())
      slice = members.size() == 1 ? "[0]" : fmt::format("[0:{}]", leaf.count);
    std::string label = componentLabel(leaf, slice);
    if (members.size() > 1)
      label += "\\n×" + formatCount(members.size());
    int cluster = clusterOfPath(p, clusters, "", -1);
    std::string id = dg->name(members.front());
    id = id.substr(id.find('.', id.find('.') + 1) + 1);   // drop "<device>.0."
    if (members.size() > 1)
      id += fmt::format("+{}", members.size() - 1);
    Attrs a = componentStyle(leaf.kind);
    a.push_back({"label", label});
    a.push_back({"tooltip", fmt::format("{} ({})", id, dg->typeName(members.front()).str())});
    if (members.size() > 1)
      a.push_back({"peripheries", "2"});
    d.addNode(id, std::move(a), cluster);
  }
  auto ge = groupEdges(units, gr);
  // The copies of a component form one column, in copy order; links among them (an
  // xpu mesh) become arcs along the column, which reads better than dot's staircase.
  {
    std::map<uint32_t, std::vector<uint32_t>> byKind;   // kinds are per cluster already
    for (uint32_t k = 0; k < gr.numGroups(); ++k)
      byKind[units.kind[gr.members[k].front()]].push_back(k);
    for (auto &[kind, nodes] : byKind) {
      if (nodes.size() < 2)
        continue;
      for (size_t i = 1; i < nodes.size(); ++i)
        d.addEdge(nodes[i - 1], nodes[i], {{"style", "invis"}});
      d.sameRank.push_back({d.nodes[nodes.front()].cluster, nodes});
    }
  }
  LinkLegend legend(*dg);
  bool labelled = labelledEdges(ge, gr) <= MaxLabelledEdges;
  for (const GroupEdge &e : ge) {
    legend.count(e.link, e.total);
    d.addEdge(e.ga, e.gb, edgeAttrs(legend, e.link, e.total, labelled, {}, ""));
  }
  std::map<std::string, size_t> kindCount;
  for (const Component &c : dev->components)
    kindCount[c.kind == ComponentKind::Custom   ? c.customType
              : c.kind == ComponentKind::Device ? c.name
                                                : componentKindName(c.kind).str()] += c.count;
  std::vector<std::string> parts;
  for (auto &[k, n] : kindCount)
    parts.push_back(fmt::format("{} {}", n, k));
  std::vector<std::string> lines = {
      fmt::format("device {} · {} · {} nodes, {} edges", dev->name, llvm::join(parts, ", "),
                  dg->numNodes(), dg->numEdges())};
  if (!dev->description.empty())
    lines.insert(lines.begin(), dev->description);
  if (aggregated)
    lines.push_back("components with the same neighbours are drawn as one node (×N)");
  setCommonStyle(d, titleBlock(dev->name, lines, "", legend), "LR");
  return d;
}

llvm::Expected<Drawing> drawFull(const FabricGraph &g, const FabricViewOptions &o) {
  if (g.numNodes() > o.maxNodes) {
    // Too many nodes: the overview instead, saying how to drill down.
    std::vector<std::string> fit;
    const Infrastructure &defs = g.definitions();
    size_t shown = 0, more = 0;
    for (uint32_t dv = 0; dv < defs.devices.size(); ++dv) {
      uint32_t n = g.layout(dv).numNodes;
      if (n > o.maxNodes)
        continue;
      if (shown++ < 6)
        fit.push_back(fmt::format("-view=device:{} ({} nodes)", defs.devices[dv].name, n));
      else
        ++more;
    }
    if (more)
      fit.push_back(fmt::format("and {} more device view{}", more, more == 1 ? "" : "s"));
    FabricViewOptions fo = o;
    fo.titleNote = fmt::format("-view=full would draw {} nodes (more than -max-nodes={}): this "
                               "is the overview; -view=device:NAME draws one device",
                               g.numNodes(), o.maxNodes);
    auto ov = drawOverview(g, fo);
    if (!ov) {
      llvm::consumeError(ov.takeError());
      return refuse(g.numNodes(), "-view=full", o.maxNodes,
                    fit.empty() ? "raise -max-nodes" : "views that fit: " + llvm::join(fit, ", "));
    }
    ov->fallbackNote = fmt::format(
        "-view=full would draw {} nodes, more than -max-nodes={}; drawing the overview instead "
        "({} nodes). Drill down with {}, or raise -max-nodes",
        g.numNodes(), o.maxNodes, ov->nodes.size(),
        fit.empty() ? std::string("-view=device:NAME") : llvm::join(fit, ", "));
    return ov;
  }
  Drawing d;
  const Infrastructure &defs = g.definitions();
  d.name = defs.name.empty() ? "fabric" : defs.name;
  ClusterMap clusters(d, "b");
  for (NodeId n = 0; n < g.numNodes(); ++n) {
    auto p = g.decode(n);
    const auto &inst = g.instances()[p.instance];
    std::string boxKey = fmt::format("{}.{}", inst.name, p.copy);
    int boxCluster = clusters.get(
        boxKey,
        fmt::format("{}[{}] : {}", inst.name, p.copy, defs.devices[inst.device].name), -1,
        roleFill(inst.role));
    int cluster = clusterOfPath(p, clusters, boxKey, boxCluster);
    const Component &leaf = p.leaf();
    Attrs a = componentStyle(leaf.kind);
    a.push_back({"label", componentLabel(leaf, fmt::format("[{}]", p.components.back().second))});
    a.push_back({"tooltip", g.name(n)});
    d.addNode(g.name(n), std::move(a), cluster);
  }
  // Edges point away from the endpoints (xpus, or hosts' nics), so that with
  // rankdir=BT every path climbs from the endpoints through the switch tiers, inside
  // boxes as well as between them.
  std::vector<uint32_t> dist(g.numNodes(), ~0u);
  std::vector<NodeId> frontier(g.endpoints().begin(), g.endpoints().end()), next;
  for (NodeId n : frontier)
    dist[n] = 0;
  for (uint32_t level = 1; !frontier.empty(); ++level) {
    next.clear();
    for (NodeId n : frontier)
      for (const auto &a : g.neighbours(n))
        if (dist[a.node] == ~0u) {
          dist[a.node] = level;
          next.push_back(a.node);
        }
    frontier.swap(next);
  }
  LinkLegend legend(g);
  for (const auto &e : g.edges()) {
    legend.count(e.link, 1);
    NodeId tail = e.u, head = e.v;
    if (dist[tail] > dist[head])
      std::swap(tail, head);
    Attrs a = {{"color", legend.colour(e.link)}, {"tooltip", legend.describe(e.link)}};
    if (legend.dashed(e.link))
      a.push_back({"style", "dashed"});
    d.addEdge(tail, head, std::move(a));
  }
  std::vector<std::string> lines = {
      fmt::format("every node of the fully qualified graph · {} nodes, {} edges", g.numNodes(),
                  g.numEdges())};
  setCommonStyle(d, titleBlock(d.name, lines, o.digest, legend), "BT");
  return d;
}

} // namespace infracc::viz
