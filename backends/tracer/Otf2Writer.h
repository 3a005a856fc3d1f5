// A schedule as an OTF2 MPI trace, the way Score-P records one and TraceR replays it
// (docs/scale-out.md): one location per rank (location i = rank i), timestamps in ns
// (timer resolution 10^9), MPI calls as Enter/Leave of MPI_* regions around the MPI
// events (MpiIsend, MpiIrecvRequest, MpiIsendComplete, MpiIrecv, MpiCollectiveBegin/
// End), compute as the time between calls, MPI_Init first and MPI_Finalize last (TraceR
// counts the time before an Enter, except before the first). Communicators: MPI_COMM_WORLD
// (group of all ranks) and one per communicator of the schedule.
#pragma once

#include "ir/Schedule.h"
#include "support/Output.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/Support/Error.h>

#include <string>

namespace infracc {
class DiagEngine;
}

namespace infracc::tracer {

struct Otf2Stats {
  uint64_t serializedOps = 0;   // ops on cpu streams other than 0, run one after the other
};

/// Writes `<dir>/<name>.otf2`, `<dir>/<name>.def` and `<dir>/<name>/` (the archive)
/// through `out`. `job`: the ranks of one job (trace rank i = schedule rank job[i]);
/// empty: every rank. What a trace cannot hold (GPU kernels, collectives TraceR does not
/// replay, messages between jobs) is reported against `where` and gives an error.
llvm::Expected<Otf2Stats> writeOtf2(const Schedule &s, OutputManager &out, const std::string &dir,
                                    const std::string &name, DiagEngine &diags,
                                    llvm::StringRef where, llvm::ArrayRef<uint32_t> job = {});

} // namespace infracc::tracer
