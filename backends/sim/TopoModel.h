// What -sim-model=topo decides per message, for other components that follow it
// (the sensitivity analysis): which fabric endpoints a message runs between, and
// how a path becomes L and G.
#pragma once

#include "backends/sim/LogGP.h"
#include "ir/Paths.h"
#include "ir/Placement.h"

#include <llvm/Support/Error.h>

#include <utility>

namespace infracc {
class Schedule;
struct Module;
}

namespace infracc::sim {

/// What -sim-model=topo (or `model`) needs of the module: a fabric, and a placement of
/// every rank on it; a usage or input error saying which is missing otherwise.
llvm::Error checkTopoInputs(const Module &m, llvm::StringRef model = "topo");

/// The endpoints of the message of send op `sendOp` (global index) of rank `rank`,
/// matched by recv op `recvOp` (NoPartner when unmatched): the nodes the two ranks are
/// placed on, or in a per-node schedule (placement members) the GPUs of the sending
/// and receiving streams.
std::pair<NodeId, NodeId> messageEndpoints(const Placement &pl, const Schedule &s, uint32_t rank,
                                           uint32_t sendOp, uint32_t recvOp);

/// L and G of a path: its latency rounded to whole ns (the global L when no link or
/// switch on it has one), the gap per byte of its bottleneck (the global G when no
/// link has a bandwidth); 0 and 0 for a message that stays on its endpoint.
PairCost topoCost(const PathInfo &p, const LogGPParams &params);

} // namespace infracc::sim
