// What fabric blueprints share: reading the host and switch devices they are built
// from, and the common parameter descriptions.
#pragma once

#include "blueprints/Build.h"
#include "blueprints/Params.h"

#include <optional>

namespace infracc::blueprints {

struct HostDevice {
  DeviceBuild dev;
  AttachPoints nics;
};

/// The host device named by `key` with the NICs the fabric attaches to.
std::optional<HostDevice> readHost(ParamReader &r, llvm::StringRef key = "host");

struct SwitchDevice {
  DeviceBuild dev;
  AttachPoints ports;
};

/// The device named by the `switch` parameter when given (it needs at least `need`
/// ports, else the error says "<role> <need>", e.g. role = "a tier-0 switch needs"),
/// else a generic switch with exactly `need` ports, named `name`.
std::optional<SwitchDevice> readSwitch(ParamReader &r, uint64_t need, llvm::StringRef role,
                                       llvm::StringRef name = "switch");

/// A description fragment for the default of a switch= parameter.
inline const char *SwitchParamHelp =
    "switch device (a device blueprint or a device of the fabric file); default: a generic "
    "switch with as many ports as needed";

inline uint64_t ceilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

} // namespace infracc::blueprints
