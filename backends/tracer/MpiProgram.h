// A rank's dependency graph as the sequential MPI program a trace records: what TraceR
// (and any OTF2 consumer) replays. docs/scale-out.md, "From a schedule to a trace".
//
//  * Ops in program order (ir/MessageMatching.h: the lowest index first among the
//    ready ones, i.e. the text order when it lists predecessors first).
//  * A send is MPI_Isend, a recv MPI_Irecv, each with its own request (the op's
//    index). Before an op starts, the requests of its `requires` predecessors are waited
//    for (MPI_Wait), in the order they were posted; `irequires` (start after the
//    predecessor starts) needs nothing, the predecessor was issued before.
//  * A calc is time between MPI calls: the program computes for its duration.
//  * Collectives are blocking calls.
//  * At the end every open request is waited for.
#pragma once

#include "ir/Schedule.h"

#include <cstdint>
#include <vector>

namespace infracc::tracer {

struct MpiCall {
  enum Kind : uint8_t { Compute, Isend, Irecv, WaitSend, WaitRecv, Collective } kind;
  uint32_t op = 0;        // local index of the op (the request id for the request kinds)
  uint32_t peer = 0;      // Isend / Irecv / WaitRecv: the other rank
  uint32_t tag = 0;
  uint64_t size = 0;      // bytes, or ns for Compute
};

/// The calls of rank r. `partner` (from matchMessages) resolves the sender and tag of
/// receives from any source or with any tag.
std::vector<MpiCall> mpiProgram(const Schedule &s, uint32_t rank,
                                const std::vector<uint32_t> &partner);

} // namespace infracc::tracer
