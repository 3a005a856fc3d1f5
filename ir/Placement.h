// Placement: which endpoint of the fabric each workload rank runs on, and which job
// it belongs to (for merged multi-job workloads).
#pragma once

#include "ir/FabricGraph.h"

#include <cstdint>
#include <vector>

namespace infracc {

struct Placement {
  std::vector<NodeId> endpointOfRank;   // FQG node (an xpu, or a host's nic) per rank
  std::vector<uint32_t> jobOfRank;      // empty: a single job

  bool empty() const { return endpointOfRank.empty(); }
  uint32_t numRanks() const { return static_cast<uint32_t>(endpointOfRank.size()); }
  uint32_t job(uint32_t rank) const { return jobOfRank.empty() ? 0 : jobOfRank[rank]; }
};

} // namespace infracc
