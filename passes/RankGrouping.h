// Rebuilding a schedule with its ranks grouped: every new rank holds the ops of one or
// more "members" (ranks of one or several source schedules), each member on cpu
// streams of its own. Used by remap-gpus (GPUs into nodes) and merge-jobs (jobs into
// one schedule; tenants sharing a slot).
//
// For a member with local index k on its new rank (0-based, in member order):
//   * its ops follow those of members 0..k-1, in their order, with their dependencies;
//   * cpu' = k*C + cpu, C = (largest cpu of all sources) + 1;
//   * nic' = nicOf(member, nic) (the caller decides: the GPU's NIC, or unchanged);
//   * peer' = the new rank of the peer's member (-1 stays -1);
//   * tag'  = (tag*g + s)*g + d, where g is the largest number of members on any new
//     rank, s the local index of the sending member and d that of the receiving one;
//     with g = 1 tags are unchanged. When the largest tag leaves no room for the two
//     digits (lowered collectives use tags from 2^31), `tag` here is the tag's index
//     among the distinct tags of all sources in increasing order (one to one, so the
//     argument below holds unchanged).
//
// Why tags stay distinguishable: two messages are told apart by (source rank,
// destination rank, tag). A source rank is (new rank, s), a destination (new rank, d),
// and for fixed new ranks (tag, s, d) -> (tag*g + s)*g + d is one-to-one for s, d < g
// (it is the number with digits tag, s, d in base g). So messages with different keys
// before get different keys after, and messages with the same key keep one key: the
// MPI matching order within every key is unchanged. A tag' beyond 2^32 - 2 (-1 means
// any tag) is an error, as is a wildcard recv or tag when g > 1 (it would match
// other members' messages).
#pragma once

#include "ir/Schedule.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace infracc {

class DiagEngine;

struct GroupMember {
  uint32_t source = 0;   // index into the source schedules
  uint32_t rank = 0;     // its rank there
};

struct GroupingPlan {
  std::vector<const Schedule *> sources;
  std::vector<std::string> sourceNames;   // for messages
  std::vector<uint32_t> begin;            // CSR over new ranks: begin.size() = ranks + 1
  std::vector<GroupMember> members;
  /// New nic of an op of `member` (index into members) with old nic `nic`.
  std::function<uint32_t(uint32_t member, uint32_t nic)> nicOf;
  /// Which pass is grouping (for messages): "remap-gpus", "merge-jobs".
  std::string pass;

  uint32_t numRanks() const { return static_cast<uint32_t>(begin.size() - 1); }
  uint32_t maxMembers() const;
};

/// The cpu block size C of the rule above for these sources.
uint32_t cpusPerMember(llvm::ArrayRef<const Schedule *> sources);

/// Builds the grouped schedule. Every rank of every source must be a member exactly
/// once, except that sources may have ranks nobody refers to only if no message goes
/// to them. Problems are reported through diags; nullopt when any was.
std::optional<Schedule> regroup(const GroupingPlan &plan, DiagEngine &diags);

} // namespace infracc
