#include "backends/astra/Ns3Topology.h"

#include "backends/astra/AstraUnits.h"
#include "ir/AttachPoints.h"
#include "support/Diagnostics.h"

#include <llvm/ADT/DenseMap.h>

#include <fmt/format.h>

#include <map>
#include <set>
#include <cmath>
#include <algorithm>

namespace infracc::astra {

llvm::Expected<Ns3Topology> ns3Topology(const FabricGraph &g, DiagEngine &diags,
                                        llvm::StringRef where) {
  const auto eps = g.endpoints();
  // Contracted node of every fabric node: NPUs first, then one per switch device copy
  // or other node, in node order.
  constexpr uint32_t None = ~0u;
  std::vector<uint32_t> of(g.numNodes(), None);
  std::vector<std::string> names;
  for (uint32_t i = 0; i < eps.size(); ++i) {
    of[eps[i]] = i;
    names.push_back(g.name(eps[i]));
  }
  llvm::DenseMap<uint32_t, uint32_t> switchCopy;   // device copy -> contracted node
  for (NodeId n = 0; n < g.numNodes(); ++n) {
    if (of[n] != None)
      continue;
    const auto &inst = g.instances()[g.instanceOf(n)];
    if (inst.role == InstanceRole::Switch) {
      auto [it, fresh] = switchCopy.try_emplace(g.deviceCopyOf(n), uint32_t(names.size()));
      if (fresh)
        names.push_back(inst.name + "." + std::to_string(g.copyOf(n)));
      of[n] = it->second;
    } else {
      of[n] = uint32_t(names.size());
      names.push_back(g.name(n));
    }
  }
  // Links between contracted nodes, parallel edges merged.
  struct Acc {
    double bps = 0;
    int64_t ps = 0;
    bool latencyKnown = false;
    uint32_t edges = 0;
  };
  std::map<std::pair<uint32_t, uint32_t>, Acc> acc;
  std::set<std::string> noLatency;
  // An xpu wired straight to several attach points (NICs) uses the one of its affinity
  // (ir/AttachPoints.h, as -emit=htsim and remap-gpus do): the links to the others are
  // left out, so ns-3's shortest-path routing cannot spread its traffic over them.
  AttachPoints ap(g);
  auto otherNic = [&](NodeId x, NodeId nic) {
    if (g.kind(x) != ComponentKind::Xpu || ap.indexInCopy(nic) < 0 ||
        g.deviceCopyOf(x) != g.deviceCopyOf(nic))
      return false;
    NodeId mine = ap.nearest(x);
    if (mine == InvalidNode || mine == nic)
      return false;
    auto nb = g.neighbours(x);
    return std::any_of(nb.begin(), nb.end(), [&](auto a) { return a.node == mine; });
  };
  for (const auto &e : g.edges()) {
    uint32_t a = of[e.u], b = of[e.v];
    if (a == b)
      continue;
    if (otherNic(e.u, e.v) || otherNic(e.v, e.u))
      continue;
    const auto &link = g.link(e.link);
    if (!link.bandwidth) {
      diags.error(where, fmt::format("link '{}' ({} to {}) has no bandwidth: ns-3 needs a rate "
                                     "for every link",
                                     link.name, g.name(e.u), g.name(e.v)));
      return reportedError();
    }
    Acc &x = acc[{std::min(a, b), std::max(a, b)}];
    x.bps += link.bandwidth->bitsPerSecond;
    if (link.latency) {
      x.ps = std::max(x.ps, int64_t(std::llround(link.latency->ns * 1000)));
      x.latencyKnown = true;
    } else {
      noLatency.insert(link.name);
    }
    ++x.edges;
  }
  // Drop what leads nowhere: non-NPU nodes with at most one neighbour, repeatedly, and
  // what no NPU reaches.
  const uint32_t N = uint32_t(eps.size()), M = uint32_t(names.size());
  std::vector<std::set<uint32_t>> nb(M);
  for (auto &[k, v] : acc) {
    nb[k.first].insert(k.second);
    nb[k.second].insert(k.first);
  }
  std::vector<uint8_t> gone(M, 0);
  std::vector<uint32_t> work;
  for (uint32_t i = N; i < M; ++i)
    if (nb[i].size() <= 1)
      work.push_back(i);
  while (!work.empty()) {
    uint32_t i = work.back();
    work.pop_back();
    if (gone[i])
      continue;
    gone[i] = 1;
    for (uint32_t j : nb[i]) {
      nb[j].erase(i);
      if (j >= N && !gone[j] && nb[j].size() <= 1)
        work.push_back(j);
    }
    nb[i].clear();
  }
  std::vector<uint8_t> seen(M, 0);
  std::vector<uint32_t> queue;
  for (uint32_t i = 0; i < N; ++i) {
    seen[i] = 1;
    queue.push_back(i);
  }
  for (size_t q = 0; q < queue.size(); ++q)
    for (uint32_t j : nb[queue[q]])
      if (!seen[j] && !gone[j]) {
        seen[j] = 1;
        queue.push_back(j);
      }
  Ns3Topology t;
  t.npus = N;
  std::vector<uint32_t> id(M, None);
  for (uint32_t i = 0; i < M; ++i)
    if (i < N || (!gone[i] && seen[i])) {
      id[i] = uint32_t(t.names.size());
      t.names.push_back(names[i]);
    }
  t.nodes = uint32_t(t.names.size());
  for (auto &[k, x] : acc) {
    if (id[k.first] == None || id[k.second] == None)
      continue;
    t.links.push_back({id[k.first], id[k.second], x.bps, x.ps, x.latencyKnown, x.edges});
    if (k.first < N && k.second < N)
      ++t.npuToNpuLinks;
  }
  std::sort(t.links.begin(), t.links.end(),
            [](const Ns3Link &l, const Ns3Link &r) { return std::pair(l.a, l.b) < std::pair(r.a, r.b); });
  t.linksWithoutLatency.assign(noLatency.begin(), noLatency.end());
  return t;
}

std::string ns3TopologyFile(const Ns3Topology &t) {
  std::string s = fmt::format("{} {} {}\n", t.nodes, t.nodes - t.npus, t.links.size());
  for (uint32_t i = t.npus; i < t.nodes; ++i)
    s += fmt::format("{}{}", i == t.npus ? "" : " ", i);
  s += "\n";
  for (const Ns3Link &l : t.links)
    s += fmt::format("{} {} {} {} 0\n", l.a, l.b, ns3DataRate(l.bitsPerSecond),
                     ns3Time(l.latencyPs));
  return s;
}

} // namespace infracc::astra
