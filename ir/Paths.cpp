#include "ir/Paths.h"

#include <llvm/Support/Parallel.h>
#include <llvm/Support/Threading.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

namespace infracc {

namespace {
constexpr int64_t Unreached = std::numeric_limits<int64_t>::max();
constexpr double NoLimit = std::numeric_limits<double>::infinity();
constexpr uint32_t AnyCopy = ~0u;

uint64_t pairKey(NodeId a, NodeId b) { return (uint64_t(a) << 32) | b; }
} // namespace

struct PathFinder::Scratch {
  std::vector<int64_t> dist;
  std::vector<double> bw;
  std::vector<uint32_t> links, switches;
  std::vector<LinkId> unpriced;
  std::vector<EdgeId> via;      // the edge a node was last reached through
  std::vector<uint8_t> flags;   // 1 settled, 2 latency known, 4 target
  std::vector<NodeId> touched;
  std::vector<uint8_t> targetCopy;     // per device copy: holds a target
  std::vector<uint32_t> targetCopies;

  Scratch(uint32_t n, uint32_t copies)
      : dist(n, Unreached), bw(n, 0), links(n, 0), switches(n, 0), unpriced(n, InvalidLink),
        via(n, 0), flags(n, 0), targetCopy(copies, 0) {}
  void reset() {
    for (NodeId v : touched) {
      dist[v] = Unreached;
      flags[v] = 0;
    }
    touched.clear();
    for (uint32_t c : targetCopies)
      targetCopy[c] = 0;
    targetCopies.clear();
  }
};

PathFinder::PathFinder(const FabricGraph &g, std::vector<int64_t> switchLatencyPs)
    : g_(g), switchPs_(std::move(switchLatencyPs)) {
  if (switchPs_.empty())
    switchPs_.assign(g.numNodes(), 0);
  copyOf_.resize(g.numNodes());
  for (NodeId n = 0; n < g.numNodes(); ++n)
    copyOf_[n] = g.deviceCopyOf(n);
  copyIsHost_.assign(g.numDeviceCopies(), 0);
  copyIsSwitch_.assign(g.numDeviceCopies(), 0);
  for (const auto &inst : g.instances())
    for (uint64_t c = 0; c < inst.count && inst.nodesPerCopy; ++c) {
      uint32_t copy = g.deviceCopyOf(static_cast<NodeId>(inst.firstNode + c * inst.nodesPerCopy));
      copyIsHost_[copy] = inst.role == InstanceRole::Host;
      copyIsSwitch_[copy] = inst.role == InstanceRole::Switch;
    }
  // Only switch-kind nodes outside switch copies are charged one by one; keep the
  // per-node latency for those and for the nodes of switch copies (charged on entry).
  for (NodeId n = 0; n < g.numNodes(); ++n)
    if (!copyIsSwitch_[copyOf_[n]] && g.kind(n) != ComponentKind::Switch)
      switchPs_[n] = -1;   // never a switch
  linkPs_.resize(g.numLinks());
  linkBps_.resize(g.numLinks());
  for (LinkId l = 0; l < g.numLinks(); ++l) {
    const auto &info = g.link(l);
    linkPs_[l] = info.latency ? static_cast<int64_t>(std::llround(info.latency->ns * 1000.0)) : -1;
    linkBps_[l] = info.bandwidth ? info.bandwidth->bitsPerSecond : 0;
  }
}

bool PathFinder::chargesSwitch(NodeId from, NodeId n) const {
  if (switchPs_[n] < 0)
    return false;
  if (copyIsSwitch_[copyOf_[n]])
    return copyOf_[from] != copyOf_[n];
  return true;
}

void PathFinder::search(Scratch &s, NodeId src, llvm::ArrayRef<NodeId> targets,
                        bool restrictHosts, uint32_t onlyCopy, PathInfo *out) const {
  s.reset();
  size_t remaining = 0;
  for (NodeId t : targets) {
    if (!(s.flags[t] & 4)) {
      s.flags[t] |= 4;
      s.touched.push_back(t);
      ++remaining;
    }
    if (!s.targetCopy[copyOf_[t]]) {
      s.targetCopy[copyOf_[t]] = 1;
      s.targetCopies.push_back(copyOf_[t]);
    }
  }
  struct Item {
    int64_t dist;
    double bw;
    NodeId node;
    bool operator<(const Item &o) const {   // max-heap order: "less" = worse
      if (dist != o.dist)
        return dist > o.dist;
      if (bw != o.bw)
        return bw < o.bw;
      return node > o.node;
    }
  };
  std::priority_queue<Item> heap;
  const uint32_t srcCopy = copyOf_[src];
  s.dist[src] = 0;
  s.bw[src] = NoLimit;
  s.links[src] = s.switches[src] = 0;
  s.unpriced[src] = InvalidLink;
  s.touched.push_back(src);
  heap.push({0, NoLimit, src});
  while (!heap.empty() && remaining) {
    Item it = heap.top();
    heap.pop();
    NodeId u = it.node;
    if ((s.flags[u] & 1) || it.dist != s.dist[u] || it.bw != s.bw[u])
      continue;
    s.flags[u] |= 1;
    if (s.flags[u] & 4)
      --remaining;
    const uint32_t cu = copyOf_[u];
    // Leaving a host other than the source's would make it a transit node.
    const bool mayLeave = !restrictHosts || cu == srcCopy || !copyIsHost_[cu];
    for (const auto &adj : g_.neighbours(u)) {
      NodeId v = adj.node;
      if (s.flags[v] & 1)
        continue;
      const uint32_t cv = copyOf_[v];
      if (onlyCopy != AnyCopy && cv != onlyCopy)
        continue;
      if (cv != cu && !mayLeave)
        continue;
      // Nor is entering another host without a target any use: nothing in it can be
      // reached from there (on a fabric of hosts, the search then stays on switches).
      if (restrictHosts && cv != cu && cv != srcCopy && copyIsHost_[cv] && !s.targetCopy[cv])
        continue;
      LinkId l = g_.edge(adj.edge).link;
      int64_t d = it.dist + std::max<int64_t>(linkPs_[l], 0);
      bool known = (s.flags[u] & 2) || linkPs_[l] >= 0;
      bool charged = chargesSwitch(u, v);
      if (charged) {
        d += switchPs_[v];
        known = true;
      }
      double b = std::min(it.bw, linkBps_[l] > 0 ? linkBps_[l] : NoLimit);
      if (s.dist[v] == Unreached)
        s.touched.push_back(v);
      else if (d > s.dist[v] || (d == s.dist[v] && b <= s.bw[v]))
        continue;
      s.dist[v] = d;
      s.bw[v] = b;
      s.links[v] = s.links[u] + 1;
      s.switches[v] = s.switches[u] + (charged ? 1 : 0);
      // A link without a bandwidth, unless it is inside one switch device copy.
      bool unpriced = linkBps_[l] <= 0 && !(cu == cv && copyIsSwitch_[cu]);
      s.unpriced[v] = s.unpriced[u] != InvalidLink ? s.unpriced[u] : unpriced ? l : InvalidLink;
      s.via[v] = adj.edge;
      s.flags[v] = static_cast<uint8_t>((s.flags[v] & 4) | (known ? 2 : 0));
      heap.push({d, b, v});
    }
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    NodeId t = targets[i];
    PathInfo &p = out[i];
    p = PathInfo();
    if (!(s.flags[t] & 1))
      continue;
    p.reachable = true;
    p.latencyPs = s.dist[t];
    if (s.bw[t] != NoLimit)
      p.bottleneckBps = s.bw[t];
    p.links = s.links[t];
    p.switches = s.switches[t];
    p.latencyKnown = (s.flags[t] & 2) != 0;
    p.unpricedLink = s.unpriced[t];
  }
}

void PathFinder::searchWithFallback(Scratch &s, NodeId src, llvm::ArrayRef<NodeId> targets,
                                    PathInfo *out) const {
  search(s, src, targets, /*restrictHosts=*/true, AnyCopy, out);
  std::vector<NodeId> missing;
  std::vector<size_t> where;
  for (size_t i = 0; i < targets.size(); ++i)
    if (!out[i].reachable) {
      missing.push_back(targets[i]);
      where.push_back(i);
    }
  if (missing.empty())
    return;
  std::vector<PathInfo> again(missing.size());
  search(s, src, missing, /*restrictHosts=*/false, AnyCopy, again.data());
  for (size_t k = 0; k < missing.size(); ++k)
    out[where[k]] = again[k];
}

PathFinder::~PathFinder() = default;

PathFinder::Scratch &PathFinder::scratch() const {
  if (!scratch_)
    scratch_ = std::make_unique<Scratch>(g_.numNodes(), g_.numDeviceCopies());
  return *scratch_;
}

PathInfo PathFinder::between(NodeId a, NodeId b) {
  auto it = cache_.find(pairKey(a, b));
  if (it != cache_.end())
    return it->second;
  PathInfo p;
  searchWithFallback(scratch(), a, {b}, &p);
  cache_[pairKey(a, b)] = p;
  return p;
}

void PathFinder::precompute(llvm::ArrayRef<NodeId> sources,
                            llvm::ArrayRef<std::vector<NodeId>> targets) {
  std::vector<std::vector<PathInfo>> results(sources.size());
  // One chunk of sources per thread, each with one scratch area (a few arrays the size
  // of the graph, so not one per source).
  size_t threads = std::max(1u, llvm::hardware_concurrency().compute_thread_count());
  size_t chunks = std::min<size_t>(sources.size(), threads);
  llvm::parallelFor(0, chunks, [&](size_t c) {
    Scratch s(g_.numNodes(), g_.numDeviceCopies());
    for (size_t i = c; i < sources.size(); i += chunks) {
      results[i].resize(targets[i].size());
      searchWithFallback(s, sources[i], targets[i], results[i].data());
    }
  });
  for (size_t i = 0; i < sources.size(); ++i)
    for (size_t k = 0; k < targets[i].size(); ++k)
      cache_[pairKey(sources[i], targets[i][k])] = results[i][k];
}

std::vector<std::vector<EdgeId>> PathFinder::routes(NodeId src, llvm::ArrayRef<NodeId> targets,
                                                     std::vector<PathInfo> *infoOut) const {
  std::vector<std::vector<EdgeId>> out(targets.size());
  std::vector<PathInfo> info(targets.size());
  Scratch &s = scratch();
  auto collect = [&](llvm::ArrayRef<size_t> which) {
    for (size_t i : which) {
      if (!info[i].reachable)
        continue;
      for (NodeId v = targets[i]; v != src;) {
        const EdgeId e = s.via[v];
        out[i].push_back(e);
        v = g_.edge(e).u == v ? g_.edge(e).v : g_.edge(e).u;
      }
      std::reverse(out[i].begin(), out[i].end());
    }
  };
  // As searchWithFallback: hosts are not transit nodes unless nothing else reaches.
  search(s, src, targets, /*restrictHosts=*/true, AnyCopy, info.data());
  std::vector<size_t> all(targets.size()), missing;
  std::vector<NodeId> missingNodes;
  for (size_t i = 0; i < targets.size(); ++i) {
    all[i] = i;
    if (!info[i].reachable) {
      missing.push_back(i);
      missingNodes.push_back(targets[i]);
    }
  }
  collect(all);
  if (!missing.empty()) {
    std::vector<PathInfo> again(missing.size());
    search(s, src, missingNodes, /*restrictHosts=*/false, AnyCopy, again.data());
    for (size_t k = 0; k < missing.size(); ++k)
      info[missing[k]] = again[k];
    collect(missing);
  }
  if (infoOut)
    *infoOut = std::move(info);
  return out;
}

PathInfo PathFinder::withinCopy(NodeId a, NodeId b) const {
  PathInfo p;
  if (copyOf_[a] != copyOf_[b])
    return p;
  search(scratch(), a, {b}, /*restrictHosts=*/false, copyOf_[a], &p);
  return p;
}

} // namespace infracc
