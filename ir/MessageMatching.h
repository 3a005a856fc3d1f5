// Static send/recv matching in MPI order: per (source, destination, tag), the n-th
// send the source posts matches the n-th recv the destination posts. "Posting order"
// within a rank is its program order: a topological order of the rank's dependency
// DAG that takes the lowest op index first among the ops ready at each step, i.e.
// the text order whenever the text lists every op after its predecessors.
//
// Recvs from any source or with any tag, and sends with any tag, are not matched
// here (their partner depends on timing); they and the sends/recvs left over come
// back unmatched.
#pragma once

#include "ir/Schedule.h"

#include <llvm/ADT/STLFunctionalExtras.h>

#include <cstdint>
#include <vector>

namespace infracc {

inline constexpr uint32_t NoPartner = ~0u;

/// Positions of rank r's ops in its program order (local index -> position). Ops on
/// a dependency cycle follow all others, in index order.
void programOrder(const Schedule &s, uint32_t rank, std::vector<uint32_t> &position);

/// Partner of every op (global index; NoPartner for calcs, wildcards and unmatched
/// messages). `consider(g)` selects the sends and recvs to match (all when null).
std::vector<uint32_t> matchMessages(const Schedule &s,
                                    llvm::function_ref<bool(uint32_t)> consider = nullptr);

} // namespace infracc
