// The overview: one node per device copy ("box"), summarised when that would be
// unreadable. Levels, finest first (-aggregate=auto takes the first that fits):
//
//   none      one node per box
//   hosts     hosts with exactly the same neighbours share a node (host[0:8] ×8)
//   switches  hosts attached to a single switch are folded into that switch's node
//             (router[3] +2 server); what remains is the switch network
//   classes   boxes of equal structure share a node (leaf ×32), see UnitGraph.h
//
// Tiers (ir/FabricStructure.h) become dot ranks from the bottom (hosts) up. A drawing
// left with one tier (a direct network, or switches with folded hosts) is laid out by
// neato, and when its nodes form a torus, mesh or ring, on that grid.
#include "visualize/FabricView.h"

#include "support/Diagnostics.h"
#include "visualize/Lattice.h"
#include "visualize/Style.h"
#include "visualize/UnitGraph.h"
#include "visualize/ViewCommon.h"

#include <llvm/ADT/StringExtras.h>

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>

namespace infracc::viz {

namespace {

struct Boxes {
  std::vector<uint32_t> instance;   // per box
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
  b.units.tier = drawingRows(g);
  std::vector<uint32_t> box = boxOfNodes(g);
  for (const auto &e : g.edges())
    if (box[e.u] != box[e.v])
      b.units.edges.push_back(
          {std::min(box[e.u], box[e.v]), std::max(box[e.u], box[e.v]), e.link, 1});
  b.units.normaliseEdges();
  return b;
}

/// What the overview draws: the grouping of boxes into nodes, which members are
/// hosts folded into a switch's node, and the edges between nodes.
struct Summary {
  Aggregation level = Aggregation::None;
  Grouping grouping;
  std::vector<bool> folded;        // per box
  std::vector<uint32_t> tier;      // per group: the tier of its (unfolded) members
  std::vector<GroupEdge> edges;    // edges inside a node dropped when they are folds
  uint32_t numTiers = 0;

  uint32_t widestTier() const {
    std::map<uint32_t, uint32_t> perTier;
    uint32_t widest = 0;
    for (uint32_t t : tier)
      widest = std::max(widest, ++perTier[t]);
    return widest;
  }
  /// Whether some tier is itself a network (a torus of switches, dragonfly groups):
  /// more links inside the tier than half its nodes. dot would string such a tier out
  /// in one row; folding the hosts leaves it to the single-tier layouts.
  bool hasNetworkInATier() const {
    std::map<uint32_t, uint32_t> nodes, flat;
    for (uint32_t t : tier)
      ++nodes[t];
    for (const GroupEdge &e : edges)
      if (e.ga != e.gb && tier[e.ga] == tier[e.gb])
        ++flat[tier[e.ga]];
    for (auto &[t, f] : flat)
      if (f > nodes[t] / 2)
        return true;
    return false;
  }
  bool fits() const {
    if (grouping.numGroups() > OverviewTargetNodes || edges.size() > OverviewTargetEdges)
      return false;
    return numTiers <= 1 || (widestTier() <= OverviewTargetWidth && !hasNetworkInATier());
  }
};

/// Hosts whose every edge leaves for one and the same switch join that switch's group.
Grouping foldHosts(const UnitGraph &u, std::vector<bool> &folded) {
  uint32_t n = u.numUnits();
  std::vector<uint32_t> into(n, ~0u);
  std::vector<bool> several(n, false);
  for (const auto &e : u.edges)
    for (auto [a, b] : {std::pair{e.a, e.b}, std::pair{e.b, e.a}}) {
      if (u.tier[a] != 0 || u.tier[b] == 0)
        continue;
      if (into[a] == ~0u)
        into[a] = b;
      else if (into[a] != b)
        several[a] = true;
    }
  // A host with an edge to another host (a direct link) stays visible.
  for (const auto &e : u.edges)
    if (u.tier[e.a] == 0 && u.tier[e.b] == 0)
      several[e.a] = several[e.b] = true;
  folded.assign(n, false);
  Grouping gr;
  gr.groupOf.assign(n, ~0u);
  for (uint32_t v = 0; v < n; ++v) {
    folded[v] = u.tier[v] == 0 && into[v] != ~0u && !several[v];
    if (!folded[v]) {
      gr.groupOf[v] = gr.numGroups();
      gr.members.push_back({v});
    }
  }
  for (uint32_t v = 0; v < n; ++v)
    if (folded[v]) {
      gr.groupOf[v] = gr.groupOf[into[v]];
      auto &m = gr.members[gr.groupOf[v]];
      m.insert(std::upper_bound(m.begin(), m.end(), v), v);
    }
  return gr;
}

Summary summarise(const Boxes &b, Aggregation level) {
  Summary s;
  s.level = level;
  const UnitGraph &u = b.units;
  s.folded.assign(u.numUnits(), false);
  switch (level) {
  case Aggregation::Auto:
  case Aggregation::None:
    s.grouping = groupNone(u);
    break;
  case Aggregation::Hosts: {
    std::vector<bool> mergeable(u.numUnits());
    for (uint32_t v = 0; v < u.numUnits(); ++v)
      mergeable[v] = u.tier[v] == 0;
    s.grouping = groupByNeighbours(u, mergeable);
    break;
  }
  case Aggregation::Switches:
    s.grouping = foldHosts(u, s.folded);
    break;
  case Aggregation::Classes:
    s.grouping = groupByClasses(u, OverviewTargetNodes);
    break;
  }
  s.tier.assign(s.grouping.numGroups(), 0);
  for (uint32_t k = 0; k < s.grouping.numGroups(); ++k)
    for (uint32_t v : s.grouping.members[k])
      if (!s.folded[v])
        s.tier[k] = std::max(s.tier[k], u.tier[v]);
  std::set<uint32_t> tiers(s.tier.begin(), s.tier.end());
  s.numTiers = static_cast<uint32_t>(tiers.size());
  for (const GroupEdge &e : groupEdges(u, s.grouping))
    if (!(level == Aggregation::Switches && e.ga == e.gb))
      s.edges.push_back(e);
  return s;
}

Summary chooseSummary(const Boxes &b, Aggregation want) {
  if (want != Aggregation::Auto)
    return summarise(b, want);
  // One node per box is only tried when the boxes are few.
  if (b.units.numUnits() <= OverviewTargetNodes && b.units.edges.size() <= OverviewTargetEdges)
    if (Summary s = summarise(b, Aggregation::None); s.fits())
      return s;
  for (Aggregation level : {Aggregation::Hosts, Aggregation::Switches})
    if (Summary s = summarise(b, level); s.fits())
      return s;
  return summarise(b, Aggregation::Classes);
}

const char *aggregationName(Aggregation level) {
  switch (level) {
  case Aggregation::Auto: return "auto";
  case Aggregation::None: return "none";
  case Aggregation::Hosts: return "hosts";
  case Aggregation::Switches: return "switches";
  case Aggregation::Classes: return "classes";
  }
  return "?";
}

const char *levelNote(Aggregation level) {
  switch (level) {
  case Aggregation::Hosts: return "hosts with the same neighbours are drawn as one node (×N)";
  case Aggregation::Switches:
    return "hosts attached to a single switch are drawn inside that switch's node (+N)";
  case Aggregation::Classes:
    return "boxes of equal structure (same device, tier and neighbours) are drawn as one node "
           "(×N)";
  case Aggregation::Auto:
  case Aggregation::None: break;
  }
  return nullptr;
}

void pin(Drawing &d, uint32_t node, double x, double y) {
  d.nodes[node].attrs.push_back({"pos", fmt::format("{:.2f},{:.2f}!", x, y)});
}

/// Lines that leave the picture's main structure (wrap-around links, links between
/// blocks of a grid) are drawn faint, so that the grid itself stays legible.
void fade(Drawing::Edge &e) {
  for (Attr &a : e.attrs)
    if (a.key == "color" && a.value.size() == 7)
      a.value += "70";
}

/// Pins the nodes of a single-tier drawing on a grid or circle when they are the
/// copies 0..n-1 of one instance and form a torus, mesh or ring. Returns the lattice.
std::optional<Lattice> placeOnLattice(Drawing &d, const Boxes &b, const Summary &s) {
  uint32_t n = s.grouping.numGroups();
  uint32_t instance = ~0u;
  for (uint32_t k = 0; k < n; ++k) {
    uint32_t primary = ~0u, count = 0;
    for (uint32_t v : s.grouping.members[k])
      if (!s.folded[v]) {
        primary = v;
        ++count;
      }
    if (k == 0 && count == 1)
      instance = b.instance[primary];
    if (count != 1 || b.instance[primary] != instance || b.copy[primary] != k)
      return std::nullopt;
  }
  std::vector<std::vector<uint32_t>> neighbours(n);
  for (const GroupEdge &e : s.edges)
    if (e.ga != e.gb) {
      neighbours[e.ga].push_back(e.gb);
      neighbours[e.gb].push_back(e.ga);
    }
  for (auto &nb : neighbours) {
    std::sort(nb.begin(), nb.end());
    nb.erase(std::unique(nb.begin(), nb.end()), nb.end());
  }
  std::optional<Lattice> l = detectLattice(neighbours);
  if (!l)
    return std::nullopt;
  auto pos = latticePositions(*l, 1.4, 1.0);
  for (uint32_t k = 0; k < n; ++k)
    pin(d, k, pos[k].first, pos[k].second);
  // Coordinates, last dimension fastest; an edge is local when it joins neighbours
  // along one of the two dimensions a block of the grid shows.
  size_t dims = l->dims.size();
  auto coord = [&](uint32_t v, size_t i) {
    for (size_t j = dims; --j > i;)
      v /= l->dims[j];
    return v % l->dims[i];
  };
  for (Drawing::Edge &e : d.edges) {
    bool local = true;
    for (size_t i = 0; i < dims; ++i) {
      uint32_t a = coord(e.tail, i), c = coord(e.head, i);
      if (a == c)
        continue;
      uint32_t gap = a > c ? a - c : c - a;
      // On a ring drawn as a circle the wrap-around link is as short as any other.
      bool adjacent = gap == 1 || (dims == 1 && l->wrap && gap == l->dims[0] - 1);
      local &= adjacent && (l->dims.size() == 1 || i + 2 >= dims);
    }
    if (!local)
      fade(e);
  }
  return l;
}

/// For a single-tier network made of equal groups (dragonfly groups: the components
/// of one link's edges, all of one size), pins each group on a small circle and the
/// groups around a large one. Returns the link and the group size.
std::optional<std::pair<LinkId, uint32_t>> placeInGroups(Drawing &d, const Summary &s) {
  uint32_t n = s.grouping.numGroups();
  std::set<LinkId> links;
  for (const GroupEdge &e : s.edges)
    if (e.ga != e.gb)
      links.insert(e.link);
  if (links.size() < 2)
    return std::nullopt;
  for (LinkId link : links) {
    // Components of this link's edges (union-find).
    std::vector<uint32_t> parent(n);
    for (uint32_t v = 0; v < n; ++v)
      parent[v] = v;
    std::function<uint32_t(uint32_t)> find = [&](uint32_t v) {
      return parent[v] == v ? v : parent[v] = find(parent[v]);
    };
    for (const GroupEdge &e : s.edges)
      if (e.link == link && e.ga != e.gb)
        parent[find(e.ga)] = find(e.gb);
    std::map<uint32_t, std::vector<uint32_t>> comps;   // root -> members, ascending
    for (uint32_t v = 0; v < n; ++v)
      comps[find(v)].push_back(v);
    if (comps.size() < 2)
      continue;
    size_t size = comps.begin()->second.size();
    bool equal = size >= 2 && llvm::all_of(comps, [&](auto &c) { return c.second.size() == size; });
    if (!equal)
      continue;
    std::vector<std::vector<uint32_t>> groups;
    for (auto &[root, members] : comps)
      groups.push_back(members);
    std::sort(groups.begin(), groups.end());
    double r = std::max(0.9, double(size) * 1.5 / (2 * M_PI));
    double big = std::max(2 * r + 1.5, groups.size() * (2 * r + 1.5) / (2 * M_PI));
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      double ga = 2 * M_PI * double(gi) / double(groups.size());
      double cx = big * std::sin(ga), cy = big * std::cos(ga);
      for (size_t j = 0; j < size; ++j) {
        // Members start on the side facing the centre, so neighbouring groups' links
        // do not cross the whole group.
        double a = ga + M_PI + 2 * M_PI * double(j) / double(size);
        pin(d, groups[gi][j], cx + r * std::sin(a), cy + r * std::cos(a));
      }
    }
    return std::pair{link, static_cast<uint32_t>(size)};
  }
  return std::nullopt;
}

Drawing buildOverview(const FabricGraph &g, const Boxes &b, const Summary &s,
                      const FabricViewOptions &o) {
  const Infrastructure &defs = g.definitions();
  const Grouping &gr = s.grouping;
  Drawing d;
  d.name = defs.name.empty() ? "fabric" : defs.name;
  bool layered = s.numTiers > 1;
  if (!layered)
    d.engine = "neato";

  // Self-loops of a class (links among its own members) are described in its node.
  std::vector<std::vector<std::string>> loopLines(gr.numGroups());
  LinkLegend legend(g);
  for (const GroupEdge &e : s.edges)
    if (e.ga == e.gb && gr.members[e.ga].size() > 1)
      loopLines[e.ga].push_back(fmt::format(
          "↻ {} {} each",
          e.minA == e.maxA ? std::to_string(e.minA) : fmt::format("{}–{}", e.minA, e.maxA),
          legend.describe(e.link)));

  // A node's own boxes (its "primary" members), apart from hosts folded into it.
  std::vector<std::vector<uint32_t>> primaries(gr.numGroups());
  for (uint32_t k = 0; k < gr.numGroups(); ++k)
    for (uint32_t v : gr.members[k])
      if (!s.folded[v])
        primaries[k].push_back(v);

  std::set<std::string> usedIds;
  std::vector<std::string> memberWord(gr.numGroups());
  for (uint32_t k = 0; k < gr.numGroups(); ++k) {
    const std::vector<uint32_t> &primary = primaries[k];
    std::map<uint32_t, uint64_t> foldedPerInstance;
    for (uint32_t v : gr.members[k])
      if (s.folded[v])
        ++foldedPerInstance[b.instance[v]];
    uint32_t inst = b.instance[primary.front()];
    const auto &info = g.instances()[inst];
    std::vector<uint64_t> copies;
    for (uint32_t v : primary)
      copies.push_back(b.copy[v]);
    std::string name = info.name + sliceOf(copies, info.count);
    std::string id = name;
    for (int n = 2; !usedIds.insert(id).second; ++n)
      id = fmt::format("{}#{}", name, n);
    std::string label = name;
    if (primary.size() > 1)
      label += "\\n×" + formatCount(primary.size());
    for (auto &[fi, count] : foldedPerInstance)
      label += fmt::format("\\n+{} {}", formatCount(count), g.instances()[fi].name);
    for (const std::string &l : loopLines[k])
      label += "\\n" + l;
    std::string tooltip =
        fmt::format("{} ({} × device {}, tier {})", name, primary.size(),
                    defs.devices[info.device].name, s.tier[k]);
    Attrs a = {{"label", label},
               {"tooltip", tooltip},
               {"shape", "box"},
               {"style", info.role == InstanceRole::Switch ? "filled" : "rounded,filled"},
               {"fillcolor", roleFill(info.role)}};
    if (primary.size() > 1)
      a.push_back({"peripheries", "2"});
    d.addNode(id, std::move(a));
    memberWord[k] = info.name;
  }
  if (layered) {
    std::map<uint32_t, std::vector<uint32_t>> byTier;
    for (uint32_t k = 0; k < gr.numGroups(); ++k)
      byTier[s.tier[k]].push_back(k);
    for (auto &[t, nodes] : byTier) {
      // Invisible edges keep each tier in copy order (dot would otherwise permute it
      // to save a few crossings, and leaf[2] left of leaf[0] reads as a mistake).
      for (size_t i = 1; i < nodes.size(); ++i)
        d.addEdge(nodes[i - 1], nodes[i], {{"style", "invis"}});
      d.sameRank.push_back({-1, std::move(nodes)});
    }
  }

  // Edges, the lower tier as tail so that dot stacks tiers upwards (rankdir=BT).
  auto summarised = [&](uint32_t k) { return primaries[k].size() > 1; };
  size_t wantLabels = llvm::count_if(s.edges, [&](const GroupEdge &e) {
    return e.total > 1 || summarised(e.ga) || summarised(e.gb);
  });
  bool labelled = wantLabels <= MaxLabelledEdges;
  for (const GroupEdge &e : s.edges) {
    legend.count(e.link, e.total);
    std::vector<std::string> per;
    if (summarised(e.ga) && e.ga != e.gb)
      per.push_back(perMember(e.minA, e.maxA, memberWord[e.ga]));
    if (e.gb != e.ga && summarised(e.gb))
      per.push_back(perMember(e.minB, e.maxB, memberWord[e.gb]));
    std::string detail = llvm::join(per, " · ");
    std::string tooltip = fmt::format("{} – {}: {}{}{}", d.nodes[e.ga].id, d.nodes[e.gb].id,
                                      e.total > 1 ? "×" + formatCount(e.total) + " " : "",
                                      legend.describe(e.link),
                                      detail.empty() ? "" : " (" + detail + ")");
    uint32_t tail = e.ga, head = e.gb;
    if (s.tier[tail] > s.tier[head])
      std::swap(tail, head);
    bool loop = e.ga == e.gb;
    std::vector<std::string> lines;
    if (!detail.empty())
      lines.push_back(detail);
    d.addEdge(tail, head,
              edgeAttrs(legend, e.link, e.total, labelled && !loop, lines, tooltip));
  }

  // Title.
  uint64_t hosts = 0, switches = 0, others = 0;
  for (const auto &info : g.instances())
    (info.role == InstanceRole::Host     ? hosts
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
  if (const char *note = levelNote(s.level))
    lines.push_back(note);
  if (!o.titleNote.empty())
    lines.push_back(o.titleNote);
  std::optional<Lattice> lattice;
  std::optional<std::pair<LinkId, uint32_t>> groups;
  if (!layered) {
    lattice = placeOnLattice(d, b, s);
    if (!lattice)
      groups = placeInGroups(d, s);
  }
  if (groups)
    lines.push_back(fmt::format("drawn as groups of {} joined by {} (its connected parts), "
                                "arranged in a circle",
                                groups->second, g.link(groups->first).name));
  if (lattice) {
    std::vector<std::string> dims;
    for (uint32_t x : lattice->dims)
      dims.push_back(std::to_string(x));
    std::string shape = lattice->dims.size() == 1
                            ? fmt::format("{} of {}", lattice->wrap ? "ring" : "line", dims[0])
                            : fmt::format("{} {}", llvm::join(dims, "×"),
                                          lattice->wrap ? "torus" : "mesh");
    std::string faint;
    if (lattice->dims.size() > 2)
      faint = lattice->wrap ? "; wrap-around links and links between the blocks are faint"
                            : "; links between the blocks are faint";
    else if (lattice->dims.size() == 2 && lattice->wrap)
      faint = "; wrap-around links are faint";
    lines.push_back(fmt::format("drawn as a {} in copy order{}", shape, faint));
  }
  setCommonStyle(d, titleBlock(d.name, lines, o.digest, legend), layered ? "BT" : "TB");
  if (!layered) {
    // Pinned layouts place nodes apart already; only free ones need overlap removal.
    d.graph.push_back({"overlap", lattice || groups ? "true" : "false"});
    d.graph.push_back({"splines", "true"});
    d.graph.push_back({"sep", "+6"});
  }
  return d;
}

} // namespace

llvm::Expected<Drawing> drawOverview(const FabricGraph &g, const FabricViewOptions &o) {
  Boxes b = collectBoxes(g);
  Summary s = chooseSummary(b, o.aggregate);
  if (s.grouping.numGroups() <= o.maxNodes)
    return buildOverview(g, b, s, o);
  if (o.aggregate == Aggregation::Auto)
    return refuse(s.grouping.numGroups(), "the overview", o.maxNodes, "raise -max-nodes");
  // A forced level too large to draw: the automatic summary instead.
  uint32_t wanted = s.grouping.numGroups();
  s = chooseSummary(b, Aggregation::Auto);
  if (s.grouping.numGroups() > o.maxNodes)
    return refuse(wanted, "the overview", o.maxNodes, "raise -max-nodes");
  FabricViewOptions fo = o;
  fo.titleNote = fmt::format("-aggregate={} would draw {} nodes (more than -max-nodes={}): "
                             "summarised automatically",
                             aggregationName(o.aggregate), wanted, o.maxNodes);
  Drawing d = buildOverview(g, b, s, fo);
  d.fallbackNote = fmt::format("-aggregate={} would draw {} nodes, more than -max-nodes={}; "
                                  "drawing the automatic summary instead ({} nodes); raise "
                                  "-max-nodes to draw it",
                                  aggregationName(o.aggregate), wanted, o.maxNodes,
                                  s.grouping.numGroups());
  return d;
}

} // namespace infracc::viz
