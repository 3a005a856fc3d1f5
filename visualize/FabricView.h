// Pictures of a fabric:
//   overview     one node per device copy ("box"), switches stacked by tier above the
//                hosts, parallel edges between two boxes collapsed into one labelled
//                edge; large fabrics are summarised (identical hosts under one switch
//                become one node, then whole tiers become classes of equal boxes).
//   device:NAME  one device definition's internals: components, internal links,
//                composed devices as clusters.
//   full         every node of the fully qualified graph, one cluster per box.
#pragma once

#include "ir/FabricGraph.h"
#include "visualize/Graphviz.h"

#include <llvm/Support/Error.h>

#include <string>

namespace infracc::viz {

enum class Aggregation {
  Auto,      // the finest level below the readability target
  None,      // one node per box
  Hosts,     // hosts with the same instance and the same neighbours share a node
  Switches,  // hosts attached to a single switch are folded into that switch's node
  Classes,   // boxes of equal structure (same instance, tier and neighbourhood) share a node
};

struct FabricViewOptions {
  Aggregation aggregate = Aggregation::Auto;
  /// No view draws more nodes than this: -view=full and a forced -aggregate level fall
  /// back to the automatic overview (with Drawing::fallbackNote and a line in the
  /// title saying how to drill down); what cannot fall back is refused.
  uint32_t maxNodes = 1000;
  /// An extra line for the overview's title (set by the fallbacks).
  std::string titleNote;
  /// Shown in the title; empty: not shown.
  std::string digest;
};

/// The automatic overview stops summarising once it has at most this many nodes, this
/// many edges, and no tier wider than OverviewTargetWidth nodes.
inline constexpr uint32_t OverviewTargetNodes = 100;
inline constexpr uint32_t OverviewTargetEdges = 250;
inline constexpr uint32_t OverviewTargetWidth = 32;

llvm::Expected<Drawing> drawOverview(const FabricGraph &g, const FabricViewOptions &o);
llvm::Expected<Drawing> drawDevice(const FabricGraph &g, llvm::StringRef device,
                                   const FabricViewOptions &o);
llvm::Expected<Drawing> drawFull(const FabricGraph &g, const FabricViewOptions &o);

} // namespace infracc::viz
