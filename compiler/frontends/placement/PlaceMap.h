// Rank maps: one `rank name` pair per line, blank lines and `#` comments allowed. The
// -place-map file names the endpoint each rank runs on (`3 dgx.0.xpu.3`), a
// -nic=map:FILE file the attach point its traffic uses (`3 dgx.0.nic.3`). The reader
// checks the syntax; the passes check ranks and names against the workload and the
// fabric, pointing at the entry's text.
#pragma once

#include "ir/PlacementRequests.h"

#include <optional>

namespace infracc {

class DiagEngine;

/// Reads `path` (registered with diags for messages); syntax errors are reported and
/// give nullopt. `what` names the file in messages ("placement map", "NIC map"),
/// `nameWord` the second column ("endpoint", "nic") and `example` a name for it
/// (`dgx.0.xpu.`, followed by the rank in the example).
std::optional<std::vector<RankMapEntry>> readRankMap(llvm::StringRef path, DiagEngine &diags,
                                                     llvm::StringRef what,
                                                     llvm::StringRef nameWord,
                                                     llvm::StringRef example);

} // namespace infracc
