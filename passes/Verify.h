// The schedule verifier (pass `verify`, run by default after every frontend):
//   * operands in range (peers, side-table indices);
//   * no dependency cycle in any rank (an error lists the operations on the cycle);
//   * every send has a matching recv and vice versa, matched statically per
//     (source, destination, tag) in program order, as MPI's non-overtaking rule
//     pairs them; wildcard recvs (source or tag -1) and wildcard-tag sends are then
//     given the leftover messages by a maximum matching, so a schedule is reported
//     only when no assignment at all could match everything;
//   * self-messages and zero-byte messages are reported as notes.
#pragma once

#include <llvm/ADT/StringRef.h>

namespace infracc {

class DiagEngine;
class Schedule;
class Statistics;

struct VerifyOptions {
  bool allowUnmatched = false;   // unmatched sends/recvs are warnings, not errors
  unsigned maxListed = 20;       // errors/warnings per kind of finding; the rest are counted
  unsigned maxNotes = 5;         // notes per kind
};

/// Checks `s`; findings go to diags with `where` (the workload's name) as location.
/// Returns false if an error was reported.
bool verifySchedule(const Schedule &s, DiagEngine &diags, llvm::StringRef where,
                    const VerifyOptions &opts, Statistics *stats = nullptr);

} // namespace infracc
