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

#include <cstdint>
#include <vector>

namespace infracc {

class DiagEngine;
class RankOps;
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

/// The sum over sends minus the sum over recvs of a 128-bit hash of (source,
/// destination, tag). Without wildcards, every send has its recv exactly when each
/// (source, destination, tag) has as many sends as recvs, and then the sketch is 0; a
/// schedule whose counts differ leaves it non-zero except with probability ~2^-128.
class MessageSketch {
public:
  void add(uint32_t src, uint32_t dst, uint32_t tag, bool isSend);
  bool balanced() const { return sum_[0] == 0 && sum_[1] == 0; }

private:
  uint64_t sum_[2] = {0, 0};
};

/// For a schedule read rank by rank and never held whole (streaming conversion): true
/// while the verifier would report nothing at all about the ranks seen, so that the
/// streamed output is the normal run's. rank() turns false at the first operand out of
/// range, dependency cycle, self or zero-byte message, wildcard or unlowered op;
/// finish() tells whether every send has its recv.
class QuietVerification {
public:
  bool rank(uint32_t r, uint32_t numRanks, const RankOps &ops);
  bool finish() const { return sketch_.balanced(); }

private:
  MessageSketch sketch_;
  std::vector<uint32_t> indegree_, queue_;
};

} // namespace infracc
