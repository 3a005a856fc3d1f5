// The -place-map file: which endpoint each rank runs on, one `rank endpoint-name` pair
// per line (`3 dgx.0.xpu.3`). Blank lines and `#` comments are allowed. The reader
// checks the syntax; the place pass checks ranks and names against the workload and
// the fabric, pointing at the entry's text.
#pragma once

#include "ir/PlacementRequests.h"

#include <optional>

namespace infracc {

class DiagEngine;

/// Reads `path` (registered with diags for messages); syntax errors are reported and
/// give nullopt.
std::optional<std::vector<PlaceMapEntry>> readPlaceMap(llvm::StringRef path, DiagEngine &diags);

} // namespace infracc
