// The semantic checker: proves that a lowered schedule delivers what each collective
// promises. It executes every collective instance symbolically on the lowered ops
// (messages matched by source, destination and tag), tracking for every byte of the
// instance's logical buffer on every rank which ranks' contributions it holds and
// how often, and checks the definition at the end: after an allreduce every rank
// holds the sum of all contributions exactly once, after an allgather block i
// everywhere is rank i's, and so on.
//
// The result must not depend on timing, so it also proves the ops are race-free:
// every read of a byte (a send) must happen after the write that produced it, and
// every write (a recv, or its reduction calc) after the reads and writes before it,
// where "happens after" follows requires edges, irequires edges from sends, and
// messages. Concurrent reductions into the same bytes are allowed (they commute).
#pragma once

#include "passes/collectives/Lowering.h"

#include <string>
#include <vector>

namespace infracc::coll {

struct CheckResult {
  std::vector<std::string> errors;   // at most `maxErrors`
  uint64_t instancesChecked = 0;
  uint64_t racesChecked = 0;         // instances whose race-freedom was proven
  bool ok() const { return errors.empty(); }
};

struct CheckOptions {
  unsigned maxErrors = 10;
  /// Instances with more ops than this are executed but not checked for races
  /// (the proof keeps a bit per pair of the instance's ops).
  uint64_t raceCheckLimit = 40000;
};

CheckResult checkCollectives(const Schedule &lowered, const Recording &rec,
                             llvm::ArrayRef<Communicator> communicators,
                             const CheckOptions &opts = {});

} // namespace infracc::coll
