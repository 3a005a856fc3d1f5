#include "visualize/FabricView.h"

#include "compiler/Diagnostics.h"
#include "ir/FabricTiers.h"
#include "visualize/Style.h"
#include "visualize/UnitGraph.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/raw_ostream.h>

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <set>

namespace infracc::viz {

namespace {

// Bundles of parallel edges are labelled (`×8 nvlink 400 Gb/s`) only when there are
// at most this many of them: beyond that the labels crowd each other and widen the
// layout, and the legend says how the edges of each link are bundled instead. Every
// edge keeps a tooltip (SVG) with the full text.
constexpr size_t MaxLabelledEdges = 12;

// ------------------------------------------------------------------------------
// Pieces shared by the views
// ------------------------------------------------------------------------------

/// Colours per link: links with the same name and physics share a colour and a
/// legend row, whichever device defines them.
class LinkLegend {
public:
  explicit LinkLegend(const FabricGraph &g) : g_(g) {}

  size_t slot(LinkId l) {
    const auto &info = g_.link(l);
    std::string key = info.name + "\x1f" + formatLinkPhysics(info.bandwidth, info.latency);
    auto [it, fresh] = slots_.try_emplace(key, rows_.size());
    if (fresh)
      rows_.push_back({info.name, formatLinkPhysics(info.bandwidth, info.latency)});
    return it->second;
  }
  /// One drawn line standing for n edges of link l.
  void count(LinkId l, uint64_t n) {
    Row &r = rows_[slot(l)];
    r.edges += n;
    r.lines += 1;
    r.minBundle = std::min(r.minBundle, n);
    r.maxBundle = std::max(r.maxBundle, n);
  }
  const char *colour(LinkId l) { return linkColour(slot(l)); }
  const char *style(LinkId l) { return linkStyle(slot(l)); }

  /// "eth 100 Gb/s": what an edge label says about its link.
  std::string describe(LinkId l) const {
    const auto &info = g_.link(l);
    std::string s = info.name;
    if (info.bandwidth)
      s += " " + formatBandwidth(*info.bandwidth);
    return s;
  }

  void appendRows(std::string &html) const {
    for (size_t i = 0; i < rows_.size(); ++i) {
      const Row &r = rows_[i];
      std::string edges = fmt::format("{} edge{}", formatCount(r.edges), r.edges == 1 ? "" : "s");
      if (r.lines != r.edges)
        edges += fmt::format(" in {} line{} of ×{}", formatCount(r.lines), r.lines == 1 ? "" : "s",
                             r.minBundle == r.maxBundle
                                 ? formatCount(r.minBundle)
                                 : formatCount(r.minBundle) + "–" + formatCount(r.maxBundle));
      html += fmt::format(
          "<TR><TD ALIGN=\"RIGHT\"><FONT COLOR=\"{}\"><B>{}</B></FONT></TD>"
          "<TD ALIGN=\"LEFT\">{}</TD><TD ALIGN=\"LEFT\">{}</TD>"
          "<TD ALIGN=\"LEFT\">{}</TD></TR>",
          linkColour(i), linkStyle(i) == std::string("solid") ? "━━━" : "╍╍╍",
          htmlEscape(r.name), htmlEscape(r.physics.empty() ? "(no physical data)" : r.physics),
          edges);
    }
  }
  size_t size() const { return rows_.size(); }

private:
  struct Row {
    std::string name, physics;
    uint64_t edges = 0, lines = 0, minBundle = ~uint64_t(0), maxBundle = 0;
  };
  const FabricGraph &g_;
  std::map<std::string, size_t> slots_;
  std::vector<Row> rows_;
};

/// The graph label: title, a line of facts, the digest, a note on what is drawn,
/// and the link legend.
std::string titleBlock(llvm::StringRef title, llvm::ArrayRef<std::string> lines,
                       llvm::StringRef digest, const LinkLegend &legend) {
  std::string html = "<TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" CELLPADDING=\"2\">";
  html += fmt::format("<TR><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"16\"><B>{}</B>"
                      "</FONT></TD></TR>",
                      htmlEscape(title));
  for (const std::string &l : lines)
    html += fmt::format("<TR><TD ALIGN=\"LEFT\">{}</TD></TR>", htmlEscape(l));
  if (!digest.empty())
    html += fmt::format("<TR><TD ALIGN=\"LEFT\"><FONT POINT-SIZE=\"9\">digest "
                        "{}</FONT></TD></TR>",
                        htmlEscape(digest));
  // The legend is a table of its own, so that its columns do not stretch to the
  // width of the title lines.
  if (legend.size()) {
    html += "<TR><TD ALIGN=\"LEFT\"><TABLE BORDER=\"0\" CELLBORDER=\"0\" CELLSPACING=\"0\" "
            "CELLPADDING=\"1\">";
    legend.appendRows(html);
    html += "</TABLE></TD></TR>";
  }
  html += "</TABLE>";
  return html;
}

void setCommonStyle(Drawing &d, std::string titleHtml, llvm::StringRef rankdir) {
  d.graph = {{"rankdir", rankdir.str()},
             {"fontname", FontName},
             {"fontsize", "11"},
             {"labelloc", "t"},
             {"labeljust", "l"},
             {"nodesep", "0.25"},
             {"ranksep", "0.7"},
             {"label", std::move(titleHtml), true}};
  d.nodeDefaults = {{"fontname", FontName}, {"fontsize", "11"}, {"margin", "0.1,0.04"}};
  d.edgeDefaults = {{"fontname", FontName}, {"fontsize", "9"}, {"dir", "none"}};
}

/// Compact copy ranges in InfraGraph's slice notation: [0:16], [0:16:2], [1,5,9],
/// or "" when `copies` is every copy of something with `count` copies.
std::string sliceOf(const std::vector<uint64_t> &copies, uint64_t count) {
  if (copies.size() == 1)
    return fmt::format("[{}]", copies[0]);
  if (copies.size() == count)
    return "";
  uint64_t step = copies[1] - copies[0];
  bool arithmetic = step > 0;
  for (size_t i = 2; arithmetic && i < copies.size(); ++i)
    arithmetic = copies[i] - copies[i - 1] == step;
  if (arithmetic)
    return step == 1 ? fmt::format("[{}:{}]", copies.front(), copies.back() + 1)
                     : fmt::format("[{}:{}:{}]", copies.front(), copies.back() + 1, step);
  std::string s = "[";
  for (size_t i = 0; i < copies.size() && i < 3; ++i)
    s += (i ? "," : "") + std::to_string(copies[i]);
  return s + (copies.size() > 3 ? ",…]" : "]");
}

std::string perMember(uint64_t lo, uint64_t hi, llvm::StringRef what) {
  return lo == hi ? fmt::format("{} per {}", lo, what)
                  : fmt::format("{}–{} per {}", lo, hi, what);
}

/// Edge attributes for `total` parallel edges of link l (label per density).
Attrs edgeAttrs(LinkLegend &legend, LinkId l, uint64_t total, bool labelled,
                llvm::StringRef detail, llvm::StringRef tooltip) {
  std::string text = (total > 1 ? "×" + formatCount(total) + " " : std::string()) +
                     legend.describe(l);
  Attrs a = {{"color", legend.colour(l)}};
  if (std::string(legend.style(l)) != "solid")
    a.push_back({"style", legend.style(l)});
  if (total > 1)
    a.push_back({"penwidth", fmt::format("{:.1f}", std::min(1.0 + 0.75 * std::log2(double(total)), 4.0))});
  // A single edge needs no label: its colour and the legend say what it is.
  std::string label;
  if (labelled && (total > 1 || !detail.empty()))
    label = detail.empty() ? text : text + "\\n" + detail.str();
  if (!label.empty())
    a.push_back({"label", label});
  a.push_back({"tooltip", (tooltip.empty() ? text : tooltip.str())});
  return a;
}

/// Drawn edges that would carry a label: bundles of parallel edges, and edges
/// between summarised groups.
size_t bundles(const std::vector<GroupEdge> &edges, const Grouping &gr) {
  return llvm::count_if(edges, [&](const GroupEdge &e) {
    return e.total > 1 || gr.members[e.ga].size() > 1 || gr.members[e.gb].size() > 1;
  });
}

llvm::Error refuse(uint32_t wouldDraw, llvm::StringRef view, uint32_t maxNodes,
                   llvm::StringRef alternatives) {
  return usageError(fmt::format("{} would draw {} nodes, more than -max-nodes={}; {}", view,
                                wouldDraw, maxNodes, alternatives));
}

// ------------------------------------------------------------------------------
// Overview: one node per box (or per group of boxes)
// ------------------------------------------------------------------------------

struct Boxes {
  std::vector<uint32_t> instance;
  std::vector<uint64_t> copy;
  UnitGraph units;
};

Boxes collectBoxes(const FabricGraph &g) {
  Boxes b;
  uint32_t n = g.numDeviceCopies();
  b.instance.reserve(n);
  b.copy.reserve(n);
  for (uint32_t i = 0; i < g.instances().size(); ++i)
    for (uint64_t c = 0; c < g.instances()[i].count; ++c) {
      b.instance.push_back(i);
      b.copy.push_back(c);
    }
  b.units.kind = b.instance;
  b.units.tier = detectTiers(g).tierOfBox;
  std::vector<uint32_t> box = boxOfNodes(g);
  for (const auto &e : g.edges())
    if (box[e.u] != box[e.v])
      b.units.edges.push_back(
          {std::min(box[e.u], box[e.v]), std::max(box[e.u], box[e.v]), e.link, 1});
  b.units.normaliseEdges();
  return b;
}

struct ChosenGrouping {
  Grouping grouping;
  std::vector<GroupEdge> edges;
  Aggregation level;
};

ChosenGrouping chooseOverviewGrouping(const Boxes &b, Aggregation want) {
  auto make = [&](Aggregation level) {
    ChosenGrouping c;
    c.level = level;
    if (level == Aggregation::None) {
      c.grouping = groupNone(b.units);
    } else if (level == Aggregation::Hosts) {
      std::vector<bool> mergeable(b.units.numUnits());
      for (uint32_t u = 0; u < b.units.numUnits(); ++u)
        mergeable[u] = b.units.tier[u] == 0;
      c.grouping = groupByNeighbours(b.units, mergeable);
    } else {
      c.grouping = groupByClasses(b.units, OverviewTargetNodes);
    }
    c.edges = groupEdges(b.units, c.grouping);
    return c;
  };
  if (want != Aggregation::Auto)
    return make(want);
  auto widestTier = [&](const Grouping &gr) {
    std::map<uint32_t, uint32_t> perTier;
    uint32_t widest = 0;
    for (const auto &m : gr.members)
      widest = std::max(widest, ++perTier[b.units.tier[m.front()]]);
    return widest;
  };
  auto fits = [&](const ChosenGrouping &c) {
    return c.grouping.numGroups() <= OverviewTargetNodes &&
           c.edges.size() <= OverviewTargetEdges && widestTier(c.grouping) <= OverviewTargetWidth;
  };
  // Cheap test first: one node per box is only tried when the boxes are few.
  if (b.units.numUnits() <= OverviewTargetNodes && b.units.edges.size() <= OverviewTargetEdges) {
    ChosenGrouping none = make(Aggregation::None);
    if (fits(none))
      return none;
  }
  ChosenGrouping hosts = make(Aggregation::Hosts);
  if (fits(hosts))
    return hosts;
  return make(Aggregation::Classes);
}

const char *roleFill(InstanceRole r) {
  switch (r) {
  case InstanceRole::Host: return "#D9EAD3";
  case InstanceRole::Switch: return "#CFE2F3";
  case InstanceRole::Other: break;
  }
  return "#EEEEEE";
}

Drawing buildOverview(const FabricGraph &g, const Boxes &b, const ChosenGrouping &c,
                      const FabricViewOptions &o) {
  const Infrastructure &defs = g.definitions();
  const Grouping &gr = c.grouping;
  Drawing d;
  d.name = defs.name.empty() ? "fabric" : defs.name;

  uint32_t numTiers = 0;
  for (uint32_t t : b.units.tier)
    numTiers = std::max(numTiers, t + 1);
  bool layered = numTiers > 1;
  if (!layered)
    d.engine = "neato";

  // Nodes.
  std::set<std::string> usedIds;
  std::vector<std::string> memberWord(gr.numGroups());
  for (uint32_t k = 0; k < gr.numGroups(); ++k) {
    const auto &members = gr.members[k];
    uint32_t inst = b.instance[members.front()];
    const auto &info = g.instances()[inst];
    std::vector<uint64_t> copies;
    for (uint32_t u : members)
      copies.push_back(b.copy[u]);
    std::string name = info.name + sliceOf(copies, info.count);
    std::string id = name;
    for (int n = 2; !usedIds.insert(id).second; ++n)
      id = fmt::format("{}#{}", name, n);
    const std::string &device = defs.devices[info.device].name;
    std::string label = name;
    if (members.size() > 1)
      label += "\\n×" + formatCount(members.size());
    std::string tooltip = fmt::format("{} ({} × device {}, tier {})", name, members.size(), device,
                                      b.units.tier[members.front()]);
    Attrs a = {{"label", label},
               {"tooltip", tooltip},
               {"shape", "box"},
               {"style", info.role == InstanceRole::Switch ? "filled" : "rounded,filled"},
               {"fillcolor", roleFill(info.role)}};
    if (members.size() > 1)
      a.push_back({"peripheries", "2"});
    d.addNode(id, std::move(a));
    memberWord[k] = info.name;
  }
  if (layered) {
    std::vector<std::vector<uint32_t>> byTier(numTiers);
    for (uint32_t k = 0; k < gr.numGroups(); ++k)
      byTier[b.units.tier[gr.members[k].front()]].push_back(k);
    for (auto &t : byTier) {
      if (t.empty())
        continue;
      // Invisible edges keep each tier in copy order (dot would otherwise permute it
      // to save a few crossings, and leaf[2] left of leaf[0] reads as a mistake).
      for (size_t i = 1; i < t.size(); ++i)
        d.addEdge(t[i - 1], t[i], {{"style", "invis"}});
      d.sameRank.push_back(std::move(t));
    }
  }

  // Edges, lower tier as tail so that dot stacks tiers upwards (rankdir=BT).
  LinkLegend legend(g);
  bool labelled = bundles(c.edges, gr) <= MaxLabelledEdges;
  for (const GroupEdge &e : c.edges) {
    legend.count(e.link, e.total);
    std::vector<std::string> per;
    if (gr.members[e.ga].size() > 1)
      per.push_back(perMember(e.minA, e.maxA, memberWord[e.ga]));
    if (e.gb != e.ga && gr.members[e.gb].size() > 1)
      per.push_back(perMember(e.minB, e.maxB, memberWord[e.gb]));
    std::string detail = llvm::join(per, " · ");
    std::string tooltip = fmt::format("{} – {}: {}{}{}", d.nodes[e.ga].id, d.nodes[e.gb].id,
                                      e.total > 1 ? "×" + formatCount(e.total) + " " : "",
                                      legend.describe(e.link),
                                      detail.empty() ? "" : " (" + detail + ")");
    uint32_t tail = e.ga, head = e.gb;
    if (b.units.tier[gr.members[tail].front()] > b.units.tier[gr.members[head].front()])
      std::swap(tail, head);
    d.addEdge(tail, head, edgeAttrs(legend, e.link, e.total, labelled, detail, tooltip));
  }

  // Title.
  uint64_t hosts = 0, switches = 0, others = 0;
  for (const auto &info : g.instances())
    (info.role == InstanceRole::Host ? hosts
     : info.role == InstanceRole::Switch ? switches
                                         : others) += info.count;
  std::string facts = fmt::format("{} host{}, {} switch{}", formatCount(hosts),
                                  hosts == 1 ? "" : "s", formatCount(switches),
                                  switches == 1 ? "" : "es");
  if (others)
    facts += fmt::format(", {} other device{}", formatCount(others), others == 1 ? "" : "s");
  facts += fmt::format(" · {} nodes, {} edges", formatCount(g.numNodes()),
                       formatCount(g.numEdges()));
  std::vector<std::string> lines = {facts};
  if (c.level == Aggregation::Hosts)
    lines.push_back("hosts with the same neighbours are drawn as one node (×N)");
  else if (c.level == Aggregation::Classes)
    lines.push_back("boxes of equal structure (same device, tier and neighbours) are drawn as "
                    "one node (×N)");
  setCommonStyle(d, titleBlock(d.name, lines, o.digest, legend), layered ? "BT" : "TB");
  if (!layered) {
    d.graph.push_back({"overlap", "false"});
    d.graph.push_back({"splines", "true"});
    d.graph.push_back({"sep", "+6"});
  }
  return d;
}

// ------------------------------------------------------------------------------
// Nodes of a fully qualified graph drawn one by one (device and full views)
// ------------------------------------------------------------------------------

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

// ------------------------------------------------------------------------------
// Public entry points
// ------------------------------------------------------------------------------

llvm::Expected<Drawing> drawOverview(const FabricGraph &g, const FabricViewOptions &o) {
  Boxes b = collectBoxes(g);
  ChosenGrouping c = chooseOverviewGrouping(b, o.aggregate);
  if (c.grouping.numGroups() > o.maxNodes) {
    std::string alt = o.aggregate == Aggregation::Auto
                          ? "raise -max-nodes"
                          : "use -aggregate=auto or raise -max-nodes";
    return refuse(c.grouping.numGroups(), "the overview", o.maxNodes, alt);
  }
  return buildOverview(g, b, c, o);
}

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
  LinkLegend legend(*dg);
  auto ge = groupEdges(units, gr);
  bool labelled = bundles(ge, gr) <= MaxLabelledEdges;
  for (const GroupEdge &e : ge) {
    legend.count(e.link, e.total);
    d.addEdge(e.ga, e.gb, edgeAttrs(legend, e.link, e.total, labelled, "", ""));
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
    std::vector<std::string> fit;
    if (auto ov = drawOverview(g, o)) {
      fit.push_back(fmt::format("-view=overview ({} nodes)", ov->nodes.size()));
    } else {
      llvm::consumeError(ov.takeError());
    }
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
    std::string alt = fit.empty() ? "raise -max-nodes"
                                  : "views that fit: " + llvm::join(fit, ", ");
    return refuse(g.numNodes(), "-view=full", o.maxNodes, alt);
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
    if (std::string(legend.style(e.link)) != "solid")
      a.push_back({"style", legend.style(e.link)});
    d.addEdge(tail, head, std::move(a));
  }
  std::vector<std::string> lines = {
      fmt::format("every node of the fully qualified graph · {} nodes, {} edges", g.numNodes(),
                  g.numEdges())};
  setCommonStyle(d, titleBlock(d.name, lines, o.digest, legend), "BT");
  return d;
}

} // namespace infracc::viz
