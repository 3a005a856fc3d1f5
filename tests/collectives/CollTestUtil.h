// Helpers for the collective tests: a schedule with one collective on every member,
// lowered with recording on and run through the semantic checker.
#pragma once

#include "passes/collectives/Lowering.h"
#include "passes/collectives/SemanticChecker.h"

#include <optional>
#include <string>
#include <vector>

namespace infracc::test {

struct CollCase {
  CollectiveKind kind = CollectiveKind::Allreduce;
  CollAlgorithm algo = CollAlgorithm::Auto;
  uint32_t members = 4;
  uint64_t bytes = 1000;
  uint32_t root = 0;
  uint32_t channels = 1;
  uint64_t chunk = 0;
  CollProtocol protocol = CollProtocol::Simple;
  double reduceNsPerByte = 0;
  bool schedgenDeps = false;
  /// Members are ranks 2(P-1-i)+1 of a world of 2P ranks (a sub-communicator in
  /// reverse order) instead of ranks 0..P-1.
  bool subCommunicator = false;
  /// Ranks per host for hierarchical (host of member i: i / ranksPerHost, or with
  /// `scatterHosts` i % hosts).
  uint32_t ranksPerHost = 0;
  bool scatterHosts = false;
  /// NCCL Simple's slices of each ring step (CollectiveInfo::slices).
  uint32_t slices = 0;
  uint64_t sliceAlign = 0, sliceMin = 0;

  std::string name() const;
};

/// alltoallv sizes used by the tests: member s sends (7s + 3d) % 11 * 13 bytes to d.
uint64_t alltoallvSize(uint32_t s, uint32_t d);

Schedule makeCollectiveSchedule(const CollCase &c);

struct Lowered {
  std::optional<Schedule> schedule;
  coll::Recording rec;
  std::string diags;
  coll::CheckResult check;
  std::string checkText() const;
};
Lowered lowerAndCheck(const CollCase &c);

/// Per rank: number of sends, bytes sent, number of recvs, bytes received.
struct Traffic {
  std::vector<uint64_t> sends, sendBytes, recvs, recvBytes;
};
Traffic traffic(const Schedule &s);

} // namespace infracc::test
