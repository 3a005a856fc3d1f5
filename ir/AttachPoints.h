// Where hosts meet the network: attach points, and which one a GPU is nearest to.
//
// An attach point is a node of a device copy with an edge to another copy: a host's
// NICs, or the ports of its composed NIC devices, or whatever host port the fabric's
// links end on when the host has no NIC component. Packet-level simulators (htsim,
// ns-3) see the fabric from these: one simulated node per attach point.
//
// Affinity: a node's nearest attach points are those of its own copy at the fewest
// hops over the copy's own edges (PCIe switches, NVLink, CPU links); the search does
// not look through one attach point to reach another. When several are equally near,
// the copy's endpoints (FabricGraph::endpoints) with that same set of nearest attach
// points share them out in index order: the k-th such endpoint takes the k-th, cyclically
// (two GPUs behind one PCIe switch with two NICs get one NIC each; on a DGX H100 GPU i
// gets NIC i). The choice depends only on the fabric, not on where ranks are placed.
#pragma once

#include "ir/FabricGraph.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>

#include <vector>

namespace infracc {

class AttachPoints {
public:
  explicit AttachPoints(const FabricGraph &g);

  /// The attach points of a device copy (FabricGraph::deviceCopyOf), in node order.
  llvm::ArrayRef<NodeId> ofCopy(uint32_t copy) const {
    return {nodes_.data() + begin_[copy], nodes_.data() + begin_[copy + 1]};
  }
  /// Position of `n` among the attach points of its copy, or -1 when it is none.
  int indexInCopy(NodeId n) const;
  /// Every attach point of the fabric, in node order.
  llvm::ArrayRef<NodeId> all() const { return nodes_; }

  /// The attach point `n`'s traffic leaves its copy through, by affinity (above);
  /// InvalidNode when its copy has none that `n` reaches inside the copy.
  NodeId nearest(NodeId n) const;

  const FabricGraph &graph() const { return g_; }

private:
  /// The equally nearest attach points of `n` (sorted), by a search inside its copy.
  std::vector<NodeId> nearestSet(NodeId n) const;

  const FabricGraph &g_;
  std::vector<NodeId> nodes_;
  std::vector<uint32_t> begin_;                    // per copy, into nodes_; copies + 1
  mutable llvm::DenseMap<NodeId, NodeId> chosen_;  // endpoint -> attach point (cache)
  mutable std::vector<uint8_t> copyDone_;          // copies whose endpoints are cached
};

} // namespace infracc
