// Tier detection on the fully qualified graph, at the level of device copies
// ("boxes": one copy of one instance, dense ids from FabricGraph::deviceCopyOf).
//
// Hosts sit in tier 0; every other box sits at its hop distance from the nearest
// host in the graph of boxes (two boxes are adjacent when any of their nodes share
// an edge). In a leaf-spine fabric that puts leaves in tier 1 and spines in tier 2;
// in a 3-level fat tree the core switches land in tier 3. Boxes that reach no host
// (or every box, when the fabric has no host) are put one tier above the highest.
#pragma once

#include "ir/FabricGraph.h"

#include <cstdint>
#include <vector>

namespace infracc {

struct FabricTiers {
  std::vector<uint32_t> tierOfBox;   // indexed by FabricGraph::deviceCopyOf
  uint32_t numTiers = 0;             // highest tier + 1 (0 for an empty fabric)
};

FabricTiers detectTiers(const FabricGraph &g);

/// The box of every node, computed in one pass (deviceCopyOf for all nodes at once).
std::vector<uint32_t> boxOfNodes(const FabricGraph &g);

} // namespace infracc
