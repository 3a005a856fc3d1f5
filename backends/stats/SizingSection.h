// The sizing section of -emit=stats: hosts, xpus, switches and links per tier,
// oversubscription, bisection bandwidth and diameter, from the structure analysis in
// ir/FabricStructure.h.
#pragma once

#include "ir/FabricStructure.h"

#include <nlohmann/json.hpp>

namespace infracc {

/// The analysis options the section uses (-exact-diameter).
StructureOptions sizingOptions();

/// The section as a JSON object of objects (bandwidths in Gb/s; tiers keyed "tier 0",
/// ...; link classes keyed "hosts - tier 0", "within tier 0", ...).
nlohmann::ordered_json fabricSizingJson(const FabricGraph &g, const FabricStructure &s);

} // namespace infracc
