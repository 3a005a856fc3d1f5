// MPI traces as liballprof writes them (one file per rank, one line per call:
// `MPI_Name:tstart:arg:...:arg:tend`, times in µs, a datatype as `handle,size,extent`,
// a communicator as `handle,rank,size`) read into the schedule IR:
//   * point-to-point calls become sends and recvs; nonblocking ones let the next op
//     start with them (irequires) and MPI_Wait/Waitall become a `calc 0` that
//     requires the requests;
//   * collectives become collective ops on their communicator (the world, or one
//     rebuilt from MPI_Comm_split/MPI_Comm_dup), lowered later by lower-collectives;
//   * the time between two calls becomes a calc (µs × 1000 = ns).
// docs/collectives.md lists the calls understood and the argument positions.
#pragma once

#include "ir/Schedule.h"

#include <optional>
#include <string>
#include <vector>

namespace infracc {
class DiagEngine;
}

namespace infracc::mpi {

struct TraceOptions {
  /// Open MPI numbers MPI_ANY_SOURCE -1 and MPI_PROC_NULL -2, 8-byte requests;
  /// MPICH the other way round, 4-byte requests.
  bool mpich = false;
};

/// The rank files of a trace: `path` is a directory holding one file per rank, or
/// rank 0's file, whose name holds `-0` exactly once (the others replace it with
/// `-1`, `-2`, ...). Reports through diags and returns an empty list on errors.
std::vector<std::string> traceFiles(DiagEngine &diags, const std::string &path);

/// Reads the rank files (in rank order).
std::optional<Schedule> readLiballprof(DiagEngine &diags, const std::vector<std::string> &files,
                                       const TraceOptions &opts);

/// How sure we are that `head` starts a liballprof trace (0..100).
int sniffLiballprof(const std::string &head);

} // namespace infracc::mpi
