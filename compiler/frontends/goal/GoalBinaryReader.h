// The binary GOAL reader: checks a .bin file against the layout txt2bin writes
// (GoalBinaryFormat.h) and returns a Schedule that views the file's node records in
// place (a packed schedule: nothing is copied, the buffer stays mapped as long as the
// schedule lives). A truncated or inconsistent file is rejected with
// `<file>:offset N: error: ...` naming the first bad byte.
#pragma once

#include "ir/Schedule.h"

#include <memory>
#include <optional>

namespace llvm {
class MemoryBuffer;
}

namespace infracc {
class DiagEngine;
class Progress;
}

namespace infracc::goal {

/// Checks the whole buffer (which needs no particular alignment) and returns the
/// schedule viewing it; nullopt after an error reported through diags. The ranks are
/// checked by `threads` threads, each a contiguous share (0: up to one per CPU, at most
/// four, when the buffer is 16 MiB or more); the error reported is the first in file
/// order, whatever the number.
std::optional<Schedule> readBinaryGoal(DiagEngine &diags,
                                       std::shared_ptr<const llvm::MemoryBuffer> buffer,
                                       Progress *progress = nullptr, unsigned threads = 0);

} // namespace infracc::goal
