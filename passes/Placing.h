// Helpers shared by the passes that put ranks on the fabric (place, merge-jobs):
// endpoints grouped by host, the orders the policies use, endpoint names, a seeded
// shuffle that gives the same result on every platform.
#pragma once

#include "ir/FabricGraph.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace infracc {

struct Module;
class Statistics;

/// The fabric's endpoints grouped by host (device copy), hosts in node order, each
/// host's endpoints in node order, at most `perHost` of each (0: all).
class EndpointPool {
public:
  EndpointPool(const FabricGraph &g, unsigned perHost = 0);

  llvm::ArrayRef<std::vector<NodeId>> hosts() const { return hosts_; }
  /// Index in hosts() of the host holding `endpoint` (any endpoint of the fabric).
  uint32_t hostOf(NodeId endpoint) const;
  size_t size() const { return size_; }

  std::vector<NodeId> packed() const;       // host by host
  std::vector<NodeId> roundRobin() const;   // first of every host, then second, ...
  std::vector<NodeId> random(uint64_t seed) const;

private:
  const FabricGraph &g_;
  std::vector<std::vector<NodeId>> hosts_;
  std::vector<uint32_t> hostOfCopy_;   // device copy -> index in hosts_, or ~0
  size_t size_ = 0;
};

/// Resolves endpoint names (`dgx.0.xpu.3`) with messages that say what would be valid.
class EndpointNames {
public:
  explicit EndpointNames(const FabricGraph &g);
  llvm::Expected<NodeId> resolve(llvm::StringRef name) const;

private:
  const FabricGraph &g_;
  std::vector<NodeId> sorted_;
};

/// `0`, `0 and 3`, `0, 2-5 and 9`; at most `limit` groups, then "... (n in all)".
std::string describeRanks(llvm::ArrayRef<uint32_t> sortedRanks, size_t limit = 8);

/// Statistics every placing pass reports: ranks placed, hosts used.
void recordPlacementStats(const Module &m, Statistics &stats, llvm::StringRef group);

/// A uniform integer in [0, n) from a 64-bit generator, by rejection (the standard
/// distributions differ between C++ libraries; this does not).
uint64_t uniformBelow(std::mt19937_64 &rng, uint64_t n);

/// Fisher-Yates with uniformBelow: the same permutation for the same seed everywhere.
template <typename T> void seededShuffle(std::vector<T> &v, std::mt19937_64 &rng) {
  for (size_t i = v.size(); i > 1; --i)
    std::swap(v[i - 1], v[uniformBelow(rng, i)]);
}

} // namespace infracc
