// The workload as an htsim connection matrix: one flow per message between two hosts,
// from the htsim node (attach point) its send leaves through to the one its recv
// arrives at; dependencies as triggers.
//
// What htsim can express, and so what a flow waits for:
//  * A flow starts at a time (`start`, ps) or when a trigger fires. A trigger fires when
//    its activations arrive: `oneshot` on the first, `barrier count n` on the n-th.
//  * A flow activates at most one trigger when its sender is done (`send_done_trigger`:
//    every byte acknowledged) and one when its receiver is done (`recv_done_trigger`).
//    csg-htsim's stock binaries (eqds, ndp, roce, hpcc) never fire the receiver's
//    trigger, so by default both kinds of dependency use send_done_trigger.
//  * There are no posted receives and no compute: a recv counts as complete when its
//    message's flow is done, whatever the recv itself depends on, and calcs take no
//    time. Compute ahead of a rank's first message becomes the `start` time of the flows
//    that wait for it (longest chain of calcs, in ps).
//
// The flow of a send starts when everything the send depends on (through calcs and
// messages between ranks of one host, which need no flow) is complete: a set of message
// completions. Completions implied by others in the set are dropped (a flow's completion
// implies everything its own start waited for). Flows with the same set share one
// trigger; when one completion is needed by different sets, those triggers are merged
// into one (a flow can activate only one trigger): the flows then wait for the union,
// which keeps the order but may start them later (reported as a warning). Messages of
// 2^30 bytes or more are split into a chain of flows of at most 2^30 bytes.
#pragma once

#include "ir/Schedule.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace infracc {
class DiagEngine;
}

namespace infracc::htsim {

inline constexpr uint64_t MaxFlowBytes = uint64_t(1) << 30;

struct CmFlow {
  uint32_t src = 0, dst = 0;        // htsim nodes
  uint64_t size = 0;                // bytes, 1..MaxFlowBytes
  int64_t startPs = -1;             // a root flow's start; -1 when triggered
  uint32_t trigger = 0;             // trigger id (1-based) that starts it, 0 for none
  uint32_t sendDoneTrigger = 0, recvDoneTrigger = 0;
  uint32_t message = 0;             // the message it carries (a part of)
};

struct CmTrigger {
  uint32_t count = 1;               // activations needed: 1 = oneshot, more = barrier
};

struct CmMessage {
  uint32_t send = 0, recv = 0;      // global op indices of the send and its recv
  uint32_t firstFlow = 0, flows = 1;
  uint64_t bytes = 0;
};

struct ConnectionMatrix {
  uint32_t nodes = 0;
  std::vector<CmFlow> flows;        // flow id = index + 1
  std::vector<CmTrigger> triggers;  // trigger id = index + 1
  std::vector<CmMessage> messages;

  // What the translation changed, for the header and the warnings.
  uint64_t localMessages = 0;       // between ranks on one host: no flow
  uint64_t splitMessages = 0;       // 2^30 bytes or more: several flows
  uint64_t zeroByteMessages = 0;    // sent as 1-byte flows
  uint64_t calcs = 0;
  double computeNs = 0;             // all calcs
  uint64_t delayedRoots = 0;        // root flows with a start time > 0
  double maxStartNs = 0;
  uint64_t widenedFlows = 0;        // flows whose trigger was merged with others
  uint64_t mergedTriggers = 0;      // triggers that were merged into others
  bool recvDoneTriggers = false;
};

struct CmOptions {
  /// Use recv_done_trigger for dependencies on a recv (htsim builds that fire it).
  bool recvDoneTriggers = false;
};

/// Where the flows go: messages between ranks of one host need none; the others run
/// from the node of their send to the node of their recv.
struct FlowEnds {
  llvm::ArrayRef<uint32_t> hostOfRank;   // per rank; equal values: one host
  llvm::ArrayRef<uint32_t> nodeOfOp;     // per op (global index): htsim node of a send/recv
};

/// Builds the matrix. Problems (unmatched or wildcard messages, unlowered operations,
/// dependency cycles, shapes htsim cannot express) are reported through diags against
/// `where`; nullopt then.
std::optional<ConnectionMatrix> buildConnectionMatrix(const Schedule &s, const FlowEnds &ends,
                                                      uint32_t nodes, DiagEngine &diags,
                                                      llvm::StringRef where,
                                                      const CmOptions &opts = {});

/// Writes the .cm file: the `comments` (each becomes one `# ` line) and the header
/// (Nodes, Connections, Triggers), then one line per flow in id order and one per
/// trigger in id order. LF line ends, single spaces, no comment after the header.
void writeConnectionMatrix(const ConnectionMatrix &cm, llvm::ArrayRef<std::string> comments,
                           llvm::raw_ostream &os);

} // namespace infracc::htsim
