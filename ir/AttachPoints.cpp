#include "ir/AttachPoints.h"

#include <algorithm>
#include <deque>
#include <map>

namespace infracc {

AttachPoints::AttachPoints(const FabricGraph &g) : g_(g) {
  const uint32_t copies = g.numDeviceCopies();
  std::vector<NodeId> found;
  for (const auto &e : g.edges())
    if (g.deviceCopyOf(e.u) != g.deviceCopyOf(e.v)) {
      found.push_back(e.u);
      found.push_back(e.v);
    }
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  nodes_ = std::move(found);
  // Node ids run copy by copy, so the attach points of a copy are one run of nodes_.
  begin_.assign(copies + 1, 0);
  for (NodeId n : nodes_)
    ++begin_[g.deviceCopyOf(n) + 1];
  for (uint32_t c = 0; c < copies; ++c)
    begin_[c + 1] += begin_[c];
  copyDone_.assign(copies, 0);
}

int AttachPoints::indexInCopy(NodeId n) const {
  auto list = ofCopy(g_.deviceCopyOf(n));
  auto it = std::lower_bound(list.begin(), list.end(), n);
  return it != list.end() && *it == n ? int(it - list.begin()) : -1;
}

std::vector<NodeId> AttachPoints::nearestSet(NodeId n) const {
  auto cands = ofCopy(g_.deviceCopyOf(n));
  if (cands.empty())
    return {};
  const auto &inst = g_.instances()[g_.instanceOf(n)];
  const NodeId first = NodeId(inst.firstNode + g_.copyOf(n) * inst.nodesPerCopy);
  std::vector<uint32_t> dist(inst.nodesPerCopy, ~0u);
  std::deque<NodeId> queue{n};
  dist[n - first] = 0;
  uint32_t best = ~0u;
  std::vector<NodeId> nearest;
  while (!queue.empty()) {
    NodeId u = queue.front();
    queue.pop_front();
    uint32_t du = dist[u - first];
    if (du > best)
      break;
    if (std::binary_search(cands.begin(), cands.end(), u)) {
      best = du;
      nearest.push_back(u);
      continue;   // traffic leaves here; do not look through it
    }
    for (const auto &adj : g_.neighbours(u)) {
      NodeId v = adj.node;
      if (v < first || v >= first + inst.nodesPerCopy || dist[v - first] != ~0u)
        continue;
      dist[v - first] = du + 1;
      queue.push_back(v);
    }
  }
  std::sort(nearest.begin(), nearest.end());
  return nearest;
}

NodeId AttachPoints::nearest(NodeId n) const {
  const uint32_t copy = g_.deviceCopyOf(n);
  if (!copyDone_[copy]) {
    // Share ties out among the copy's endpoints in index order (endpoints are sorted
    // by node id, so the copy's endpoints are one run).
    auto eps = g_.endpoints();
    auto lo = std::lower_bound(eps.begin(), eps.end(), n, [&](NodeId a, NodeId) {
      return g_.deviceCopyOf(a) < copy;
    });
    std::map<std::vector<NodeId>, uint32_t> shared;
    for (auto it = lo; it != eps.end() && g_.deviceCopyOf(*it) == copy; ++it) {
      std::vector<NodeId> set = nearestSet(*it);
      if (set.empty())
        continue;
      uint32_t &k = shared[set];
      chosen_[*it] = set[k++ % set.size()];
    }
    copyDone_[copy] = 1;
  }
  if (auto it = chosen_.find(n); it != chosen_.end())
    return it->second;
  std::vector<NodeId> set = nearestSet(n);   // not an endpoint: the first of its nearest
  return set.empty() ? InvalidNode : set.front();
}

} // namespace infracc
