// The binary GOAL reader: checks a .bin file against the layout txt2bin writes
// (GoalBinaryFormat.h) and builds the Schedule. A truncated or inconsistent file is
// rejected with `<file>:offset N: error: ...` naming the first bad byte.
#pragma once

#include "ir/Schedule.h"

#include <optional>

namespace llvm {
class MemoryBuffer;
}

namespace infracc {
class DiagEngine;
class Progress;
}

namespace infracc::goal {

/// Reads the whole buffer (which needs no particular alignment); nullopt after an
/// error reported through diags.
std::optional<Schedule> readBinaryGoal(DiagEngine &diags, const llvm::MemoryBuffer &buffer,
                                       Progress *progress = nullptr);

} // namespace infracc::goal
