// A block-I/O trace as the message exchanges of a Direct-Drive-like storage service
// (ATLAHS §3.1.3; docs/workloads.md "Storage traces" for every rule and assumption).
#pragma once

#include "compiler/frontends/storage/SpcTrace.h"
#include "compiler/frontends/storage/StorageLayout.h"
#include "ir/Schedule.h"

#include <optional>

namespace infracc {

/// The schedule of `requests` on the service `layout` describes; `what` names the input
/// for messages. Nullopt after an error reported through `diags`.
std::optional<Schedule> directDriveSchedule(const std::vector<IoRequest> &requests,
                                            StorageLayout layout, DiagEngine &diags,
                                            llvm::StringRef what);

} // namespace infracc
