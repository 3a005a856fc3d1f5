// The sizing summary of a fabric (hosts, xpus, switches and links per tier,
// oversubscription, bisection bandwidth, diameter) as text or JSON, from the
// structure analysis in ir/FabricStructure.h. Written by -emit=sizing and included in
// -emit=stats.
#pragma once

#include "ir/FabricStructure.h"

#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json.hpp>

namespace infracc {

/// The analysis options the sizing reports use (-exact-diameter).
StructureOptions sizingOptions();

/// Indented `key  value` lines, bandwidths in Gb/s.
void printFabricSizing(const FabricGraph &g, const FabricStructure &s, llvm::raw_ostream &os);

/// The same content as a JSON object of objects (bandwidths in Gb/s; tiers keyed
/// "tier 0", ...; link classes keyed "hosts - tier 0", "within tier 0", ...).
nlohmann::ordered_json fabricSizingJson(const FabricGraph &g, const FabricStructure &s);

} // namespace infracc
