// The -place-map file: which endpoint each rank runs on, one `rank endpoint-name` pair
// per line (`3 dgx.0.xpu.3`). Blank lines and `#` comments are allowed. The reader
// checks the syntax; the place pass checks ranks and names against the workload and
// the fabric, pointing at the entry's text.
#pragma once

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SMLoc.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infracc {

class DiagEngine;

struct PlaceMapEntry {
  uint32_t rank = 0;
  std::string endpoint;
  llvm::SMLoc rankLoc, endpointLoc;
};

/// Reads `path` (registered with diags for messages); syntax errors are reported and
/// give nullopt.
std::optional<std::vector<PlaceMapEntry>> readPlaceMap(llvm::StringRef path, DiagEngine &diags);

} // namespace infracc
