#include "visualize/UnitGraph.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace infracc::viz {

void UnitGraph::normaliseEdges() {
  std::sort(edges.begin(), edges.end(), [](const Edge &x, const Edge &y) {
    return std::tie(x.a, x.b, x.link) < std::tie(y.a, y.b, y.link);
  });
  std::vector<Edge> merged;
  merged.reserve(edges.size());
  for (const Edge &e : edges) {
    if (!merged.empty() && merged.back().a == e.a && merged.back().b == e.b &&
        merged.back().link == e.link)
      merged.back().count += e.count;
    else
      merged.push_back(e);
  }
  edges.swap(merged);
}

namespace {

struct Neighbour {
  uint32_t unit;
  LinkId link;
  uint64_t count;
};

// Per unit, its neighbours (each unit-level edge seen from both ends).
std::vector<std::vector<Neighbour>> neighbours(const UnitGraph &g) {
  std::vector<std::vector<Neighbour>> adj(g.numUnits());
  for (const auto &e : g.edges) {
    adj[e.a].push_back({e.b, e.link, e.count});
    adj[e.b].push_back({e.a, e.link, e.count});
  }
  return adj;
}

// Groups from a colour per unit, numbered by first appearance.
Grouping fromColours(const std::vector<uint64_t> &colour) {
  Grouping gr;
  gr.groupOf.resize(colour.size());
  std::map<uint64_t, uint32_t> ids;
  for (uint32_t u = 0; u < colour.size(); ++u) {
    auto [it, fresh] = ids.try_emplace(colour[u], gr.numGroups());
    if (fresh)
      gr.members.emplace_back();
    gr.groupOf[u] = it->second;
    gr.members[it->second].push_back(u);
  }
  return gr;
}

} // namespace

Grouping groupNone(const UnitGraph &g) {
  std::vector<uint64_t> colour(g.numUnits());
  for (uint32_t u = 0; u < g.numUnits(); ++u)
    colour[u] = u;
  return fromColours(colour);
}

Grouping groupByNeighbours(const UnitGraph &g, const std::vector<bool> &mergeable) {
  auto adj = neighbours(g);
  std::map<std::vector<uint64_t>, uint64_t> signatures;
  std::vector<uint64_t> colour(g.numUnits());
  uint64_t next = 0;
  for (uint32_t u = 0; u < g.numUnits(); ++u) {
    if (!mergeable[u]) {
      colour[u] = next++;
      continue;
    }
    std::vector<uint64_t> sig = {g.kind[u], g.tier[u]};
    auto &nb = adj[u];
    std::sort(nb.begin(), nb.end(), [](const Neighbour &x, const Neighbour &y) {
      return std::tie(x.unit, x.link, x.count) < std::tie(y.unit, y.link, y.count);
    });
    for (const Neighbour &n : nb) {
      sig.push_back(n.unit);
      sig.push_back(n.link);
      sig.push_back(n.count);
    }
    auto [it, fresh] = signatures.try_emplace(std::move(sig), next);
    if (fresh)
      ++next;
    colour[u] = it->second;
  }
  return fromColours(colour);
}

Grouping groupByClasses(const UnitGraph &g, uint32_t maxGroups) {
  auto adj = neighbours(g);
  uint32_t n = g.numUnits();
  std::vector<uint64_t> initial(n);
  {
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> ids;
    for (uint32_t u = 0; u < n; ++u)
      initial[u] = ids.try_emplace({g.kind[u], g.tier[u]}, ids.size()).first->second;
  }
  std::vector<uint64_t> colour = initial;
  size_t numColours = 0;
  for (uint32_t u = 0; u < n; ++u)
    numColours = std::max<size_t>(numColours, colour[u] + 1);
  // Each round splits classes whose members see different neighbour colours; the
  // number of classes only grows, so at most n rounds (a handful in practice).
  for (uint32_t round = 0; round < n; ++round) {
    std::map<std::vector<uint64_t>, uint64_t> ids;
    std::vector<uint64_t> next(n);
    for (uint32_t u = 0; u < n; ++u) {
      std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> seen;
      seen.reserve(adj[u].size());
      for (const Neighbour &nb : adj[u])
        seen.emplace_back(colour[nb.unit], nb.link, nb.count);
      std::sort(seen.begin(), seen.end());
      std::vector<uint64_t> sig = {colour[u]};
      for (auto &[c, l, k] : seen) {
        sig.push_back(c);
        sig.push_back(l);
        sig.push_back(k);
      }
      next[u] = ids.try_emplace(std::move(sig), ids.size()).first->second;
    }
    colour.swap(next);
    if (ids.size() == numColours)
      break;
    numColours = ids.size();
    if (numColours > maxGroups)
      return fromColours(initial);
  }
  return fromColours(colour);
}

std::vector<GroupEdge> groupEdges(const UnitGraph &g, const Grouping &gr) {
  struct Acc {
    uint64_t total = 0;
    std::map<uint32_t, uint64_t> perA, perB;
  };
  std::map<std::tuple<uint32_t, uint32_t, LinkId>, Acc> acc;
  for (const auto &e : g.edges) {
    uint32_t a = e.a, b = e.b;
    uint32_t ga = gr.groupOf[a], gb = gr.groupOf[b];
    if (ga > gb) {
      std::swap(a, b);
      std::swap(ga, gb);
    }
    Acc &x = acc[{ga, gb, e.link}];
    x.total += e.count;
    x.perA[a] += e.count;
    if (ga == gb)
      x.perA[b] += e.count;
    else
      x.perB[b] += e.count;
  }
  auto range = [](const std::map<uint32_t, uint64_t> &per, size_t members, uint64_t &lo,
                  uint64_t &hi) {
    lo = per.size() < members ? 0 : ~uint64_t(0);
    hi = 0;
    for (auto &[u, c] : per) {
      lo = std::min(lo, c);
      hi = std::max(hi, c);
    }
  };
  std::vector<GroupEdge> out;
  out.reserve(acc.size());
  for (auto &[key, x] : acc) {
    auto [ga, gb, link] = key;
    GroupEdge ge{ga, gb, link, x.total, 0, 0, 0, 0};
    range(x.perA, gr.members[ga].size(), ge.minA, ge.maxA);
    if (ga == gb) {
      ge.minB = ge.minA;
      ge.maxB = ge.maxA;
    } else {
      range(x.perB, gr.members[gb].size(), ge.minB, ge.maxB);
    }
    out.push_back(ge);
  }
  return out;
}

} // namespace infracc::viz
