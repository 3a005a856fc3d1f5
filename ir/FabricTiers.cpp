#include "ir/FabricTiers.h"

#include <llvm/ADT/STLExtras.h>

#include <algorithm>

namespace infracc {

std::vector<uint32_t> boxOfNodes(const FabricGraph &g) {
  std::vector<uint32_t> box(g.numNodes());
  uint32_t base = 0;
  for (const auto &inst : g.instances()) {
    if (inst.nodesPerCopy)
      for (uint64_t c = 0; c < inst.count; ++c)
        std::fill_n(box.begin() + inst.firstNode + c * inst.nodesPerCopy, inst.nodesPerCopy,
                    base + static_cast<uint32_t>(c));
    base += static_cast<uint32_t>(inst.count);
  }
  return box;
}

FabricTiers detectTiers(const FabricGraph &g) {
  FabricTiers t;
  uint32_t boxes = g.numDeviceCopies();
  std::vector<uint32_t> box = boxOfNodes(g);

  // Box adjacency (CSR) from the edges that cross boxes; duplicates are harmless.
  std::vector<uint32_t> begin(size_t(boxes) + 1, 0);
  for (const auto &e : g.edges())
    if (box[e.u] != box[e.v]) {
      ++begin[box[e.u] + 1];
      ++begin[box[e.v] + 1];
    }
  for (uint32_t b = 0; b < boxes; ++b)
    begin[b + 1] += begin[b];
  std::vector<uint32_t> adj(begin[boxes]), fill(begin.begin(), begin.end() - 1);
  for (const auto &e : g.edges())
    if (box[e.u] != box[e.v]) {
      adj[fill[box[e.u]]++] = box[e.v];
      adj[fill[box[e.v]]++] = box[e.u];
    }

  constexpr uint32_t Unset = ~0u;
  t.tierOfBox.assign(boxes, Unset);
  std::vector<uint32_t> frontier, next;
  uint32_t b = 0;
  for (const auto &inst : g.instances())
    for (uint64_t c = 0; c < inst.count; ++c, ++b)
      if (inst.role == InstanceRole::Host) {
        t.tierOfBox[b] = 0;
        frontier.push_back(b);
      }
  uint32_t highest = 0;
  for (uint32_t level = 1; !frontier.empty(); ++level) {
    next.clear();
    for (uint32_t u : frontier)
      for (uint32_t i = begin[u]; i < begin[u + 1]; ++i)
        if (t.tierOfBox[adj[i]] == Unset) {
          t.tierOfBox[adj[i]] = level;
          highest = level;
          next.push_back(adj[i]);
        }
    frontier.swap(next);
  }
  bool anyHost = llvm::any_of(t.tierOfBox, [](uint32_t x) { return x == 0; });
  uint32_t unreached = anyHost ? highest + 1 : 0;
  bool anyUnreached = false;
  for (uint32_t &x : t.tierOfBox)
    if (x == Unset) {
      x = unreached;
      anyUnreached = true;
    }
  t.numTiers = boxes == 0 ? 0 : (anyUnreached ? unreached : highest) + 1;
  return t;
}

} // namespace infracc
