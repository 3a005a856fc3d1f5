#include "ir/FabricStructure.h"

#include <llvm/Support/Parallel.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <unordered_map>

namespace infracc {

namespace {

// Device copy of every node, computed instance by instance (no per-node search).
std::vector<uint32_t> copyOfNodes(const FabricGraph &g) {
  std::vector<uint32_t> copyOf(g.numNodes());
  uint32_t base = 0;
  for (const auto &inst : g.instances()) {
    for (uint64_t c = 0; c < inst.count; ++c) {
      NodeId first = static_cast<NodeId>(inst.firstNode + c * inst.nodesPerCopy);
      std::fill_n(copyOf.begin() + first, inst.nodesPerCopy, base + static_cast<uint32_t>(c));
    }
    base += static_cast<uint32_t>(inst.count);
  }
  return copyOf;
}

// Role of every copy, and the instance each copy belongs to.
struct CopyInfo {
  std::vector<InstanceRole> role;
  std::vector<uint32_t> instance;
};

CopyInfo copyInfo(const FabricGraph &g) {
  CopyInfo ci;
  ci.role.reserve(g.numDeviceCopies());
  ci.instance.reserve(g.numDeviceCopies());
  for (uint32_t i = 0; i < g.instances().size(); ++i) {
    const auto &inst = g.instances()[i];
    ci.role.insert(ci.role.end(), inst.count, inst.role);
    ci.instance.insert(ci.instance.end(), inst.count, i);
  }
  return ci;
}

// Leaf components of `kind` in one copy of device d, composition included.
uint64_t countKind(const FabricGraph &g, uint32_t d, ComponentKind kind,
                   std::vector<std::optional<uint64_t>> &memo) {
  if (memo[d])
    return *memo[d];
  uint64_t n = 0;
  const DeviceDef &def = g.definitions().devices[d];
  for (const auto &grp : g.layout(d).groups) {
    if (grp.childDevice >= 0)
      n += uint64_t(grp.count) *
           countKind(g, static_cast<uint32_t>(grp.childDevice), kind, memo);
    else if (def.components[grp.component].kind == kind)
      n += grp.count;
  }
  memo[d] = n;
  return n;
}

struct Pair {
  uint32_t a, b;   // a < b
  uint32_t links;
  double bps;
  bool known;
};

// Aggregated copy-to-copy pairs, sorted.
std::vector<Pair> copyPairs(const FabricGraph &g, const std::vector<uint32_t> &copyOf) {
  struct Raw {
    uint32_t a, b;
    LinkId link;
  };
  std::vector<Raw> raw;
  for (const auto &e : g.edges()) {
    uint32_t a = copyOf[e.u], b = copyOf[e.v];
    if (a == b)
      continue;
    raw.push_back({std::min(a, b), std::max(a, b), e.link});
  }
  std::sort(raw.begin(), raw.end(),
            [](const Raw &x, const Raw &y) { return x.a != y.a ? x.a < y.a : x.b < y.b; });
  std::vector<Pair> pairs;
  for (const Raw &r : raw) {
    const auto &bw = g.link(r.link).bandwidth;
    if (pairs.empty() || pairs.back().a != r.a || pairs.back().b != r.b)
      pairs.push_back({r.a, r.b, 0, 0, true});
    Pair &p = pairs.back();
    ++p.links;
    if (bw)
      p.bps += bw->bitsPerSecond;
    else
      p.known = false;
  }
  return pairs;
}

CopyGraph graphFromPairs(uint32_t copies, const std::vector<Pair> &pairs) {
  CopyGraph cg;
  cg.begin.assign(size_t(copies) + 1, 0);
  for (const Pair &p : pairs) {
    ++cg.begin[p.a + 1];
    ++cg.begin[p.b + 1];
  }
  std::partial_sum(cg.begin.begin(), cg.begin.end(), cg.begin.begin());
  cg.arcs.resize(cg.begin.back());
  std::vector<uint32_t> fill(cg.begin.begin(), cg.begin.end() - 1);
  for (const Pair &p : pairs) {
    cg.arcs[fill[p.a]++] = {p.b, p.links, p.bps, p.known};
    cg.arcs[fill[p.b]++] = {p.a, p.links, p.bps, p.known};
  }
  // Pairs are sorted by (a, b): arcs to larger ids come in order, those to smaller ids
  // (added as the b side) too, but interleaved; sort each list for twin detection.
  for (uint32_t v = 0; v < copies; ++v)
    std::sort(cg.arcs.begin() + cg.begin[v], cg.arcs.begin() + cg.begin[v + 1],
              [](const CopyGraph::Arc &x, const CopyGraph::Arc &y) { return x.to < y.to; });
  return cg;
}

// --- Bisection: Dinic's maximum flow on the copy graph ---------------------------------

class MaxFlow {
public:
  explicit MaxFlow(uint32_t nodes) : nodes_(nodes) {}
  // An undirected edge: capacity c both ways.
  void addUndirected(uint32_t a, uint32_t b, int64_t c) { add(a, b, c, c); }
  void addDirected(uint32_t a, uint32_t b, int64_t c) { add(a, b, c, 0); }

  int64_t run(uint32_t s, uint32_t t) {
    buildAdjacency();
    int64_t flow = 0;
    while (levels(s, t)) {
      it_.assign(begin_.begin(), begin_.end() - 1);
      while (int64_t f = augment(s, t))
        flow += f;
    }
    return flow;
  }
  /// After run(): nodes reachable from s in the residual graph (the source side of a
  /// minimum cut).
  std::vector<bool> sourceSide(uint32_t s) const {
    std::vector<bool> seen(nodes_, false);
    std::vector<uint32_t> queue{s};
    seen[s] = true;
    for (size_t i = 0; i < queue.size(); ++i) {
      uint32_t v = queue[i];
      for (uint32_t k = begin_[v]; k < begin_[v + 1]; ++k) {
        uint32_t a = adj_[k];
        if (cap_[a] > 0 && !seen[to_[a]]) {
          seen[to_[a]] = true;
          queue.push_back(to_[a]);
        }
      }
    }
    return seen;
  }

private:
  void add(uint32_t a, uint32_t b, int64_t c, int64_t back) {
    to_.push_back(b);
    cap_.push_back(c);
    to_.push_back(a);
    cap_.push_back(back);
  }
  void buildAdjacency() {
    begin_.assign(size_t(nodes_) + 1, 0);
    for (size_t a = 0; a < to_.size(); ++a)
      ++begin_[to_[a ^ 1] + 1];
    std::partial_sum(begin_.begin(), begin_.end(), begin_.begin());
    adj_.resize(to_.size());
    std::vector<uint32_t> fill(begin_.begin(), begin_.end() - 1);
    for (uint32_t a = 0; a < to_.size(); ++a)
      adj_[fill[to_[a ^ 1]]++] = a;
  }
  bool levels(uint32_t s, uint32_t t) {
    level_.assign(nodes_, -1);
    std::vector<uint32_t> queue{s};
    level_[s] = 0;
    for (size_t i = 0; i < queue.size(); ++i) {
      uint32_t v = queue[i];
      for (uint32_t k = begin_[v]; k < begin_[v + 1]; ++k) {
        uint32_t a = adj_[k];
        if (cap_[a] > 0 && level_[to_[a]] < 0) {
          level_[to_[a]] = level_[v] + 1;
          queue.push_back(to_[a]);
        }
      }
    }
    return level_[t] >= 0;
  }
  // One augmenting path in the level graph (iterative DFS with current-arc pointers).
  int64_t augment(uint32_t s, uint32_t t) {
    path_.clear();
    uint32_t v = s;
    for (;;) {
      if (v == t) {
        int64_t f = INT64_MAX;
        for (uint32_t a : path_)
          f = std::min(f, cap_[a]);
        for (uint32_t a : path_) {
          cap_[a] -= f;
          cap_[a ^ 1] += f;
        }
        return f;
      }
      bool advanced = false;
      for (; it_[v] < begin_[v + 1]; ++it_[v]) {
        uint32_t a = adj_[it_[v]];
        if (cap_[a] > 0 && level_[to_[a]] == level_[v] + 1) {
          path_.push_back(a);
          v = to_[a];
          advanced = true;
          break;
        }
      }
      if (advanced)
        continue;
      level_[v] = -1;   // dead end for this phase
      if (path_.empty())
        return 0;
      uint32_t a = path_.back();
      path_.pop_back();
      v = to_[a ^ 1];
      ++it_[v];
    }
  }

  uint32_t nodes_;
  std::vector<uint32_t> to_;
  std::vector<int64_t> cap_;
  std::vector<uint32_t> begin_, adj_, it_, path_;
  std::vector<int32_t> level_;
};

FabricStructure::Bisection bisection(const std::vector<Pair> &pairs, uint32_t copies,
                                     const std::vector<uint32_t> &hostCopies) {
  FabricStructure::Bisection b;
  size_t half = hostCopies.size() / 2;
  b.firstHalfHosts = half;
  b.secondHalfHosts = hostCopies.size() - half;
  bool known = std::all_of(pairs.begin(), pairs.end(), [](const Pair &p) { return p.known; });
  // Capacities in kbit/s (exact for every bandwidth given in whole kbit/s, and room for
  // millions of terabit links in 63 bits), or in links when some bandwidth is missing.
  MaxFlow mf(copies + 2);
  uint32_t s = copies, t = copies + 1;
  for (const Pair &p : pairs)
    mf.addUndirected(p.a, p.b, known ? std::llround(p.bps / 1e3) : p.links);
  const int64_t inf = INT64_MAX / 4;
  for (size_t i = 0; i < hostCopies.size(); ++i) {
    if (i < half)
      mf.addDirected(s, hostCopies[i], inf);
    else
      mf.addDirected(hostCopies[i], t, inf);
  }
  int64_t flow = mf.run(s, t);
  std::vector<bool> side = mf.sourceSide(s);
  for (const Pair &p : pairs)
    if (side[p.a] != side[p.b])
      b.links += p.links;
  if (known)
    b.bps = double(flow) * 1e3;
  return b;
}

// --- Diameter: bit-parallel BFS from one host per class of twins ------------------------
// Only called when every host reaches every other one.

struct DiameterResult {
  uint32_t hops = 0;
  bool lowerBound = false;   // searched from a sample of the hosts only
};

// Groups the sources into batches of at most `w` that lie close together: clusters are
// grown by rounds of matching neighbouring clusters (as graph coarsening does), which
// keeps them compact, then packed into batches in order.
std::vector<std::vector<uint32_t>> clusterSources(const CopyGraph &cg,
                                                  const std::vector<uint32_t> &nbr,
                                                  const std::vector<uint32_t> &sources, size_t w) {
  uint32_t n = cg.numCopies();
  std::vector<uint32_t> cluster(n), weight(n, 0);
  std::iota(cluster.begin(), cluster.end(), 0u);
  for (uint32_t s : sources)
    weight[s] = 1;
  auto find = [&](uint32_t v) {
    while (cluster[v] != v)
      v = cluster[v] = cluster[cluster[v]];
    return v;
  };
  // Heavy-edge matching: a cluster joins the neighbouring cluster it shares the most
  // links with (ties: the lighter one), which grows cubes rather than lines.
  std::vector<uint32_t> roundOf(n, 0), links(n, 0), touched;
  std::vector<std::vector<uint32_t>> nodesOf(n);
  for (uint32_t round = 1; round <= 12; ++round) {
    for (auto &m : nodesOf)
      m.clear();
    for (uint32_t v = 0; v < n; ++v)
      nodesOf[find(v)].push_back(v);
    bool merged = false;
    for (uint32_t c = 0; c < n; ++c) {
      if (nodesOf[c].empty() || roundOf[c] == round)
        continue;
      touched.clear();
      for (uint32_t v : nodesOf[c])
        for (uint32_t k = cg.begin[v]; k < cg.begin[v + 1]; ++k) {
          uint32_t d = find(nbr[k]);
          if (d == c || roundOf[d] == round || weight[c] + weight[d] > w)
            continue;
          if (links[d]++ == 0)
            touched.push_back(d);
        }
      uint32_t best = UINT32_MAX;
      for (uint32_t d : touched) {
        if (best == UINT32_MAX || links[d] > links[best] ||
            (links[d] == links[best] && weight[d] < weight[best]))
          best = d;
      }
      for (uint32_t d : touched)
        links[d] = 0;
      if (best == UINT32_MAX)
        continue;
      cluster[best] = c;
      weight[c] += weight[best];
      roundOf[c] = round;
      roundOf[best] = round;
      merged = true;
    }
    if (!merged)
      break;
  }
  std::vector<std::vector<uint32_t>> members(n);
  for (uint32_t s : sources)
    members[find(s)].push_back(s);
  std::vector<std::vector<uint32_t>> batches;
  std::vector<uint32_t> current;
  for (uint32_t c = 0; c < n; ++c) {
    if (members[c].empty())
      continue;
    if (current.size() + members[c].size() > w) {
      batches.push_back(std::move(current));
      current.clear();
    }
    current.insert(current.end(), members[c].begin(), members[c].end());
  }
  if (!current.empty())
    batches.push_back(std::move(current));
  return batches;
}

DiameterResult diameter(const CopyGraph &cg, const std::vector<uint32_t> &hostCopies,
                        double workLimit) {
  uint32_t n = cg.numCopies();
  std::vector<uint8_t> isHost(n, 0);
  for (uint32_t h : hostCopies)
    isHost[h] = 1;
  // Hosts with the same neighbours (twins) have the same distances to everything else,
  // and distance 2 to each other: one BFS per class is enough.
  std::vector<uint32_t> reps;
  {
    auto hash = [&](uint32_t v) {
      uint64_t h = 1469598103934665603ull;
      for (uint32_t k = cg.begin[v]; k < cg.begin[v + 1]; ++k)
        h = (h ^ cg.arcs[k].to) * 1099511628211ull;
      return h;
    };
    auto same = [&](uint32_t x, uint32_t y) {
      uint32_t dx = cg.begin[x + 1] - cg.begin[x], dy = cg.begin[y + 1] - cg.begin[y];
      if (dx != dy)
        return false;
      for (uint32_t k = 0; k < dx; ++k)
        if (cg.arcs[cg.begin[x] + k].to != cg.arcs[cg.begin[y] + k].to)
          return false;
      return true;
    };
    std::unordered_map<uint64_t, std::vector<uint32_t>> buckets;
    for (uint32_t h : hostCopies) {
      auto &bucket = buckets[hash(h)];
      bool twin = false;
      for (uint32_t r : bucket)
        if (same(r, h)) {
          twin = true;
          break;
        }
      if (!twin) {
        bucket.push_back(h);
        reps.push_back(h);
      }
    }
  }
  // Hosts hanging off a single non-host neighbour (their anchor: a switch) need not be
  // searched from or through: the distance between two such hosts is the distance
  // between their anchors plus 2. When every representative is such a host, the search
  // runs on the anchors instead, which halves it for fabrics of switches.
  std::vector<uint32_t> nbr(cg.arcs.size());
  for (size_t k = 0; k < cg.arcs.size(); ++k)
    nbr[k] = cg.arcs[k].to;
  auto degree = [&](uint32_t v) { return cg.begin[v + 1] - cg.begin[v]; };
  auto pendant = [&](uint32_t h) { return degree(h) == 1 && !isHost[nbr[cg.begin[h]]]; };
  bool reduce = std::all_of(reps.begin(), reps.end(), pendant);
  constexpr uint8_t NotTarget = 255;
  std::vector<uint8_t> skip(n, 0), offset(n, NotTarget);   // offset: hops on to a host
  std::vector<uint32_t> pendantCount(n, 0), sources;
  uint32_t sourceOffset = 0;
  for (uint32_t h : hostCopies) {
    if (reduce && pendant(h)) {
      uint32_t anchor = nbr[cg.begin[h]];
      skip[h] = 1;
      offset[anchor] = std::min<uint8_t>(offset[anchor], 1);
      ++pendantCount[anchor];
    } else {
      offset[h] = 0;
    }
  }
  if (reduce) {
    sourceOffset = 1;
    for (uint32_t r : reps)
      sources.push_back(nbr[cg.begin[r]]);
  } else {
    sources = reps;
  }

  // Batches of 256 sources searched at once, one bit each. Sources close to each other
  // reach a node at nearly the same level, so a node sits in few frontiers: batches are
  // grown from neighbouring sources.
  constexpr size_t Words = 4, W = 64 * Words;
  struct Bits {
    uint64_t w[Words] = {};
    bool any() const {
      uint64_t x = 0;
      for (size_t i = 0; i < Words; ++i)
        x |= w[i];
      return x != 0;
    }
  };
  DiameterResult r;
  std::vector<std::vector<uint32_t>> batches;
  uint64_t arcs = 0;
  for (uint32_t v = 0; v < n; ++v)
    if (!skip[v])
      arcs += degree(v);
  if (double(sources.size()) * double(arcs) > workLimit) {
    // Too large for the exact search: one batch of sources spread over the host order
    // gives a lower bound.
    std::vector<uint32_t> sample;
    for (size_t i = 0; i < W && i < sources.size(); ++i)
      sample.push_back(sources[i * sources.size() / std::min(W, sources.size())]);
    batches.push_back(std::move(sample));
    r.lowerBound = true;
  } else {
    batches = clusterSources(cg, nbr, sources, W);
  }
  std::vector<uint32_t> batchHops(batches.size(), 0);
  llvm::parallelFor(0, batches.size(), [&](size_t b) {
    const std::vector<uint32_t> &src = batches[b];
    std::vector<Bits> visited(n), word(n), nextWord(n);
    std::vector<uint32_t> frontier, next;
    uint32_t best = 0;
    for (size_t i = 0; i < src.size(); ++i) {
      visited[src[i]].w[i / 64] |= 1ull << (i % 64);
      word[src[i]].w[i / 64] |= 1ull << (i % 64);
      frontier.push_back(src[i]);
      // A source's own pendant hosts, other than the one it stands for, are 2 apart.
      if (reduce && pendantCount[src[i]] >= 2)
        best = std::max<uint32_t>(best, 1);
    }
    uint32_t level = 0;
    while (!frontier.empty()) {
      ++level;
      next.clear();
      uint32_t reached = 0;
      bool any = false;
      for (uint32_t v : frontier) {
        const Bits f = word[v];
        for (uint32_t k = cg.begin[v]; k < cg.begin[v + 1]; ++k) {
          uint32_t w = nbr[k];
          if (skip[w])
            continue;
          Bits fresh;
          uint64_t anyFresh = 0;
          for (size_t i = 0; i < Words; ++i) {
            fresh.w[i] = f.w[i] & ~visited[w].w[i];
            anyFresh |= fresh.w[i];
          }
          if (!anyFresh)
            continue;
          if (!nextWord[w].any())
            next.push_back(w);
          for (size_t i = 0; i < Words; ++i) {
            nextWord[w].w[i] |= fresh.w[i];
            visited[w].w[i] |= fresh.w[i];
          }
          if (offset[w] != NotTarget) {
            reached = std::max<uint32_t>(reached, level + offset[w]);
            any = true;
          }
        }
      }
      for (uint32_t v : frontier)
        word[v] = Bits();
      for (uint32_t w : next) {
        word[w] = nextWord[w];
        nextWord[w] = Bits();
      }
      frontier.swap(next);
      if (any)
        best = std::max(best, reached);
    }
    batchHops[b] = best + sourceOffset;
  });
  for (uint32_t h : batchHops)
    r.hops = std::max(r.hops, h);
  return r;
}

} // namespace

CopyGraph buildCopyGraph(const FabricGraph &g) {
  return graphFromPairs(g.numDeviceCopies(), copyPairs(g, copyOfNodes(g)));
}

FabricStructure analyzeFabricStructure(const FabricGraph &g, const StructureOptions &opts) {
  FabricStructure fs;
  std::vector<uint32_t> copyOf = copyOfNodes(g);
  CopyInfo ci = copyInfo(g);
  std::vector<Pair> pairs = copyPairs(g, copyOf);
  uint32_t copies = g.numDeviceCopies();
  CopyGraph cg = graphFromPairs(copies, pairs);

  // Counts.
  size_t numDevices = g.definitions().devices.size();
  std::vector<std::optional<uint64_t>> xpuMemo(numDevices), nicMemo(numDevices);
  std::vector<uint32_t> hostCopies;
  for (uint32_t i = 0; i < g.instances().size(); ++i) {
    const auto &inst = g.instances()[i];
    fs.xpus += inst.count * countKind(g, inst.device, ComponentKind::Xpu, xpuMemo);
    fs.nics += inst.count * countKind(g, inst.device, ComponentKind::Nic, nicMemo);
    if (inst.role == InstanceRole::Host && inst.count)
      fs.hostInstances.push_back(i);
  }
  for (uint32_t c = 0; c < copies; ++c) {
    if (ci.role[c] == InstanceRole::Host) {
      ++fs.hosts;
      hostCopies.push_back(c);
    } else if (ci.role[c] == InstanceRole::Switch) {
      ++fs.switches;
    } else {
      ++fs.otherCopies;
    }
  }

  std::vector<bool> attached(g.numNodes(), false);
  for (const auto &e : g.edges()) {
    if (copyOf[e.u] == copyOf[e.v])
      continue;
    for (uint32_t n : {e.u, e.v})
      if (ci.role[copyOf[n]] == InstanceRole::Host && !attached[n]) {
        attached[n] = true;
        ++fs.hostPorts;
      }
  }

  // Tiers: BFS from every host, through switches only.
  std::vector<int32_t> dist(copies, -1);
  std::vector<uint32_t> queue;
  for (uint32_t h : hostCopies) {
    dist[h] = 0;
    queue.push_back(h);
  }
  for (size_t i = 0; i < queue.size(); ++i) {
    uint32_t v = queue[i];
    for (uint32_t k = cg.begin[v]; k < cg.begin[v + 1]; ++k) {
      uint32_t w = cg.arcs[k].to;
      if (dist[w] < 0 && ci.role[w] == InstanceRole::Switch) {
        dist[w] = dist[v] + 1;
        queue.push_back(w);
      }
    }
  }
  fs.copyTier.assign(copies, NoTier);
  int32_t topTier = -1;
  for (uint32_t c = 0; c < copies; ++c) {
    if (ci.role[c] == InstanceRole::Host)
      fs.copyTier[c] = HostTier;
    else if (ci.role[c] == InstanceRole::Switch && dist[c] > 0)
      fs.copyTier[c] = dist[c] - 1;
    else if (ci.role[c] == InstanceRole::Switch)
      ++fs.unattachedSwitches;
    topTier = std::max(topTier, fs.copyTier[c]);
  }
  fs.tiers.resize(size_t(topTier + 1));
  for (uint32_t t = 0; t < fs.tiers.size(); ++t)
    fs.tiers[t].level = t;
  for (uint32_t c = 0; c < copies; ++c) {
    int32_t t = fs.copyTier[c];
    if (t < 0)
      continue;
    auto &tier = fs.tiers[t];
    ++tier.switches;
    if (tier.instances.empty() || tier.instances.back() != ci.instance[c])
      tier.instances.push_back(ci.instance[c]);
  }

  // Links per class and per tier, from the fabric edges between copies.
  std::map<std::pair<int32_t, int32_t>, FabricStructure::LinkClass> classes;
  std::map<std::pair<int32_t, int32_t>, std::vector<LinkId>> classLinks;
  for (const auto &e : g.edges()) {
    uint32_t a = copyOf[e.u], b = copyOf[e.v];
    if (a == b)
      continue;
    int32_t ta = fs.copyTier[a], tb = fs.copyTier[b];
    const auto &bw = g.link(e.link).bandwidth;
    double bps = bw ? bw->bitsPerSecond : 0;
    auto key = std::make_pair(std::min(ta, tb), std::max(ta, tb));
    auto &cls = classes[key];
    cls.lower = key.first;
    cls.upper = key.second;
    if (cls.links == 0)
      cls.uniformBps = bw ? std::optional<double>(bps) : std::nullopt;
    else if (!bw || !cls.uniformBps || *cls.uniformBps != bps)
      cls.uniformBps.reset();
    ++cls.links;
    cls.bps += bps;
    cls.bandwidthKnown &= bw.has_value();
    auto &ids = classLinks[key];
    if (std::find(ids.begin(), ids.end(), e.link) == ids.end())
      ids.push_back(e.link);
    auto account = [&](int32_t self, int32_t other) {
      if (self < 0)
        return;
      auto &tier = fs.tiers[self];
      if (other == self) {
        ++tier.peerLinks;
      } else if (other == self - 1) {
        ++tier.downLinks;
        tier.downBps += bps;
        tier.bandwidthKnown &= bw.has_value();
      } else if (other == self + 1) {
        ++tier.upLinks;
        tier.upBps += bps;
        tier.bandwidthKnown &= bw.has_value();
      }
    };
    account(ta, tb);
    if (tb != ta)
      account(tb, ta);
  }
  for (auto &[key, cls] : classes) {
    for (LinkId l : classLinks[key])
      cls.linkNames.push_back(g.link(l).name);
    fs.linkClasses.push_back(std::move(cls));
  }
  for (auto &tier : fs.tiers) {
    if (tier.upLinks == 0)
      continue;
    if (tier.bandwidthKnown && tier.upBps > 0)
      tier.oversubscription = tier.downBps / tier.upBps;
    else if (!tier.bandwidthKnown)
      tier.oversubscription = double(tier.downLinks) / double(tier.upLinks);
  }

  if (hostCopies.size() >= 2) {
    // Every host reaches every other one: one BFS through everything.
    std::vector<uint8_t> seen(copies, 0);
    std::vector<uint32_t> q{hostCopies.front()};
    seen[hostCopies.front()] = 1;
    for (size_t i = 0; i < q.size(); ++i)
      for (uint32_t k = cg.begin[q[i]]; k < cg.begin[q[i] + 1]; ++k)
        if (!seen[cg.arcs[k].to]) {
          seen[cg.arcs[k].to] = 1;
          q.push_back(cg.arcs[k].to);
        }
    fs.hostsConnected =
        std::all_of(hostCopies.begin(), hostCopies.end(), [&](uint32_t h) { return seen[h]; });
    if (opts.bisection)
      fs.bisection = bisection(pairs, copies, hostCopies);
    if (opts.diameter && fs.hostsConnected) {
      DiameterResult d = diameter(cg, hostCopies, opts.diameterWorkLimit);
      fs.diameterHops = d.hops;
      fs.diameterIsLowerBound = d.lowerBound;
    }
  }
  return fs;
}

} // namespace infracc
