// Helpers for the GOAL tests: parse text in-process and capture the diagnostics, and
// describe a Schedule field by field (independently of the GOAL writer).
#pragma once

#include "ir/Schedule.h"

#include <optional>
#include <string>
#include <vector>

namespace infracc::test {

struct Parsed {
  std::optional<Schedule> schedule;
  std::string diags;   // everything DiagEngine printed
};

/// Parses GOAL text as the file `name` (no error limit), in LogGOPSim's dialect or
/// with `extended` in infracc's (collectives, communicators).
Parsed parseGoalText(const std::string &text, const std::string &name = "t.goal",
                     bool extended = false);

/// The `file:line:col: error: ...` / `note:` lines of a diagnostics text, without the
/// quoted source lines and carets.
std::vector<std::string> messageLines(const std::string &diags);

/// One line per op: `r0 #0 l1 send peer=1 size=8 tag=0 cpu=0 nic=0 succ=[2,3i]`
/// (successor local indices, `i` marking irequires), in op order.
std::string describe(const Schedule &s);

/// Binary GOAL from the writer, for a schedule.
std::string toBinary(const Schedule &s);

/// A ring allreduce with a calc per step, `iterations` times, over `ranks` ranks,
/// written in schedgen's style (dependencies right after their op).
std::string ringAllreduceText(unsigned ranks, unsigned iterations, uint64_t bytes);

} // namespace infracc::test
