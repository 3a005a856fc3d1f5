// lower-collectives as a function: replaces every collective op of a schedule by the
// sends, recvs and calcs of its algorithm, rank by rank, and wires the program's
// dependencies on the collective to the first and last ops of its lowering.
#pragma once

#include "passes/collectives/Emitter.h"
#include "passes/collectives/Selection.h"

#include <llvm/ADT/StringRef.h>

#include <optional>
#include <vector>

namespace infracc {
class DiagEngine;
class Statistics;
}

namespace infracc::coll {

struct LoweringOptions {
  // Defaults for collectives that do not name their own (CollectiveInfo).
  uint32_t channels = 1;
  uint64_t chunkBytes = 0;
  CollProtocol protocol = CollProtocol::Simple;
  double reduceNsPerByte = 0;
  bool schedgenDeps = false;
  const SelectionPolicy *policy = nullptr;   // null: the defaults
};

/// One collective instance (the k-th collective of a communicator) as lowered.
struct InstanceInfo {
  CollectiveKind kind = CollectiveKind::Allreduce;
  uint64_t bytes = 0;
  uint32_t root = 0;
  uint32_t communicator = 0;        // index into Schedule::communicators()
  CollAlgorithm algorithm = CollAlgorithm::Auto;
  CollProtocol protocol = CollProtocol::Simple;   // the wire sizes its messages use
  std::vector<uint64_t> pairOffset; // alltoallv: prefix sums of the size matrix
  llvm::SMLoc loc;
};

/// What the semantic checker needs beyond the lowered schedule.
struct Recording {
  std::vector<OpRecord> records;    // per op of the lowered schedule
  std::vector<Interval> intervals;
  std::vector<InstanceInfo> instances;
};

/// Collective instances: the k-th collective of communicator c (as each member issues
/// them) is instance base[c] + k; base has one more entry, the total count.
std::vector<uint64_t> instanceBases(const Schedule &s);

/// Lowers `s`. `hostOfRank` (empty when unknown) gives each rank's host for the
/// hierarchical algorithm. Problems are reported through diags; nullopt after errors.
std::optional<Schedule> lowerCollectives(const Schedule &s, const LoweringOptions &opts,
                                         llvm::ArrayRef<uint32_t> hostOfRank, DiagEngine &diags,
                                         llvm::StringRef where, Recording *rec = nullptr,
                                         Statistics *stats = nullptr);

} // namespace infracc::coll
