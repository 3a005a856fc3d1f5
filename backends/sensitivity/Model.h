// The schedule as a max-plus system in one parameter p (L, o, G, or a fabric latency
// class): every time the built-in simulator's LogGOPSim engine computes is the
// maximum of a few earlier times plus costs that are linear in p, so the finishing
// time T(p) is the longest path through a DAG whose edge weights are lines a + b*p,
// a convex, piecewise linear function of p. docs/sensitivity.md states the rules.
//
// Elements (vertices), one per thing that moves a LogGOPSim clock:
//   calc     on its cpu:          start = cpu clock; the clock moves to start + size
//   send     on its cpu and nic:  start = max(cpu clock, nic send clock);
//                                 cpu += o + (s-1)O, nic += g + (s-1)G;
//                                 the message arrives at start + o + L
//   post     a recv, on its cpu:  posted at the cpu clock, costs nothing
//   message  at the receiver, on the SENDER's cpu and nic indices (as LogGOPSim):
//                                 processed at max(arrival, post of its recv, cpu
//                                 clock, nic receive clock); cpu += o + max((s-1)O,
//                                 (s-1)G), nic += g + (s-1)G; its recv completes then
//   raise    a rendezvous send's clocks move up to its message's processing
// Dependencies only order elements (LogGOPSim starts a freed op at its clock, never
// at its predecessor's finish), so the elements of one clock form a chain, in a
// topological order of the dependencies. That order is the simulator's whenever no
// two elements compete for a clock; evaluate() checks this at the point it evaluates
// and reports the first place where the simulator could order them differently.
#pragma once

#include "backends/sensitivity/Rational.h"
#include "backends/sim/LogGP.h"

#include <llvm/ADT/STLFunctionalExtras.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Support/Error.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace infracc {
class Schedule;
}

namespace infracc::sens {

/// a + b*p: a in ns, b in ns per unit of the parameter.
struct Line {
  int64_t a = 0, b = 0;
};

/// The parameter varied. Path: each message's latency is its own line (from the
/// fabric: traversals of a link class, or switches, times p plus the rest).
enum class ParamKind : uint8_t { L, o, G, Path };

/// A message's latency and gap per byte.
struct MessageCost {
  Line L;                 // latency as a function of p
  sim::PerByte G;         // gap per byte, when it is not the parameter
  bool gIsParam = false;  // G is the parameter (-param=G and this message uses the global G)
};

struct MessageCosts {
  std::vector<MessageCost> costs;    // at least one
  std::vector<uint32_t> costOfSend;  // per op index (sends only); empty: costs[0] for all
  const MessageCost &of(uint32_t sendOp) const {
    return costOfSend.empty() ? costs[0] : costs[costOfSend[sendOp]];
  }
};

struct ModelOptions {
  sim::LogGPParams params;   // o, g, O, S (and L, G where they are not the parameter)
  ParamKind param = ParamKind::L;
  MessageCosts messages;     // built from params when empty
};

/// A path line through a point: T = A + B*p near it (B: the slope on one side).
struct PathLine {
  Int128 A = 0;
  int64_t B = 0;
  Rational at(const Rational &p) const { return Rational(A) + Rational(B) * p; }
};

/// Where the simulator may process two elements of one clock in the other order.
struct ContentionNote {
  uint32_t rank = 0;
  std::string what;   // e.g. "op 'l5' (calc) can run before the receive of the message from rank 2 ..."
};

struct Evaluation {
  Rational at, value;
  PathLine right, left;               // the tangent lines on either side
  std::optional<ContentionNote> contention;   // the first element found, when checked
};

class Model {
public:
  /// Builds the element graph. Fails (naming the op) when a send or recv has no
  /// partner in MPI matching order (wildcards) or the schedule cannot finish.
  static llvm::Expected<std::unique_ptr<Model>> build(const Schedule &s, ModelOptions opts);
  ~Model();

  /// T at p, with the tangent lines on both sides; one pass over the elements.
  Evaluation evaluate(const Rational &p, bool checkContention = false);
  /// T over [lo, hi] exactly, in one pass over the elements: the lines of its upper
  /// envelope in order of slope, each maximal on an interval of positive length
  /// (consecutive lines cross at the breakpoints; the first is T's right tangent at
  /// lo, the last its left tangent at hi; one line when lo == hi). Every element's
  /// time is kept as such an envelope only until the last element reading it.
  /// pruneByTails: one backward pass first bounds every element's path to the end, and
  /// merges drop the lines no critical path can go through (the result is the same;
  /// the bounds take 4 bytes per merge and sample, in chunks beyond setPruningBudget()).
  std::vector<PathLine> envelope(const Rational &lo, const Rational &hi,
                                 bool pruneByTails = true);
  /// What the last envelope() did.
  struct EnvelopeStats {
    bool pruned = false;        // relevance pruning ran (asked for, range not a point)
    uint32_t samples = 0;       // points the tails were evaluated at
    uint64_t merges = 0;        // envelopes merged from two or more
    uint64_t linesMerged = 0;   // lines those merges read
    uint64_t linesPruned = 0;   // lines dropped as never critical
    uint64_t boundBytes = 0;    // the merges' stored tail bounds (the largest chunk's)
    uint64_t chunks = 0;        // how many pieces they were made in
  };
  const EnvelopeStats &lastEnvelope() const { return envStats_; }
  /// The most the merges' tail bounds may take at once (default 512 MiB); beyond it
  /// they are made in chunks, for up to one more backward pass.
  void setPruningBudget(uint64_t bytes) { boundBudget_ = bytes; }

  uint64_t numElements() const { return kind_.size(); }
  /// Whether T's slopes count things (messages, overheads, link traversals) rather
  /// than bytes (G): then two ends' slopes bound the breakpoints between them.
  bool slopesCountEvents() const { return o_.param != ParamKind::G; }
  uint64_t numMessages() const { return messages_; }
  /// Passes over the elements so far.
  uint64_t sweeps() const { return sweeps_; }
  /// Resident bytes of the model's arrays.
  uint64_t memoryBytes() const;

  /// The system itself, for the LP writer: element e starts no earlier than each
  /// (pred, cost): time(pred) + cost, pred == None meaning 0; T is the maximum over
  /// sinkCandidates of the same.
  static constexpr uint32_t None = ~0u;
  void candidates(uint32_t e, llvm::function_ref<void(uint32_t pred, Line cost)> f) const;
  void sinkCandidates(llvm::function_ref<void(uint32_t pred, Line cost)> f) const;
  /// "rank 3 calc 'l5'", "rank 1 message from rank 0 ('l2' -> 'l7')", for comments.
  std::string describe(uint32_t e) const;

private:
  Model(const Schedule &s, ModelOptions opts);
  llvm::Error buildElements();
  template <class F> void forEachCandidate(uint32_t e, F &&f) const;
  template <class F> void forEachClockAfter(uint32_t p, F &&f) const;
  template <class F> void forEachNicAfter(uint32_t p, F &&f) const;
  template <class F> void forEachSink(F &&f) const;
  std::optional<ContentionNote> checkElement(uint32_t e, int64_t P, int64_t Q) const;
  /// When the simulator can first process element e (scaled by Q) and the elements
  /// whose events free it then.
  void releaseOf(uint32_t e, int64_t P, int64_t Q, Int128 &rel,
                 llvm::SmallVectorImpl<uint32_t> &by) const;

  const Schedule &s_;
  ModelOptions o_;
  uint64_t messages_ = 0, sweeps_ = 0;
  EnvelopeStats envStats_;
  uint64_t boundBudget_ = uint64_t(512) << 20;

  // Elements in topological order.
  enum Kind : uint8_t { Calc, Send, Post, Msg, RaiseCpu, RaiseNic };
  std::vector<uint8_t> kind_;
  std::vector<uint32_t> op_;        // calc, send, post: the op; msg: its recv; raises: the send
  std::vector<uint32_t> cpuPrev_;   // previous element on the same cpu clock
  std::vector<uint32_t> nicPrev_;   // send, raise-nic: nic send clock; msg: nic receive clock
  std::vector<uint32_t> aux_;       // msg: the send's element; raises: the message element
  std::vector<uint32_t> cpuTails_;  // last element of every cpu clock
  // Per op: its element, and the message element of a recv or send; partner op.
  std::vector<uint32_t> elemOf_, msgOf_, partner_;
  // Per op: dependency predecessors (global op, IRequiresBit), CSR.
  std::vector<uint32_t> predBegin_, pred_;
  // Per op: freed together with more than 16 others (LogGOPSim's sort is then not stable).
  std::vector<uint8_t> bigBatch_;
  // Values of the last sweep: right line A + Br*p, left slope Bl. During envelope():
  // an element's envelope is envelope slot Bl shifted by the line A + Br*p.
  std::vector<int64_t> A_, Br_, Bl_;
};

} // namespace infracc::sens
