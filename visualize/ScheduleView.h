// Picture of a schedule: one cluster per rank, one node per op labelled as GOAL
// writes it (`send 1024b → 3`), `requires` edges solid, `irequires` dashed, and the
// messages as edges from each send to the receive it matches.
#pragma once

#include "ir/Schedule.h"
#include "visualize/Graphviz.h"

#include <llvm/Support/Error.h>

#include <string>

namespace infracc::viz {

struct ScheduleViewOptions {
  /// Refuse schedules with more ops than this.
  uint64_t maxOps = 2000;
  std::string title;   // e.g. the workload's file name
};

/// A send and the receive it matches, as global op indices.
struct MessageMatch {
  uint32_t send, recv;
};
struct MessageMatching {
  std::vector<MessageMatch> matches;
  uint64_t unmatchedSends = 0, unmatchedRecvs = 0;
  uint64_t wildcardRecvs = 0;   // any source / any tag: left unmatched
};

/// Matches sends to receives the way MPI orders them: per (source, destination, tag),
/// the k-th send matches the k-th receive, in op order within each rank. Receives with
/// any source or any tag depend on timing and are not matched.
MessageMatching matchMessages(const Schedule &s);

/// The GOAL-like label of op g: "send 1024b → 3 tag 7", "recv 8b ← 0", "calc 500".
std::string opLabel(const Schedule &s, uint32_t g);

llvm::Expected<Drawing> drawSchedule(const Schedule &s, const ScheduleViewOptions &o);

} // namespace infracc::viz
