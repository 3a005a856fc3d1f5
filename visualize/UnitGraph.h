// The graph a fabric picture is drawn from before styling: "units" (boxes for the
// overview, component copies for a device) joined by edges that carry a link and a
// multiplicity, and the two ways of summarising it when it is too large to read:
//
//   * groupByNeighbours: units of the same kind with exactly the same neighbours
//     (same units, links and multiplicities) share a node, e.g. the 16 hosts under
//     one leaf switch, or the 64 ports of a switch that each only touch its asic.
//   * groupByClasses: colour refinement (1-dimensional Weisfeiler-Leman) starting
//     from (kind, tier): units that are structurally interchangeable share a node,
//     e.g. all leaves of a fat tree.
#pragma once

#include "ir/FabricGraph.h"

#include <cstdint>
#include <vector>

namespace infracc::viz {

struct UnitGraph {
  struct Edge {
    uint32_t a, b;       // a < b
    LinkId link;
    uint64_t count;      // parallel edges of this link between a and b
  };
  std::vector<uint32_t> kind;   // per unit: units of different kinds never merge
  std::vector<uint32_t> tier;   // per unit
  std::vector<Edge> edges;      // sorted by (a, b, link), no duplicates

  uint32_t numUnits() const { return static_cast<uint32_t>(kind.size()); }
  /// Sorts and merges edges added in any order (summing counts).
  void normaliseEdges();
};

struct Grouping {
  std::vector<uint32_t> groupOf;                // per unit
  std::vector<std::vector<uint32_t>> members;   // per group, ascending; groups ordered by first member
  uint32_t numGroups() const { return static_cast<uint32_t>(members.size()); }
};

/// Every unit alone.
Grouping groupNone(const UnitGraph &g);
/// Units for which `mergeable[u]` is set merge when kind and neighbourhood are equal.
Grouping groupByNeighbours(const UnitGraph &g, const std::vector<bool> &mergeable);
/// Colour refinement; if it yields more than `maxGroups` classes, only (kind, tier).
Grouping groupByClasses(const UnitGraph &g, uint32_t maxGroups);

/// The edges between groups: one per (group pair, link).
struct GroupEdge {
  uint32_t ga, gb;        // ga <= gb (equal: edges inside one group)
  LinkId link;
  uint64_t total;         // unit-level parallel edges summed
  // Per member of ga (resp. gb): how many of these edges it has (min..max).
  uint64_t minA, maxA, minB, maxB;
};
std::vector<GroupEdge> groupEdges(const UnitGraph &g, const Grouping &gr);

} // namespace infracc::viz
