#include "backends/tracer/CodesNetwork.h"

#include "ir/AttachPoints.h"
#include "ir/FabricStructure.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <set>

namespace infracc::tracer {
namespace {

constexpr double GiB = 1073741824.0;
const std::string XpuRouterNote = "xpus wired to each other: each xpu is a router with its own "
                                  "terminal (cn_bandwidth = all its torus links together)";

// The neighbour offsets router x must have in a torus of `dims` (positions in router
// order, first dimension fastest), as a sorted set of router indices.
std::set<uint32_t> torusNeighbours(uint32_t x, const std::vector<uint32_t> &dims) {
  std::set<uint32_t> out;
  uint64_t stride = 1;
  for (uint32_t d : dims) {
    uint32_t c = uint32_t((x / stride) % d);
    if (d > 1) {
      out.insert(uint32_t(x - c * stride + ((c + 1) % d) * stride));
      out.insert(uint32_t(x - c * stride + ((c + d - 1) % d) * stride));
    }
    stride *= d;
  }
  out.erase(x);
  return out;
}

} // namespace

namespace {

// Device copies whose instance has `role`, numbered in copy order (~0u for the others).
std::vector<uint32_t> numberCopies(const FabricGraph &g, InstanceRole role, uint32_t &count) {
  std::vector<uint32_t> index(g.numDeviceCopies(), ~0u);
  count = 0;
  for (NodeId v = 0; v < g.numNodes(); ++v)
    if (g.instances()[g.instanceOf(v)].role == role && index[g.deviceCopyOf(v)] == ~0u)
      index[g.deviceCopyOf(v)] = count++;
  return index;
}

// The endpoints on each router: an endpoint whose box is a router is on it; any other
// hangs off the one router its box's attach points (ir/AttachPoints.h) are linked to.
// `bps`: the slowest of those terminal links. Nullopt with the reason in `why`.
struct Terminals {
  std::vector<std::vector<uint32_t>> of;   // per router: endpoint indices, in order
  std::optional<double> bps;
};
std::optional<Terminals> terminalsOn(const FabricGraph &g, const std::vector<uint32_t> &routerOf,
                                     uint32_t routers, llvm::StringRef routerWord,
                                     llvm::StringRef hint, std::string &why) {
  AttachPoints ap(g);
  Terminals t;
  t.of.resize(routers);
  const auto eps = g.endpoints();
  for (uint32_t i = 0; i < eps.size(); ++i) {
    const uint32_t c = g.deviceCopyOf(eps[i]);
    if (routerOf[c] != ~0u) {
      t.of[routerOf[c]].push_back(i);
      continue;
    }
    std::set<uint32_t> attached;
    for (NodeId a : ap.ofCopy(c))
      for (auto adj : g.neighbours(a))
        if (uint32_t r = routerOf[g.deviceCopyOf(adj.node)]; r != ~0u) {
          attached.insert(r);
          if (const auto &bw = g.link(g.edge(adj.edge).link).bandwidth)
            t.bps = t.bps ? std::min(*t.bps, bw->bitsPerSecond) : bw->bitsPerSecond;
        }
    if (attached.size() != 1) {
      why = fmt::format("{} is on {} {}; a CODES terminal hangs off one{}", g.name(eps[i]),
                        attached.size(), routerWord.str(), hint.str());
      return std::nullopt;
    }
    t.of[*attached.begin()].push_back(i);
  }
  return t;
}

// What passing a router's switch costs (passes/FabricCosts.h), from its first switch node.
int64_t routerSwitchPs(const FabricGraph &g, const std::vector<uint32_t> &routerOf,
                       const std::vector<int64_t> &switchPs) {
  for (NodeId v = 0; v < g.numNodes() && !switchPs.empty(); ++v)
    if (routerOf[g.deviceCopyOf(v)] != ~0u && g.kind(v) == ComponentKind::Switch)
      return switchPs[v];
  return 0;
}

// The torus, or nullopt with the reason in `why`.
std::optional<CodesNetwork> torusNetwork(const FabricGraph &g, const std::vector<int64_t> &switchPs,
                                         std::string &why) {
  auto fail = [&](const std::string &msg) -> std::optional<CodesNetwork> {
    why = msg;
    return std::nullopt;
  };
  CodesNetwork n;
  n.model = "torus";
  // Routers: switch boxes if there are any, else the boxes themselves (xpus wired to
  // each other).
  uint32_t R = 0;
  std::vector<uint32_t> routerOfCopy = numberCopies(g, InstanceRole::Switch, R);
  const bool switches = R != 0;
  if (!switches)
    routerOfCopy = numberCopies(g, InstanceRole::Host, R);
  n.routers = R;
  if (R < 2)
    return fail("a torus needs at least two routers");
  // Router-to-router links, and endpoints per router.
  std::vector<std::map<uint32_t, uint32_t>> links(R);   // neighbour -> parallel links
  std::set<double> bps;
  std::set<int64_t> ps;
  const auto eps = g.endpoints();
  for (const auto &e : g.edges()) {
    uint32_t cu = g.deviceCopyOf(e.u), cv = g.deviceCopyOf(e.v);
    if (cu == cv)
      continue;
    uint32_t ru = routerOfCopy[cu], rv = routerOfCopy[cv];
    if (ru != ~0u && rv != ~0u) {
      ++links[ru][rv];
      ++links[rv][ru];
      const auto &l = g.link(e.link);
      if (!l.bandwidth)
        return fail(fmt::format("link '{}' has no bandwidth: CODES needs link_bandwidth", l.name));
      bps.insert(l.bandwidth->bitsPerSecond);
      ps.insert(l.latency ? int64_t(std::llround(l.latency->ns * 1000)) : 0);
    }
  }
  if (bps.size() != 1 || ps.size() != 1)
    return fail("the links between routers differ in bandwidth or latency: CODES's torus has "
                "one link_bandwidth and one router_delay");
  // Endpoints: on their own router (xpu boxes) or on the router their box is wired to.
  auto terms = terminalsOn(g, routerOfCopy, R, "routers", "", why);
  if (!terms)
    return std::nullopt;
  n.serverOfEndpoint.assign(eps.size(), 0);
  for (uint32_t r = 0; r < R; ++r) {
    if (terms->of[r].size() != 1)
      return fail(fmt::format("router {} has {} endpoints: CODES's torus has one terminal per "
                              "router",
                              r, terms->of[r].size()));
    n.serverOfEndpoint[terms->of[r][0]] = r;
  }
  // Dimensions from router 0's neighbours: the +1 step of each dimension is its stride,
  // and the next stride is the first d * stride that is a neighbour (or R).
  std::set<uint32_t> nb0;
  for (auto &[r, k] : links[0])
    nb0.insert(r);
  std::vector<uint32_t> dims;
  uint64_t stride = 1;
  while (stride < R) {
    if (!nb0.count(uint32_t(stride)))
      return fail(fmt::format("router 0 is not linked to router {}: not a torus in router order",
                              stride));
    uint64_t d = 2;
    while (d * stride < R && !(nb0.count(uint32_t(d * stride)) && R % (d * stride) == 0))
      ++d;
    if (d * stride > R || R % (d * stride) != 0)
      return fail("the routers do not form a torus in router order");
    dims.push_back(uint32_t(d));
    stride *= d;
  }
  for (uint32_t r = 0; r < R; ++r) {
    std::set<uint32_t> have;
    for (auto &[x, k] : links[r])
      have.insert(x);
    if (have != torusNeighbours(r, dims)) {
      std::string shape;
      for (uint32_t d : dims)
        shape += (shape.empty() ? "" : "x") + std::to_string(d);
      return fail(fmt::format("router {} is not wired as position {} of a {} torus (a mesh "
                              "without wrap-around links is not a CODES torus)",
                              r, r, shape));
    }
  }
  n.dims = dims;
  n.linkBytesPerSecond = *bps.begin() / 8;
  n.cnBytesPerSecond = terms->bps ? *terms->bps / 8 : n.linkBytesPerSecond * 2 * dims.size();
  const int64_t swPs = switches ? routerSwitchPs(g, routerOfCopy, switchPs) : 0;
  n.routerDelayNs = double(*ps.begin() + swPs) / 1000;
  if (!switches)
    n.notes.assign(1, XpuRouterNote);
  return n;
}

// Routers (switch boxes) in groups joined inside by one link name, each group a full
// mesh, and between groups by another; nullopt with the reason in `why`.
std::optional<CodesNetwork> dragonflyNetwork(const FabricGraph &g,
                                             const std::vector<int64_t> &switchPs,
                                             std::string &why) {
  auto fail = [&](const std::string &msg) -> std::optional<CodesNetwork> {
    why = msg;
    return std::nullopt;
  };
  uint32_t R = 0;
  const std::vector<uint32_t> routerOfCopy = numberCopies(g, InstanceRole::Switch, R);
  if (R < 2)
    return fail("a dragonfly needs switches");
  // Router-to-router links by link name.
  struct L { uint32_t a, b; LinkId link; };
  std::map<std::string, std::vector<L>> byName;
  for (const auto &e : g.edges()) {
    uint32_t a = routerOfCopy[g.deviceCopyOf(e.u)], b = routerOfCopy[g.deviceCopyOf(e.v)];
    if (a != ~0u && b != ~0u && a != b)
      byName[g.link(e.link).name].push_back({a, b, e.link});
  }
  if (byName.size() != 2)
    return fail(fmt::format("its routers are joined by {} kind(s) of link; a dragonfly's local "
                            "and global links are two, named apart",
                            byName.size()));
  // The local links: the name whose links make equal full meshes covering every router.
  std::string localName, globalName;
  std::vector<uint32_t> groupOf;
  uint32_t a = 0;
  for (auto &[name, links] : byName) {
    std::vector<uint32_t> comp(R);
    for (uint32_t r = 0; r < R; ++r)
      comp[r] = r;
    std::function<uint32_t(uint32_t)> find = [&](uint32_t x) {
      return comp[x] == x ? x : comp[x] = find(comp[x]);
    };
    std::set<std::pair<uint32_t, uint32_t>> pairs;
    for (const L &l : links) {
      comp[find(l.a)] = find(l.b);
      pairs.insert({std::min(l.a, l.b), std::max(l.a, l.b)});
    }
    std::map<uint32_t, std::vector<uint32_t>> members;
    for (uint32_t r = 0; r < R; ++r)
      members[find(r)].push_back(r);
    size_t size = members.begin()->second.size();
    bool cliques = size >= 2 && members.size() >= 2;
    for (auto &[root, m] : members) {
      cliques = cliques && m.size() == size;
      for (size_t i = 0; i < m.size() && cliques; ++i)
        for (size_t j = i + 1; j < m.size() && cliques; ++j)
          cliques = pairs.count({m[i], m[j]}) != 0;
    }
    if (cliques && localName.empty()) {
      localName = name;
      a = uint32_t(size);
      // Groups in order of their first router.
      std::vector<std::vector<uint32_t>> gs;
      for (auto &[root, m] : members)
        gs.push_back(m);
      std::sort(gs.begin(), gs.end());
      groupOf.assign(R, 0);
      for (uint32_t k = 0; k < gs.size(); ++k)
        for (uint32_t r : gs[k])
          groupOf[r] = k;
    } else {
      globalName = name;
    }
  }
  if (localName.empty() || globalName.empty())
    return fail("neither of its two kinds of router link makes equal full meshes (groups)");
  const uint32_t G = R / a;
  // CODES numbers routers group by group: id = group * a + position in the group.
  std::vector<uint32_t> id(R), seen(G, 0);
  for (uint32_t r = 0; r < R; ++r)
    id[r] = groupOf[r] * a + seen[groupOf[r]]++;
  CodesNetwork n;
  n.model = "dragonfly_custom";
  n.routers = R;
  n.routersPerGroup = a;
  n.groups = G;
  std::set<double> localBps, globalBps;
  std::set<int64_t> localPs, globalPs;
  auto ps = [&](LinkId l) {
    const auto &lat = g.link(l).latency;
    return lat ? int64_t(std::llround(lat->ns * 1000)) : int64_t(0);
  };
  for (const L &l : byName[localName]) {
    if (!g.link(l.link).bandwidth)
      return fail(fmt::format("link '{}' has no bandwidth", localName));
    localBps.insert(g.link(l.link).bandwidth->bitsPerSecond);
    localPs.insert(ps(l.link));
    for (auto [x, y] : {std::pair(l.a, l.b), std::pair(l.b, l.a)})
      n.intraLinks.push_back({id[x] % a, id[y] % a});
  }
  std::vector<uint32_t> globals(R, 0);
  for (const L &l : byName[globalName]) {
    if (!g.link(l.link).bandwidth)
      return fail(fmt::format("link '{}' has no bandwidth", globalName));
    if (groupOf[l.a] == groupOf[l.b])
      return fail(fmt::format("a '{}' link joins two routers of one group", globalName));
    globalBps.insert(g.link(l.link).bandwidth->bitsPerSecond);
    globalPs.insert(ps(l.link));
    for (auto [x, y] : {std::pair(l.a, l.b), std::pair(l.b, l.a)}) {
      n.interLinks.push_back({id[x], id[y]});
      ++globals[x];
    }
  }
  // The intra-group file lists one group's links (they are the same in every group).
  std::sort(n.intraLinks.begin(), n.intraLinks.end());
  n.intraLinks.erase(std::unique(n.intraLinks.begin(), n.intraLinks.end()), n.intraLinks.end());
  std::sort(n.interLinks.begin(), n.interLinks.end());
  if (localBps.size() != 1 || globalBps.size() != 1)
    return fail("its local or global links differ in bandwidth");
  n.globalChannels = *std::max_element(globals.begin(), globals.end());
  n.linkBytesPerSecond = *localBps.begin() / 8;
  n.globalBytesPerSecond = *globalBps.begin() / 8;
  // Terminals: every endpoint's box hangs off one router; the same number on each.
  auto terms = terminalsOn(g, routerOfCopy, R, "routers", "", why);
  if (!terms)
    return std::nullopt;
  n.serversPerRouter = uint32_t(terms->of[0].size());
  for (uint32_t r = 0; r < R; ++r)
    if (terms->of[r].size() != n.serversPerRouter || n.serversPerRouter == 0)
      return fail("its routers have different numbers of endpoints");
  n.serverOfEndpoint.assign(g.endpoints().size(), 0);
  for (uint32_t r = 0; r < R; ++r)
    for (uint32_t k = 0; k < terms->of[r].size(); ++k)
      n.serverOfEndpoint[terms->of[r][k]] = id[r] * n.serversPerRouter + k;
  n.cnBytesPerSecond = terms->bps ? *terms->bps / 8 : n.linkBytesPerSecond;
  n.routerDelayNs = double(*localPs.begin() + routerSwitchPs(g, routerOfCopy, switchPs)) / 1000;
  // CODES's own 1-D dragonfly (dragonfly.c, USE_DIRECT_SCHEME) when the fabric is its
  // shape (p = h = a/2, g = a*h + 1) wired its way: router at position i of group G has
  // its j-th global link to group i + j*a (the last group instead of its own), at the
  // router there in position G mod a (position i mod a seen from the last group).
  if (n.serversPerRouter * 2 == a && n.globalChannels * 2 == a && G == a * (a / 2) + 1) {
    std::vector<std::pair<uint32_t, uint32_t>> canonical;
    const uint32_t h = a / 2;
    for (uint32_t r = 0; r < R; ++r) {
      const uint32_t grp = r / a;
      uint32_t first = r % a;
      for (uint32_t j = 0; j < h; ++j, first += a) {
        uint32_t target = first == grp ? G - 1 : first;
        uint32_t pos = grp == G - 1 ? target % a : grp % a;
        canonical.push_back({r, target * a + pos});
      }
    }
    std::sort(canonical.begin(), canonical.end());
    if (canonical == n.interLinks)
      n.model = "dragonfly";
    else
      n.notes.push_back("the shape of CODES's 1-D dragonfly (p = h = a/2, g = a*h + 1), but not "
                        "its global wiring: written as dragonfly-custom to keep this fabric's");
  }
  if (*globalPs.rbegin() != *localPs.begin())
    n.approximations.push_back(fmt::format(
        "CODES has one router_delay: the global links' latency ({:g} ns) is not modelled "
        "apart from the local links' ({:g} ns)",
        double(*globalPs.rbegin()) / 1000, double(*localPs.begin()) / 1000));
  return n;
}

// The switch-to-switch links CODES's fat tree (ft_type 0, fattree.c) builds for radix k,
// tapering t and L leaves, as sorted pairs of (level, index) ids: level l switch i is
// l * 65536 * 65536 + i. Empty when CODES would refuse the parameters.
std::vector<std::pair<uint64_t, uint64_t>> codesFatTreeLinks(uint32_t levels, uint32_t k,
                                                             uint32_t t, uint32_t L,
                                                             std::array<uint32_t, 3> &count) {
  std::vector<std::pair<uint64_t, uint64_t>> links;
  const uint32_t ratio = t + 1, Ns = k / 2;
  if (k % ratio != 0 || Ns == 0 || L % Ns != 0)
    return links;
  auto id = [](uint64_t level, uint64_t i) { return (level << 32) | i; };
  count = {L, 0, 0};
  if (levels == 2) {
    count[1] = L / ratio;
    for (uint32_t l = 0; l < L; ++l)
      for (uint32_t s = 0; s < count[1]; ++s)
        for (int c = 0; c < 2; ++c)
          links.push_back({id(0, l), id(1, s)});
  } else {
    const uint32_t l1Set = k / ratio, pods = L / Ns;
    count[1] = pods * l1Set;
    uint32_t rep = k / pods;
    while (rep > 1 && l1Set % rep)
      --rep;
    if (rep == 0)
      return {};
    count[2] = (l1Set / rep) * Ns;
    for (uint32_t l = 0; l < L; ++l)
      for (uint32_t a = 0; a < l1Set; ++a)
        links.push_back({id(0, l), id(1, (l / Ns) * l1Set + a)});
    for (uint32_t a = 0; a < count[1]; ++a) {
      uint32_t l2 = (a % l1Set) / rep * Ns;
      for (uint32_t off = 0; off < Ns; ++off)
        links.push_back({id(1, a), id(2, l2 + off)});
    }
  }
  std::sort(links.begin(), links.end());
  return links;
}

// Servers of a multi-plane fat tree (ft_type 2): every host NIC hangs off one leaf; the
// NICs of a leaf are its terminals in node order, and terminal j of leaf l must be on the
// same host in every plane (CODES's rails of one terminal are one node's NICs). Every
// endpoint sends through its nearest NIC (ir/AttachPoints.h), every NIC serving the same
// number m of endpoints; model-net gives server offset o of a leaf's repetition NIC
// o % (h*R), NIC offset j*R + r being terminal j on rail r (fattree.c), so endpoint k of
// NIC (l, j, r) is server l*m*h*R + k*h*R + j*R + r.
struct PlaneTerminals {
  uint32_t perLeaf = 0, perNic = 0;   // h, m
  std::optional<double> bps;
  std::vector<uint32_t> serverOfEndpoint;
};
std::optional<PlaneTerminals> planeTerminals(const FabricGraph &g, const FabricStructure &st,
                                             const std::vector<uint32_t> &planeOf,
                                             const std::vector<uint32_t> &indexOf, uint32_t R,
                                             uint32_t L, std::string &why) {
  AttachPoints ap(g);
  // Per (plane, leaf): the host NICs on it, in node order; per NIC its (r, l, j).
  std::vector<std::vector<NodeId>> nicsOn(size_t(R) * L);
  llvm::DenseMap<NodeId, std::array<uint32_t, 3>> place;
  PlaneTerminals t;
  for (NodeId a : ap.all()) {
    if (st.copyTier[g.deviceCopyOf(a)] >= 0)
      continue;   // a switch's port
    std::set<uint32_t> leaves;
    for (auto adj : g.neighbours(a))
      if (uint32_t c = g.deviceCopyOf(adj.node); st.copyTier[c] == 0) {
        leaves.insert(c);
        if (const auto &bw = g.link(g.edge(adj.edge).link).bandwidth)
          t.bps = t.bps ? std::min(*t.bps, bw->bitsPerSecond) : bw->bitsPerSecond;
      }
    if (leaves.size() != 1) {
      why = fmt::format("{} is on {} leaves; a NIC of CODES's multi-rail fat tree hangs off one",
                        g.name(a), leaves.size());
      return std::nullopt;
    }
    const uint32_t c = *leaves.begin(), r = planeOf[c], l = indexOf[c];
    auto &on = nicsOn[size_t(r) * L + l];
    place[a] = {r, l, uint32_t(on.size())};
    on.push_back(a);
  }
  t.perLeaf = uint32_t(nicsOn[0].size());
  for (uint32_t l = 0; l < L; ++l)
    for (uint32_t r = 0; r < R; ++r) {
      const auto &on = nicsOn[size_t(r) * L + l];
      if (on.size() != t.perLeaf || on.empty()) {
        why = "its leaves have different numbers of NICs";
        return std::nullopt;
      }
      for (uint32_t j = 0; j < t.perLeaf; ++j)
        if (g.deviceCopyOf(on[j]) != g.deviceCopyOf(nicsOn[l][j])) {
          why = fmt::format("NIC {} of leaf {} is {} in plane 0 but {} in plane {}: CODES's "
                            "rails of a terminal are the NICs of one host",
                            j, l, g.name(nicsOn[l][j]), g.name(on[j]), r);
          return std::nullopt;
        }
    }
  const auto eps = g.endpoints();
  llvm::DenseMap<NodeId, std::vector<uint32_t>> servedBy;
  for (uint32_t i = 0; i < eps.size(); ++i) {
    NodeId nic = ap.nearest(eps[i]);
    if (nic == InvalidNode || !place.count(nic)) {
      why = fmt::format("{} reaches no NIC of its host", g.name(eps[i]));
      return std::nullopt;
    }
    servedBy[nic].push_back(i);
  }
  // NICs in node order, so that the one named below does not depend on hashing.
  std::vector<NodeId> nics;
  for (const auto &on : nicsOn)
    nics.insert(nics.end(), on.begin(), on.end());
  std::sort(nics.begin(), nics.end());
  auto served = [&](NodeId nic) -> llvm::ArrayRef<uint32_t> {
    auto it = servedBy.find(nic);
    return it == servedBy.end() ? llvm::ArrayRef<uint32_t>() : llvm::ArrayRef(it->second);
  };
  t.perNic = uint32_t(served(nics[0]).size());
  t.serverOfEndpoint.assign(eps.size(), 0);
  const uint32_t hR = t.perLeaf * R;
  for (NodeId nic : nics) {
    auto on = served(nic);
    if (on.size() != t.perNic) {
      why = fmt::format("{} sends for {} endpoint(s) and {} for {}; CODES gives every NIC of a "
                        "multi-rail fat tree the same number of servers",
                        g.name(nics[0]), t.perNic, g.name(nic), on.size());
      return std::nullopt;
    }
    auto [r, l, j] = place[nic];
    for (uint32_t k = 0; k < t.perNic; ++k)
      t.serverOfEndpoint[on[k]] = l * t.perNic * hR + k * hR + j * R + r;
  }
  return t;
}

// A two- or three-tier fabric wired exactly as CODES's fat tree for some radix and
// tapering, or several disjoint copies of one (planes: CODES's rails); nullopt with the
// reason.
std::optional<CodesNetwork> fatTreeNetwork(const FabricGraph &g, const std::vector<int64_t> &switchPs,
                                           std::string &why) {
  auto fail = [&](const std::string &msg) -> std::optional<CodesNetwork> {
    why = msg;
    return std::nullopt;
  };
  StructureOptions so;
  so.bisection = false;
  so.diameter = false;
  FabricStructure st = analyzeFabricStructure(g, so);
  const uint32_t levels = uint32_t(st.tiers.size());
  if (levels != 2 && levels != 3)
    return fail(fmt::format("{} switch tier(s); CODES's fat tree has two or three", levels));
  // Planes: the connected parts of the switch-to-switch links, numbered by first copy.
  const uint32_t copies = g.numDeviceCopies();
  std::vector<std::vector<uint32_t>> switchNbrs(copies);
  for (const auto &e : g.edges()) {
    uint32_t cu = g.deviceCopyOf(e.u), cv = g.deviceCopyOf(e.v);
    if (cu != cv && st.copyTier[cu] >= 0 && st.copyTier[cv] >= 0) {
      switchNbrs[cu].push_back(cv);
      switchNbrs[cv].push_back(cu);
    }
  }
  std::vector<uint32_t> planeOf(copies, ~0u);
  uint32_t R = 0;
  for (uint32_t c = 0; c < copies; ++c) {
    if (st.copyTier[c] < 0 || planeOf[c] != ~0u)
      continue;
    std::vector<uint32_t> stack{c};
    planeOf[c] = R;
    while (!stack.empty()) {
      uint32_t x = stack.back();
      stack.pop_back();
      for (uint32_t y : switchNbrs[x])
        if (planeOf[y] == ~0u) {
          planeOf[y] = R;
          stack.push_back(y);
        }
    }
    ++R;
  }
  // Switches of each tier of each plane in copy order.
  std::vector<uint32_t> indexOf(copies, ~0u);
  std::vector<std::array<uint32_t, 3>> have(R, {0, 0, 0});
  for (uint32_t c = 0; c < copies; ++c)
    if (st.copyTier[c] >= 0 && st.copyTier[c] < 3)
      indexOf[c] = have[planeOf[c]][st.copyTier[c]]++;
  for (uint32_t r = 1; r < R; ++r)
    if (have[r] != have[0])
      return fail(fmt::format("its {} planes of switches differ in size ({} and {} switches per "
                              "tier)",
                              R, fmt::join(have[0].begin(), have[0].begin() + levels, "/"),
                              fmt::join(have[r].begin(), have[r].begin() + levels, "/")));
  const uint32_t L = have[0][0];
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> links(R);
  std::set<double> bps;
  std::set<int64_t> ps;
  for (const auto &e : g.edges()) {
    uint32_t cu = g.deviceCopyOf(e.u), cv = g.deviceCopyOf(e.v);
    int32_t tu = st.copyTier[cu], tv = st.copyTier[cv];
    if (tu < 0 || tv < 0 || tu == tv)
      continue;
    uint64_t a = (uint64_t(tu) << 32) | indexOf[cu], b = (uint64_t(tv) << 32) | indexOf[cv];
    links[planeOf[cu]].push_back({std::min(a, b), std::max(a, b)});
    const auto &link = g.link(e.link);
    if (!link.bandwidth)
      return fail(fmt::format("link '{}' has no bandwidth", link.name));
    bps.insert(link.bandwidth->bitsPerSecond);
    ps.insert(link.latency ? int64_t(std::llround(link.latency->ns * 1000)) : 0);
  }
  for (auto &pl : links)
    std::sort(pl.begin(), pl.end());
  for (uint32_t r = 1; r < R; ++r)
    if (links[r] != links[0])
      return fail(fmt::format("its {} planes of switches are not wired alike (plane {} differs "
                              "from plane 0)",
                              R, r));
  if (bps.size() != 1 || ps.size() != 1)
    return fail("its switch-to-switch links differ in bandwidth or latency");
  // Terminals: endpoints (one plane) or NICs (several) on each leaf, the same number on
  // every leaf.
  std::vector<uint32_t> leafOf(copies, ~0u);
  for (uint32_t c = 0; c < copies; ++c)
    if (st.copyTier[c] == 0 && planeOf[c] == 0)
      leafOf[c] = indexOf[c];
  CodesNetwork n;
  uint32_t h = 0;
  std::optional<double> terminalBps;
  if (R == 1) {
    auto terms = terminalsOn(g, leafOf, L, "leaves",
                             " (CODES's multi-rail trees, num_rails, are separate planes of "
                             "switches, which rails sharing spines are not)",
                             why);
    if (!terms)
      return std::nullopt;
    h = uint32_t(terms->of[0].size());
    for (uint32_t l = 0; l < L; ++l)
      if (terms->of[l].size() != h || h == 0)
        return fail("its leaves have different numbers of endpoints");
    n.serverOfEndpoint.assign(g.endpoints().size(), 0);
    for (uint32_t l = 0; l < L; ++l)
      for (uint32_t j = 0; j < h; ++j)
        n.serverOfEndpoint[terms->of[l][j]] = l * h + j;
    n.serversPerRouter = h;
    terminalBps = terms->bps;
  } else {
    auto terms = planeTerminals(g, st, planeOf, indexOf, R, L, why);
    if (!terms)
      return std::nullopt;
    h = terms->perLeaf;
    n.serverOfEndpoint = std::move(terms->serverOfEndpoint);
    n.serversPerRouter = terms->perNic * h * R;
    n.nicsPerRouter = h * R;
    terminalBps = terms->bps;
  }
  // Radix and tapering from a leaf: h terminals, up links; CODES: t*k/(t+1) and k/(t+1).
  uint32_t up = 0;
  for (auto &[a, b] : links[0])
    up += a == 0;   // leaf 0's links up (level 0, index 0 sorts first)
  std::string shape = fmt::format("{}{} tiers: {} switches, leaves of {} {} and {} link(s) up",
                                  R > 1 ? fmt::format("{} planes of ", R) : "", levels,
                                  fmt::join(have[0].begin(), have[0].begin() + levels, "/"), h,
                                  R > 1 ? "NICs" : "endpoints", up);
  if (up == 0 || h % up != 0)
    return fail(shape + ": CODES's leaves have t*k/(t+1) terminals and k/(t+1) links up, t whole");
  const uint32_t t = h / up, k = h + up;
  std::array<uint32_t, 3> count{};
  auto expected = codesFatTreeLinks(levels, k, t, L, count);
  bool same = !expected.empty() && expected == links[0];
  for (uint32_t l = 0; l < levels && same; ++l)
    same = count[l] == have[0][l];
  if (!same)
    return fail(fmt::format("{}: not wired as CODES's {}-level fat tree of radix {}, tapering "
                            "{} and {} leaves (fattree.c: two levels join every leaf to each of "
                            "L/(t+1) spines by two links; three join pods of k/2 leaves to "
                            "k/(t+1) switches each, and those to the cores; e.g. "
                            "leaf_spine:leaves=4,spines=2,hosts_per_leaf=4,bundle=2 or "
                            "clos:radix=4,levels=3)",
                            shape, levels, k, t, L));
  n.model = "fattree";
  n.levels = levels;
  n.rails = R;
  n.routers = L;
  n.switchRadix = k;
  n.tapering = t;
  n.linkBytesPerSecond = *bps.begin() / 8;
  n.cnBytesPerSecond = terminalBps ? *terminalBps / 8 : n.linkBytesPerSecond;
  n.routerDelayNs = double(*ps.begin() + routerSwitchPs(g, leafOf, switchPs)) / 1000;
  n.shape = shape;
  return n;
}

} // namespace

llvm::Expected<CodesNetwork> codesNetwork(const FabricGraph &g,
                                          const std::vector<int64_t> &switchPs,
                                          DiagEngine &diags, llvm::StringRef where) {
  std::string whyTorus, whyDragonfly, whyFatTree;
  if (auto t = torusNetwork(g, switchPs, whyTorus))
    return std::move(*t);
  if (auto d = dragonflyNetwork(g, switchPs, whyDragonfly))
    return std::move(*d);
  if (auto f = fatTreeNetwork(g, switchPs, whyFatTree))
    return std::move(*f);
  diags.error(where, fmt::format("CODES cannot express this fabric: not a torus ({}), not a "
                                 "dragonfly ({}), not a fat tree ({})",
                                 whyTorus, whyDragonfly, whyFatTree));
  return reportedError();
}

namespace {

// The .conf's PARAMS lines, `   key="value";`, with an optional comment above.
class Params {
public:
  void key(llvm::StringRef k, const std::string &v, llvm::StringRef comment = {}) {
    if (!comment.empty())
      text += "   # " + comment.str() + "\n";
    text += fmt::format("   {}=\"{}\";\n", k.str(), v);
  }
  void key(llvm::StringRef k, double v, llvm::StringRef comment = {}) {
    key(k, fmt::format("{}", v), comment);
  }
  std::string text;
};

std::string withCommas(llvm::ArrayRef<uint32_t> v) {
  std::string s;
  for (uint32_t x : v)
    s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

} // namespace

std::string codesConf(const CodesNetwork &n, llvm::StringRef source) {
  // What the model is, for the header; the LP groups; the model's own PARAMS.
  std::string about;
  std::vector<std::pair<std::string, std::string>> lps;
  std::vector<std::string> order;
  Params model;
  std::string messageSize = "592", messageSizeComment;
  std::string delayComment = "link latency + switch latency";
  const std::string units = "Bandwidths in GiB/s (CODES divides bytes by 1024^3), delays in ns.";
  if (n.model == "torus") {
    about = fmt::format("{} routers in a {}-dimensional torus ({}), one terminal each; server i "
                        "is fabric\n# endpoint i of servers.txt. {}",
                        n.routers, n.dims.size(), withCommas(n.dims), units);
    lps = {{"modelnet_torus", "1"}};
    order = {"torus"};
    messageSizeComment = "ROSS event size: at least 592 bytes for CODES master's model-net "
                         "events with TraceR";
    model.key("n_dims", std::to_string(n.dims.size()));
    model.key("dim_length", withCommas(n.dims));
    model.key("routing", "adaptive");
    model.key("link_bandwidth", n.linkBytesPerSecond / GiB);
    // Measured with CODES a5958cf (docs/scale-out.md): its torus.c reads only n_dims,
    // dim_length, link_bandwidth, buffer_size and chunk_size; it sets router_delay to 50 ns
    // and charges every packet 10 ns per byte at the terminal (cn_delay), whatever the
    // .conf says. Both are written for the models and versions that read them.
    model.key("cn_bandwidth", n.cnBytesPerSecond / GiB,
              "terminal link; CODES a5958cf's torus ignores it (10 ns/byte, fixed)");
    model.key("buffer_size", "65536");
    delayComment = "link latency + switch latency; CODES a5958cf's torus uses 50 ns, fixed";
  } else if (n.model == "fattree") {
    const bool rails = n.rails > 1;
    about = fmt::format("Fat tree (ft_type {}), {}; switch radix {}, tapering {}.\n# {}Server i is "
                        "endpoint i of servers.txt. Bandwidths in GiB/s (CODES divides bytes "
                        "by\n# 1024^3), delays in ns.",
                        rails ? 2 : 0, n.shape, n.switchRadix, n.tapering,
                        rails ? fmt::format("One rail per plane: NIC LP j*{0}+r of a leaf's "
                                            "repetition is its terminal j on rail r, and\n# "
                                            "server o sends through NIC LP o % {1} (model-net's "
                                            "modulo mapping).\n# ",
                                            n.rails, n.nicsPerRouter)
                              : std::string());
    lps = {{"modelnet_fattree",
            std::to_string(rails ? n.nicsPerRouter : n.serversPerRouter)},
           {"fattree_switch", std::to_string(n.levels * n.rails)}};
    order = {"fattree"};
    model.key("ft_type", rails ? "2" : "0");
    model.key("num_levels", std::to_string(n.levels));
    model.key("tapering", std::to_string(n.tapering));
    model.key("num_rails", std::to_string(n.rails));
    model.key("switch_count", std::to_string(n.routers));
    model.key("switch_radix", std::to_string(n.switchRadix));
    model.key("rail_select", "dedicated");
    model.key("routing", "adaptive");
    model.key("vc_size", "65536");
    model.key("cn_vc_size", "65536");
    model.key("link_bandwidth", n.linkBytesPerSecond / GiB);
    model.key("cn_bandwidth", n.cnBytesPerSecond / GiB);
  } else {
    const bool custom = n.model == "dragonfly_custom";
    const std::string prefix = custom ? "dragonfly_custom" : "dragonfly";
    about = custom
                ? fmt::format("Dragonfly: {} groups of {} routers (full mesh inside a group), {} "
                              "terminals per router,\n# up to {} global links per router, wired "
                              "as intra.bin and inter.bin say; server i is\n# endpoint i of "
                              "servers.txt. {}",
                              n.groups, n.routersPerGroup, n.serversPerRouter, n.globalChannels,
                              units)
                : fmt::format("CODES's 1-D dragonfly, whose shape and global wiring this fabric "
                              "has: {} groups of {}\n# routers, {} terminals and {} global links "
                              "per router; server i is endpoint i of\n# servers.txt. {}",
                              n.groups, n.routersPerGroup, n.serversPerRouter, n.globalChannels,
                              units);
    lps = {{"modelnet_" + prefix, std::to_string(n.serversPerRouter)},
           {"modelnet_" + prefix + "_router", "1"}};
    order = {prefix, prefix + "_router"};
    if (custom) {
      messageSize = "736";
      model.key("num_router_rows", "1");
      model.key("num_router_cols", std::to_string(n.routersPerGroup));
      model.key("num_row_chans", "1");
      model.key("num_col_chans", "1");
      model.key("num_groups", std::to_string(n.groups));
      model.key("num_cns_per_router", std::to_string(n.serversPerRouter));
      model.key("num_global_channels", std::to_string(n.globalChannels));
      model.key("intra-group-connections", "intra.bin");
      model.key("inter-group-connections", "inter.bin");
    } else {
      model.key("num_routers", std::to_string(n.routersPerGroup));
    }
    model.key("routing", "minimal");
    model.key("local_vc_size", "65536");
    model.key("global_vc_size", "65536");
    model.key("cn_vc_size", "65536");
    model.key("local_bandwidth", n.linkBytesPerSecond / GiB);
    model.key("global_bandwidth", n.globalBytesPerSecond / GiB);
    model.key("cn_bandwidth", n.cnBytesPerSecond / GiB);
  }

  std::string c = fmt::format("# CODES model-net network for TraceR, written by infracc from "
                              "'{}'.\n# {}\n",
                              source.str(), about);
  for (const std::string &note : n.notes)
    c += "# " + note + "\n";
  for (const std::string &a : n.approximations)
    c += "# approximated: " + a + "\n";
  c += fmt::format("LPGROUPS\n{{\n   MODELNET_GRP\n   {{\n      repetitions=\"{}\";\n"
                   "      server=\"{}\";\n",
                   n.routers, n.serversPerRouter);
  for (const auto &[k, v] : lps)
    c += fmt::format("      {}=\"{}\";\n", k, v);
  c += "   }\n}\n";
  Params head, tail;
  head.key("message_size", messageSize, messageSizeComment);
  head.key("packet_size", "4096");
  head.key("chunk_size", "4096");
  head.key("modelnet_scheduler", "fcfs");
  std::string orderText;
  for (const std::string &o : order)
    orderText += (orderText.empty() ? "\"" : ", \"") + o + "\"";
  tail.key("router_delay", n.routerDelayNs, delayComment);
  tail.key("soft_delay", "0",
           "TraceR: ns per MPI call, NIC and RDMA setup in ns, ns per byte copied, bytes");
  for (const char *k : {"nic_delay", "rdma_delay", "copy_per_byte"})
    tail.key(k, "0");
  tail.key("eager_limit", "65536");
  tail.key("node_eager_limit", "65536");
  c += "PARAMS\n{\n" + head.text + "   modelnet_order=( " + orderText + " );\n" + model.text +
       tail.text + "}\n";
  return c;
}

} // namespace infracc::tracer
