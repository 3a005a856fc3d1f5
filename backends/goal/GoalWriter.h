// Writers for GOAL: plain text (-emit=goal, also the -print-after printer) and binary
// (-emit=goal-bin, byte-identical to LogGOPSim's txt2bin).
#pragma once

#include "ir/Schedule.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/raw_ostream.h>

#include <memory>

namespace infracc {
class DiagEngine;
class Progress;
class ScheduleStreamWriter;
}

namespace infracc::goal {

/// Reports (through diags, `where` naming the workload) everything plain GOAL text
/// cannot express: unlowered operations, a send to -1, a calc with a nic. Returns
/// reportedError() if anything was reported.
llvm::Error checkPlainText(const Schedule &s, DiagEngine &diags, llvm::StringRef where);

/// Writes the schedule as GOAL text: `num_ranks`, then per rank `rank r {`, one line
/// per op labelled l1, l2, ... in op order (`l1: send 8b to 1 tag 0 cpu 1 nic 2`,
/// clauses tag, cpu, nic; cpu and nic only when non-zero), then the dependencies
/// (`l3 requires l1`) grouped by predecessor in successor order, so reading the text
/// back gives the same schedule. No indentation and no comments: LogGOPSim's txt2bin
/// and LLAMP's line-by-line parser both read it. With `extended`, operations plain
/// GOAL lacks are printed in the extended dialect instead (for -print-after).
/// `progress`, when given, advances by ops written.
void printText(const Schedule &s, llvm::raw_ostream &os, bool extended = false,
               Progress *progress = nullptr);

/// Reports what binary GOAL cannot hold: cpu or nic above 255, unlowered operations.
llvm::Error checkBinary(const Schedule &s, DiagEngine &diags, llvm::StringRef where);

/// Writes binary GOAL exactly as txt2bin does (after checkBinary succeeded).
void writeBinary(const Schedule &s, llvm::raw_ostream &os, Progress *progress = nullptr);

/// The same bytes for a schedule streamed rank by rank (`os` must be seekable: the
/// header and the jump table are written last).
std::unique_ptr<ScheduleStreamWriter> binaryStreamWriter(llvm::raw_pwrite_stream &os,
                                                         uint32_t numRanks);

/// The same bytes on a stream that cannot seek (a pipe), from two passes over the input
/// (ScheduleStreamWriter::measuring).
std::unique_ptr<ScheduleStreamWriter> binaryTwoPassWriter(llvm::raw_ostream &os,
                                                          uint32_t numRanks);

} // namespace infracc::goal
