// Paths through the fully qualified graph, for cost models: the latency-shortest
// path between two nodes, with its latency sum, its bottleneck bandwidth and its
// length.
//
// Rules (docs/passes.md, "Paths"):
//  * A path's latency is the sum of its links' latencies plus a per-switch latency for
//    every switch it passes: entering a switch device copy (a copy whose role is
//    Switch) counts once per copy; inside other copies every switch-kind node passed
//    counts (NVSwitches, PCIe switches in a host). The caller supplies these per node.
//  * Among paths of equal latency the widest wins (largest bottleneck bandwidth):
//    with ECMP every equal-cost path is a candidate, and this is the best of them.
//  * Links without a latency count 0 ns; links without a bandwidth do not limit it (the
//    first such link on the path is reported in PathInfo::unpricedLink, so that cost
//    models can say so; a switch device's own internal links, priced by its switch
//    latency, are not).
//  * Paths do not pass through other hosts (they may enter the destination's host and
//    leave the source's); when a destination can only be reached through other
//    hosts (e.g. a torus of xpus), the unrestricted shortest path is used.
//
// Latencies are summed in whole picoseconds, so equal-cost ties are exact.
#pragma once

#include "ir/FabricGraph.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/DenseMap.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace infracc {

struct PathInfo {
  bool reachable = false;
  int64_t latencyPs = 0;                  // links + switches, picoseconds
  std::optional<double> bottleneckBps;    // none: no link on the path has a bandwidth
  uint32_t links = 0;                     // edges on the path
  uint32_t switches = 0;                  // switches charged
  bool latencyKnown = false;              // some link or switch on it had a latency
  LinkId unpricedLink = InvalidLink;      // the first link on it without a bandwidth

  double latencyNs() const { return double(latencyPs) / 1000.0; }
};

class PathFinder {
public:
  /// `switchLatencyPs[n]`: what passing switch node n costs (see the rules above; only
  /// read for nodes that count as a switch); empty: 0 everywhere.
  PathFinder(const FabricGraph &g, std::vector<int64_t> switchLatencyPs = {});
  ~PathFinder();

  /// The path from a to b (cached per pair).
  PathInfo between(NodeId a, NodeId b);

  /// Paths from every source to its targets: `targets[i]` lists the targets of
  /// `sources[i]`; results land in the pair cache. Runs the sources in parallel.
  void precompute(llvm::ArrayRef<NodeId> sources,
                  llvm::ArrayRef<std::vector<NodeId>> targets);

  /// The shortest path from a to b using only nodes of a's device copy (a host's
  /// internal path); unreachable if b is in another copy or not connected inside it.
  /// Like between(), not to be called from several threads at once.
  PathInfo withinCopy(NodeId a, NodeId b) const;

  /// The edges, from src on, of the paths between(src, targets[i]) reports (the same
  /// path: the same search and tie-breaking); empty for an unreachable target or
  /// src itself. One search for all targets; `info`, when given, receives what
  /// between() reports for each.
  std::vector<std::vector<EdgeId>> routes(NodeId src, llvm::ArrayRef<NodeId> targets,
                                          std::vector<PathInfo> *info = nullptr) const;

  /// Whether node n counts as a switch when a path enters it from node `from`.
  bool chargesSwitch(NodeId from, NodeId n) const;

  const FabricGraph &graph() const { return g_; }
  size_t cachedPairs() const { return cache_.size(); }

private:
  struct Scratch;
  Scratch &scratch() const;
  /// Dijkstra from `src` until every target is settled; `restrictHosts` forbids
  /// leaving a host copy other than the source's.
  void search(Scratch &s, NodeId src, llvm::ArrayRef<NodeId> targets, bool restrictHosts,
              uint32_t onlyCopy, PathInfo *out) const;
  void searchWithFallback(Scratch &s, NodeId src, llvm::ArrayRef<NodeId> targets,
                          PathInfo *out) const;

  const FabricGraph &g_;
  std::vector<int64_t> switchPs_;
  std::vector<uint32_t> copyOf_;     // device copy of every node
  std::vector<uint8_t> copyIsHost_, copyIsSwitch_;
  std::vector<int64_t> linkPs_;      // per link: latency in ps, -1 when unknown
  std::vector<double> linkBps_;      // per link: bandwidth, 0 when unknown
  llvm::DenseMap<uint64_t, PathInfo> cache_;
  mutable std::unique_ptr<Scratch> scratch_;   // for the one-pair queries
};

} // namespace infracc
