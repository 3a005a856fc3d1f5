// The canonical InfraGraph document of a fabric: the same schema the frontend reads,
// written so that equal fabrics give equal text.
//
//   * keys in alphabetical order (as the reference's serializer writes them);
//   * devices and links sorted by name, device and infrastructure edges sorted by
//     their endpoints; components and instances keep their order (it fixes node
//     order and so the order of endpoints for rank placement);
//   * slices in their shortest form for the count they select from (no slice for
//     all copies, [i] for one, [a:b] or [a:b:s]); a device edge's `device` field is
//     folded into its component path (`cx5[0:2].pcie_endpoint[0]`);
//   * bandwidth in gigabits_per_second, latency in ns, numbers that read back to the
//     identical values;
//   * annotations, if any, in the reference's {infrastructure, annotations} form,
//     without the attributes the expansion ignores.
#pragma once

#include "ir/FabricGraph.h"

#include <nlohmann/json.hpp>

namespace infracc {

nlohmann::json canonicalDocument(const FabricGraph &g);

/// A number for JSON/YAML: an integer when the value is whole (and exactly
/// representable), else the double.
nlohmann::json canonicalNumber(double v);

} // namespace infracc
