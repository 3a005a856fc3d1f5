// The event engines. Both follow their reference's main loop statement by statement
// (spcl/LogGOPSim src/LogGOPSim/LogGOPSim.cpp and spcl/atlahs sim/LogGOPSim/
// LogGOPSim.cpp); the comments name the reference's behaviour where it is surprising.
// Everything per event is preallocated: the heap, the matching-queue pool and the
// buffers of freed ops grow amortised and are reused.
#include "backends/sim/Simulator.h"

#include "backends/sim/EventQueue.h"
#include "backends/sim/MatchQueue.h"
#include "ir/Schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <memory>

namespace infracc::sim {

const char *categoryName(Category c) {
  switch (c) {
  case Category::Computation: return "computation";
  case Category::Overhead: return "overhead";
  case Category::Gap: return "gap";
  case Category::Latency: return "latency";
  case Category::Bandwidth: return "bandwidth";
  case Category::Wait: return "wait";
  }
  return "?";
}

const char *viaName(Via v) {
  switch (v) {
  case Via::Start: return "start";
  case Via::Cpu: return "cpu";
  case Via::Nic: return "nic";
  case Via::Arrival: return "arrival";
  case Via::Dependency: return "dependency";
  }
  return "?";
}

static std::string opName(const Schedule &s, uint32_t rank, uint32_t g) {
  uint32_t local = g - s.rankBegin(rank);
  std::string label = s.label(g);
  if (!label.empty())
    return fmt::format("rank {}, {} (op {})", rank, label, local);
  return fmt::format("rank {}, op {}", rank, local);
}

llvm::Error checkSimulatable(const Schedule &s) {
  const uint32_t P = s.numRanks();
  for (uint32_t r = 0; r < P; ++r) {
    uint32_t end = s.rankBegin(r) + s.numOps(r);
    for (uint32_t g = s.rankBegin(r); g < end; ++g) {
      OpKind k = s.kind(g);
      if (!isGoalCoreKind(k))
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            opName(s, r, g) + ": '" + opKindName(k).str() +
                "' is not lowered; the simulator runs send, recv and calc only (add " +
                loweringPassFor(k).str() + " to -passes)");
      bool badPeer = (k == OpKind::Send && s.peer(g) >= P) ||
                     (k == OpKind::Recv && s.peer(g) >= P && s.peer(g) != AnySource);
      if (badPeer)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            fmt::format("{}: {} rank {}, but the schedule has {} ranks (0..{})", opName(s, r, g),
                        k == OpKind::Send ? "send to" : "recv from", s.peer(g), P, P - 1));
    }
  }
  return llvm::Error::success();
}

namespace {

enum class OpState : uint8_t { Waiting, Queued, Started, Done };
constexpr uint32_t NoAct = 0xFFFFFFFFu;
// How many events ahead to prefetch (measured on 1024-rank allreduces: 5 to 16 and 2
// to 8 do about equally well).
constexpr size_t PrefetchFar = 8, PrefetchNear = 2;

/// What the event loop needs of an op, in one place: the schedule's fields live in
/// separate arrays, and touching six of them per event costs six cache misses on
/// large schedules.
/// Aligned so that no record straddles two cache lines (malloc's large blocks start 16
/// bytes into a page, which made every other record cost two misses).
struct alignas(32) OpRec {
  uint64_t size;
  uint32_t peer, tag;
  uint32_t succBegin;   // first successor in the schedule's successor array
  uint32_t remaining;   // dependencies not yet satisfied
  uint16_t cpu, nic;
  OpKind kind;
  OpState state;
  uint8_t hasIRequires;   // some successor irequires this op
  uint8_t numSucc;        // successors; ManySucc: see the next record's succBegin
  static constexpr uint8_t ManySucc = 0xFF;
};
static_assert(sizeof(OpRec) == 32);

struct Freed {
  uint32_t rank, op;
};
/// atlahs only, parallel to the freed ops: the finish time of the latest
/// requires-predecessor (0 when freed by irequires) and the activity that gave it.
struct Carried {
  uint64_t start;
  uint32_t pred;
};

class EventEngine {
public:
  EventEngine(const Schedule &s, const SimOptions &opt)
      : s_(s), opt_(opt), p_(opt.params), P_(s.numRanks()), C_(s.maxCpu() + 1),
        N_(s.maxNic() + 1), numOps_(s.numOps()), rq_(P_, opt.engine == Engine::Atlahs),
        uq_(P_, opt.engine == Engine::Atlahs) {}

  SimResult run();

private:
  // --- shared helpers ---------------------------------------------------------------
  uint64_t &cpuClock(uint32_t rank, uint32_t cpu) { return nexto_[size_t(rank) * C_ + cpu]; }
  uint64_t &sendGap(uint32_t rank, uint32_t nic) { return nextgs_[size_t(rank) * N_ + nic]; }
  uint64_t &recvGap(uint32_t rank, uint32_t nic) { return nextgr_[size_t(rank) * N_ + nic]; }
  uint32_t &cpuOwner(uint32_t rank, uint32_t cpu) { return ownO_[size_t(rank) * C_ + cpu]; }
  uint32_t &sendOwner(uint32_t rank, uint32_t nic) { return ownGs_[size_t(rank) * N_ + nic]; }
  uint32_t &recvOwner(uint32_t rank, uint32_t nic) { return ownGr_[size_t(rank) * N_ + nic]; }

  PairCost pairCost(uint32_t src, uint32_t dst, uint32_t sendOp) const {
    if (opt_.costs)
      return opt_.costs->costOfSend(src, dst, sendOp);
    return PairCost{p_.L, p_.G};
  }
  uint32_t msgAct(uint32_t sendOp) const { return static_cast<uint32_t>(numOps_ + sendOp); }

  llvm::ArrayRef<uint32_t> successors(uint32_t g) const {
    // Usually without touching the next record (often another cache line).
    const OpRec &o = ops_[g];
    uint32_t n = o.numSucc != OpRec::ManySucc ? o.numSucc : ops_[g + 1].succBegin - o.succBegin;
    return {succBase_ + o.succBegin, n};
  }

  /// LogGOPSim's MarkNodeAsStarted: frees irequires-successors whose count drops to 0.
  template <bool Carry> void markStarted(uint32_t rank, uint32_t g) {
    if (!ops_[g].hasIRequires)
      return;
    uint32_t base = s_.rankBegin(rank);
    for (uint32_t raw : successors(g)) {
      if (!(raw & Schedule::IRequiresBit))
        continue;
      uint32_t succ = base + (raw & ~Schedule::IRequiresBit);
      if (--ops_[succ].remaining == 0) {
        freed_.push_back({rank, succ});
        if constexpr (Carry)
          carried_.push_back({0, NoAct});
      }
    }
  }

  /// MarkNodeAsDone: frees requires-successors. `finish`/`act` feed ATLAHS's carried
  /// start times (and the critical path). Counters are uint32 and wrap like the
  /// reference's when an op is marked done twice (a send whose recv declares a size on
  /// the other side of S).
  template <bool Carry>
  void markDone(uint32_t rank, uint32_t g, uint64_t finish = 0, uint32_t act = NoAct) {
    if (ops_[g].state != OpState::Done) {
      ops_[g].state = OpState::Done;
      ++res_.opsDone;
    }
    uint32_t base = s_.rankBegin(rank);
    for (uint32_t raw : successors(g)) {
      if (raw & Schedule::IRequiresBit)
        break;   // requires-successors come first
      uint32_t succ = base + raw;
      if constexpr (Carry) {
        // The first finish time, then the max (ATLAHS's node_start_time map).
        if (depPred_[succ] == NoAct || finish > depStart_[succ]) {
          depStart_[succ] = finish;
          depPred_[succ] = act;
        }
      }
      if (--ops_[succ].remaining == 0) {
        freed_.push_back({rank, succ});
        if constexpr (Carry)
          carried_.push_back({depStart_[succ], depPred_[succ]});
      }
    }
  }

  void setCause(uint32_t act, uint32_t pred, Via via) {
    actPred_[act] = pred;
    actVia_[act] = pred == NoAct ? Via::Start : via;
  }
  /// The cause of a time that is the max of candidate clocks: the first candidate with
  /// the largest value.
  void causeOfMax(uint32_t act, uint64_t v1, uint32_t o1, Via w1, uint64_t v2, uint32_t o2,
                  Via w2) {
    if (v1 >= v2)
      setCause(act, o1, w1);
    else
      setCause(act, o2, w2);
  }

  void addInterval(uint32_t rank, uint32_t op, uint32_t unit, Resource res, IntervalKind k,
                   uint64_t start, uint64_t end) {
    opt_.trace->intervals.push_back({start, end, rank, op, unit, res, k});
  }
  TraceMessage &traceMessage(uint32_t sendOp) { return opt_.trace->messages[traceMsg_[sendOp]]; }

  void sortByKind(std::vector<uint32_t> &v) const {
    // LogGOPSim: std::sort(free_ops, gnp_op_comp_func()) - libstdc++ introsort, NOT
    // stable beyond 16 elements; the same call on the same sequence gives the same
    // permutation.
    std::sort(v.begin(), v.end(),
              [this](uint32_t a, uint32_t b) { return ops_[a].kind < ops_[b].kind; });
  }

  /// The event loop waits on memory: the records of ops that become executable were
  /// last touched long ago (set-up), and a message finds a recv posted long ago. Start
  /// loading the records an upcoming event needs: far ahead its op (and the next one,
  /// often its successor), nearer its successor list and, for a message, the recv it
  /// will likely match (both need the op's record, which should have arrived by then).
  /// (always_inline: GCC deems a function of prefetches alone free of effects and
  /// drops the call.)
  template <class Queue> [[gnu::always_inline]] void prefetchAhead(const Queue &heap) const {
    if (const Event *far = heap.peek(PrefetchFar)) {
      __builtin_prefetch(&ops_[far->op]);
      __builtin_prefetch(&ops_[far->op + 1]);
    }
    if (const Event *near = heap.peek(PrefetchNear)) {
      const OpRec &o = ops_[near->op];
      __builtin_prefetch(succBase_ + o.succBegin);
      if (near->isMessage()) {
        uint32_t r = rq_.likelyOp(o.peer);
        if (r != MatchQueues::None)
          __builtin_prefetch(&ops_[r]);
      }
    }
  }

  /// A rank mostly works through its ops in order, far apart in time from the other
  /// ranks' ops: when op g becomes executable, fetch the rank's next records and
  /// successor entries (a software stream prefetch per rank).
  [[gnu::always_inline]] void prefetchRankAhead(uint32_t g) const {
    uint64_t next = std::min<uint64_t>(g + 2, numOps_);   // the next cache line of records
    __builtin_prefetch(&ops_[next]);
  }

  // --- shared by both engines ---------------------------------------------------------
  /// The main loop: roots first, then events in time order until none is left.
  template <bool Rec, bool Atlahs> void runEngine();
  /// The ops without dependencies, rank by rank in index order (LogGOPSim sorts each
  /// rank's by kind, ATLAHS does not).
  template <bool Rec, bool SortByKind, class Queue> void pushRoots(Queue &heap);
  /// A calc: the same rule in both engines, ATLAHS also carries its finish time.
  template <bool Rec, bool Carry, class Queue> void calc(Queue &heap, Event e);
  /// An event whose resource is busy goes back into the queue at `until`.
  template <class Queue> void reinsert(Queue &heap, Event e, uint64_t until) {
    e.time = until;
    heap.push(e);
    ++res_.reinsertions;
  }
  /// The sender of a rendezvous message is released by the receive: its cpu and send
  /// gap clocks move forward to the receive (never back), caused by `act`.
  template <bool Rec>
  void releaseSender(uint32_t src, uint32_t c, uint32_t n, uint64_t cpuAt, uint64_t nicAt,
                     uint32_t act);
  /// Bookkeeping of a started send: critical-path causes and the trace.
  template <bool Rec>
  void recordSend(uint32_t h, uint32_t g, uint32_t d, uint64_t bytes, uint64_t t,
                  uint64_t cpuEnd, uint64_t nicEnd, uint64_t arrival, bool eager);
  /// Bookkeeping of a receive charged on rank d (activity `act`, the intervals drawn
  /// for op `shownOp`); `recvOp` is NoAct when the message has not matched a recv yet.
  template <bool Rec>
  void recordReceive(uint32_t d, uint32_t c, uint32_t n, uint32_t act, uint32_t shownOp,
                     uint32_t sendOp, uint32_t recvOp, uint64_t t, uint64_t cpuEnd,
                     uint64_t nicEnd);

  // --- LogGOPSim v1 ------------------------------------------------------------------
  template <bool Rec> void lgsSend(EventQueue &heap, Event e);
  template <bool Rec> void lgsRecv(Event e);
  template <bool Rec> void lgsMessage(EventQueue &heap, Event e);
  template <bool Rec> void lgsPushFreed(EventQueue &heap);

  // --- ATLAHS ------------------------------------------------------------------------
  template <bool Rec> void atlahsSend(TimeOnlyHeap &heap, Event e);
  template <bool Rec> void atlahsRecv(Event e);
  template <bool Rec> void atlahsMessage(TimeOnlyHeap &heap, Event e);
  template <bool Rec> void atlahsPushFreed(TimeOnlyHeap &heap);
  void touch(uint32_t rank) {
    // ATLAHS collects the hosts to visit in an std::unordered_set<int>; with the at most
    // two distinct hosts an event touches, libstdc++ iterates them in reverse order of
    // first insertion.
    if (numTouched_ == 0 || (touched_[0] != rank && (numTouched_ == 1 || touched_[1] != rank))) {
      assert(numTouched_ < 2 && "an event touches at most two ranks");
      touched_[numTouched_++] = rank;
    }
  }

  void collectStuck();
  void extractCriticalPath();

  const Schedule &s_;
  const SimOptions &opt_;
  const LogGPParams &p_;
  const uint32_t P_, C_, N_;
  const uint64_t numOps_;
  bool recording_ = false;

  std::unique_ptr<OpRec[]> ops_;   // numOps + 1 (the last only ends the successor ranges)
  const uint32_t *succBase_ = nullptr;
  std::vector<uint64_t> nexto_, nextgs_, nextgr_;
  MatchQueues rq_, uq_;
  std::vector<Freed> freed_;
  std::vector<Carried> carried_;
  std::vector<uint32_t> scratch_;
  uint64_t seq_ = 0;
  SimResult res_;

  // ATLAHS carried start times.
  std::vector<uint64_t> depStart_;
  std::vector<uint32_t> depPred_;
  uint32_t touched_[2] = {0, 0};
  unsigned numTouched_ = 0;
  double fctSum_ = 0;

  // Critical path: per activity (op g, or message numOps+g) its start and cause; per
  // clock the activity that set it last.
  std::vector<uint64_t> actStart_;
  std::vector<uint32_t> actPred_;
  std::vector<Via> actVia_;
  std::vector<uint32_t> ownO_, ownGs_, ownGr_;
  std::vector<uint32_t> traceMsg_;
};

// =====================================================================================
// Shared by both engines
// =====================================================================================

template <bool Rec, bool SortByKind, class Queue> void EventEngine::pushRoots(Queue &heap) {
  for (uint32_t h = 0; h < P_; ++h) {
    scratch_.clear();
    uint32_t end = s_.rankBegin(h) + s_.numOps(h);
    for (uint32_t g = s_.rankBegin(h); g < end; ++g)
      if (ops_[g].remaining == 0)
        scratch_.push_back(g);
    if (SortByKind && scratch_.size() > 1)
      sortByKind(scratch_);
    for (uint32_t g : scratch_) {
      ops_[g].state = OpState::Queued;
      heap.push({0, seq_++, g, h});
      if constexpr (Rec)
        setCause(g, NoAct, Via::Start);
    }
  }
}

template <bool Rec, bool Atlahs> void EventEngine::runEngine() {
  std::conditional_t<Atlahs, TimeOnlyHeap, EventQueue> heap;
  heap.reserve(size_t(P_) * 4);
  pushRoots<Rec, /*SortByKind=*/!Atlahs>(heap);
  while (!heap.empty() && !res_.aborted) {
    Event e = heap.pop();
    if constexpr (Atlahs) {
      numTouched_ = 0;
    } else {
      prefetchAhead(heap);
    }
    if (e.isMessage()) {
      if constexpr (Atlahs)
        atlahsMessage<Rec>(heap, e);
      else
        lgsMessage<Rec>(heap, e);
    } else if (ops_[e.op].kind == OpKind::Calc) {
      calc<Rec, /*Carry=*/Atlahs>(heap, e);
    } else if (ops_[e.op].kind == OpKind::Send) {
      if constexpr (Atlahs)
        atlahsSend<Rec>(heap, e);
      else
        lgsSend<Rec>(heap, e);
    } else {
      if constexpr (Atlahs)
        atlahsRecv<Rec>(e);
      else
        lgsRecv<Rec>(e);
    }
    if (!freed_.empty()) {
      if constexpr (Atlahs)
        atlahsPushFreed<Rec>(heap);
      else
        lgsPushFreed<Rec>(heap);
    }
  }
}

template <bool Rec, bool Carry, class Queue> void EventEngine::calc(Queue &heap, Event e) {
  const uint32_t g = e.op, h = e.rank(), c = ops_[g].cpu;
  uint64_t &clk = cpuClock(h, c);
  if (clk > e.time) {
    if constexpr (Rec)
      setCause(g, cpuOwner(h, c), Via::Cpu);
    reinsert(heap, e, clk);
    return;
  }
  clk = e.time + ops_[g].size;
  if constexpr (Rec) {
    actStart_[g] = e.time;
    cpuOwner(h, c) = g;
    if (opt_.trace)
      addInterval(h, g, c, Resource::Cpu, IntervalKind::Compute, e.time, clk);
  }
  ops_[g].state = OpState::Started;
  markStarted<Carry>(h, g);
  markDone<Carry>(h, g, clk, g);
  if constexpr (Carry)
    touch(h);
}

template <bool Rec>
void EventEngine::releaseSender(uint32_t src, uint32_t c, uint32_t n, uint64_t cpuAt,
                                uint64_t nicAt, uint32_t act) {
  if (cpuClock(src, c) < cpuAt) {
    cpuClock(src, c) = cpuAt;
    if constexpr (Rec)
      cpuOwner(src, c) = act;
  }
  if (sendGap(src, n) < nicAt) {
    sendGap(src, n) = nicAt;
    if constexpr (Rec)
      sendOwner(src, n) = act;
  }
}

template <bool Rec>
void EventEngine::recordSend(uint32_t h, uint32_t g, uint32_t d, uint64_t bytes, uint64_t t,
                             uint64_t cpuEnd, uint64_t nicEnd, uint64_t arrival, bool eager) {
  if constexpr (Rec) {
    const uint32_t c = ops_[g].cpu, n = ops_[g].nic;
    actStart_[g] = t;
    cpuOwner(h, c) = g;
    sendOwner(h, n) = g;
    setCause(msgAct(g), g, Via::Arrival);
    if (opt_.trace) {
      addInterval(h, g, c, Resource::Cpu, IntervalKind::SendOverhead, t, cpuEnd);
      addInterval(h, g, n, Resource::NicSend, IntervalKind::SendGap, t, nicEnd);
      traceMsg_[g] = static_cast<uint32_t>(opt_.trace->messages.size());
      TraceMessage m;
      m.sendOp = g;
      m.src = h;
      m.dst = d;
      m.bytes = bytes;
      m.sendStart = t;
      m.arrival = arrival;
      m.rendezvous = !eager;
      opt_.trace->messages.push_back(m);
    }
  }
}

template <bool Rec>
void EventEngine::recordReceive(uint32_t d, uint32_t c, uint32_t n, uint32_t act,
                                uint32_t shownOp, uint32_t sendOp, uint32_t recvOp, uint64_t t,
                                uint64_t cpuEnd, uint64_t nicEnd) {
  if constexpr (Rec) {
    cpuOwner(d, c) = act;
    recvOwner(d, n) = act;
    if (opt_.trace) {
      addInterval(d, shownOp, c, Resource::Cpu, IntervalKind::RecvOverhead, t, cpuEnd);
      addInterval(d, shownOp, n, Resource::NicRecv, IntervalKind::RecvGap, t, nicEnd);
      TraceMessage &tm = traceMessage(sendOp);
      if (recvOp != NoAct)
        tm.recvOp = recvOp;
      tm.received = t;
      tm.completed = cpuEnd;
    }
  }
}

// =====================================================================================
// LogGOPSim v1
// =====================================================================================

template <bool Rec> void EventEngine::lgsSend(EventQueue &heap, Event e) {
  const uint32_t g = e.op, h = e.rank(), c = ops_[g].cpu, n = ops_[g].nic, d = ops_[g].peer;
  const uint64_t bytes = ops_[g].size, t = e.time;
  uint64_t &co = cpuClock(h, c), &cg = sendGap(h, n);
  if (std::max(co, cg) <= t) {
    ops_[g].state = OpState::Started;
    markStarted<false>(h, g);
    PairCost pc = pairCost(h, d, g);
    co = t + p_.o + p_.O.forMessage(bytes);
    cg = t + p_.g + pc.G.forMessage(bytes);
    // The message event: first byte at t + o + L; G is charged at the receiver.
    heap.push({t + p_.o + pc.L, seq_++, g, h | Event::MessageBit});
    ++res_.messages;
    res_.bytes += bytes;
    bool eager = bytes <= p_.S;
    recordSend<Rec>(h, g, d, bytes, t, co, cg, t + p_.o + pc.L, eager);
    if (eager) {
      ++res_.eager;
      markDone<false>(h, g);
    } else {
      ++res_.rendezvous;
    }
  } else {
    if constexpr (Rec)
      causeOfMax(g, co, cpuOwner(h, c), Via::Cpu, cg, sendOwner(h, n), Via::Nic);
    reinsert(heap, e, std::max(co, cg));
  }
}

template <bool Rec> void EventEngine::lgsRecv(Event e) {
  // Posting a recv costs nothing and needs no free resource.
  const uint32_t g = e.op, h = e.rank();
  const uint64_t t = e.time;
  ops_[g].state = OpState::Started;
  markStarted<false>(h, g);
  if constexpr (Rec)
    actStart_[g] = t;
  MatchQueues::Entry m;
  if (uq_.take(h, ops_[g].peer, ops_[g].tag, m)) {
    // The message's o and G were charged when it arrived. The eager/rendezvous decision
    // uses the RECV's size, and the sender's clocks are raised with the recv's indices.
    if (ops_[g].size > p_.S) {
      const uint32_t src = m.src, c = ops_[g].cpu, n = ops_[g].nic;
      markDone<false>(src, m.op);
      releaseSender<Rec>(src, c, n, t, t, g);
    }
    if constexpr (Rec) {
      if (opt_.trace) {
        TraceMessage &tm = traceMessage(m.op);
        tm.recvOp = g;
        tm.completed = std::max(tm.completed, t);
      }
    }
    markDone<false>(h, g);
  } else {
    rq_.append(h, g, ops_[g].peer, ops_[g].tag, t);
  }
}

template <bool Rec> void EventEngine::lgsMessage(EventQueue &heap, Event e) {
  const uint32_t g = e.op, src = e.rank(), d = ops_[g].peer, c = ops_[g].cpu, n = ops_[g].nic;
  const uint64_t bytes = ops_[g].size, t = e.time;
  // The receiver is charged on the SENDER's cpu and nic indices.
  uint64_t &co = cpuClock(d, c), &cr = recvGap(d, n);
  if (std::max(co, cr) <= t) {
    PairCost pc = pairCost(src, d, g);
    uint64_t cG = pc.G.forMessage(bytes), cO = p_.O.forMessage(bytes);
    co = t + p_.o + std::max(cO, cG);
    cr = t + p_.g + cG;
    const uint32_t act = msgAct(g);
    if constexpr (Rec)
      actStart_[act] = t;
    recordReceive<Rec>(d, c, n, act, g, g, NoAct, t, co, cr);
    MatchQueues::Entry r;
    if (rq_.take(d, src, ops_[g].tag, r)) {
      if (bytes > p_.S) {
        // Rendezvous: the send completes now; the sender's clocks jump to now (no ack).
        markDone<false>(src, g);
        releaseSender<Rec>(src, c, n, t, t, act);
      }
      if constexpr (Rec)
        if (opt_.trace)
          traceMessage(g).recvOp = r.op;
      markDone<false>(d, r.op);
    } else {
      uq_.append(d, g, src, ops_[g].tag, t);
    }
  } else {
    if constexpr (Rec)
      causeOfMax(msgAct(g), co, cpuOwner(d, c), Via::Cpu, cr, recvOwner(d, n), Via::Nic);
    reinsert(heap, e, std::max(co, cr));
  }
}

template <bool Rec> void EventEngine::lgsPushFreed(EventQueue &heap) {
  // Hosts in ascending order; each host's freed ops in the order they were freed,
  // then sorted by type (send < recv < calc). Their time is the host's clock now: the
  // predecessor's finish time is not carried over.
  while (!freed_.empty()) {
    uint32_t h = freed_.front().rank;
    bool oneHost = true;
    for (const Freed &f : freed_) {
      oneHost &= f.rank == h;
      h = std::min(h, f.rank);
    }
    scratch_.clear();
    if (oneHost) {
      for (const Freed &f : freed_)
        scratch_.push_back(f.op);
      freed_.clear();
    } else {
      size_t keep = 0;
      for (size_t i = 0; i < freed_.size(); ++i) {
        if (freed_[i].rank == h)
          scratch_.push_back(freed_[i].op);
        else
          freed_[keep++] = freed_[i];
      }
      freed_.erase(freed_.begin() + keep, freed_.end());
    }
    if (scratch_.size() > 1)
      sortByKind(scratch_);
    for (uint32_t g : scratch_) {
      const uint32_t c = ops_[g].cpu;
      uint64_t t = cpuClock(h, c);
      if (ops_[g].kind == OpKind::Send) {
        const uint32_t n = ops_[g].nic;
        if constexpr (Rec)
          causeOfMax(g, t, cpuOwner(h, c), Via::Cpu, sendGap(h, n), sendOwner(h, n), Via::Nic);
        t = std::max(t, sendGap(h, n));
      } else if constexpr (Rec) {
        setCause(g, cpuOwner(h, c), Via::Cpu);
      }
      ops_[g].state = OpState::Queued;
      heap.push({t, seq_++, g, h});
      prefetchRankAhead(g);
    }
  }
}

// =====================================================================================
// ATLAHS
// =====================================================================================

template <bool Rec> void EventEngine::atlahsSend(TimeOnlyHeap &heap, Event e) {
  const uint32_t g = e.op, h = e.rank(), c = ops_[g].cpu, n = ops_[g].nic, d = ops_[g].peer;
  const uint64_t t = e.time;
  uint64_t &co = cpuClock(h, c), &cg = sendGap(h, n);
  uint64_t ready = std::max(co, cg);
  if (ready <= t) {
    ops_[g].state = OpState::Started;
    markStarted<true>(h, g);
    touch(h);
    const uint64_t bytes = std::max<uint64_t>(ops_[g].size, 1);   // ATLAHS: 0 bytes -> 1
    PairCost pc = pairCost(h, d, g);
    uint64_t cpuTime = t + p_.o + p_.O.forMessage(bytes);
    co = cpuTime;
    uint64_t bw = pc.G.forMessage(bytes);
    cg = t + p_.g + bw;
    // G is charged on the sending side: the message arrives after o, L and (s-1)G.
    uint64_t arrival = cpuTime + pc.L + bw;
    heap.push({arrival, seq_++, g, h | Event::MessageBit});
    ++res_.messages;
    res_.bytes += ops_[g].size;
    // ATLAHS keeps the sizes in a vector<int> for its "Average FCT".
    fctSum_ += static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(bytes))) * 8 / 200;
    bool eager = bytes <= p_.S;
    recordSend<Rec>(h, g, d, ops_[g].size, t, co, cg, arrival, eager);
    if (eager) {
      ++res_.eager;
      markDone<true>(h, g, cpuTime, g);
    } else {
      ++res_.rendezvous;
    }
  } else {
    if constexpr (Rec)
      causeOfMax(g, co, cpuOwner(h, c), Via::Cpu, cg, sendOwner(h, n), Via::Nic);
    reinsert(heap, e, ready);
  }
}

template <bool Rec> void EventEngine::atlahsRecv(Event e) {
  const uint32_t g = e.op, h = e.rank(), c = ops_[g].cpu, n = ops_[g].nic;
  const uint64_t t = e.time;
  ops_[g].state = OpState::Started;
  markStarted<true>(h, g);
  touch(h);
  if constexpr (Rec)
    actStart_[g] = t;
  const uint64_t bytes = std::max<uint64_t>(ops_[g].size, 1);
  MatchQueues::Entry m;
  if (uq_.take(h, ops_[g].peer, ops_[g].tag, m)) {
    if (t < m.time) {
      res_.aborted = true;
      res_.abort = {h, g, m.src, m.op, t, m.time};
      return;
    }
    // ATLAHS reads the SEND gap clock here (nextgs), and sets the CPU clock even if
    // that moves it backwards.
    uint64_t nicTime = std::max(sendGap(h, n), t) + p_.g;
    uint64_t cpuTime = nicTime + p_.o + p_.O.forMessage(bytes);
    if constexpr (Rec) {
      if (sendGap(h, n) > t) {
        actStart_[g] = sendGap(h, n);
        setCause(g, sendOwner(h, n), Via::Nic);
      }
    }
    recordReceive<Rec>(h, c, n, g, g, m.op, g, t, cpuTime, nicTime);
    cpuClock(h, c) = cpuTime;
    recvGap(h, n) = nicTime;
    if (bytes > p_.S) {
      markDone<true>(m.src, m.op, cpuTime, g);
      touch(m.src);
      releaseSender<Rec>(m.src, c, n, cpuTime, nicTime, g);
    }
    markDone<true>(h, g, cpuTime, g);
    touch(h);
  } else {
    rq_.append(h, g, ops_[g].peer, ops_[g].tag, t);
  }
}

template <bool Rec> void EventEngine::atlahsMessage(TimeOnlyHeap &heap, Event e) {
  const uint32_t g = e.op, src = e.rank(), d = ops_[g].peer, n = ops_[g].nic;
  const uint64_t t = e.time;
  MatchQueues::Entry r;
  if (!rq_.take(d, src, ops_[g].tag, r)) {
    uq_.append(d, g, src, ops_[g].tag, t);   // nothing is charged for an unexpected message
    return;
  }
  // Charged on the posted recv's cpu, but on the sender's nic index.
  const uint32_t c = ops_[r.op].cpu;
  const uint64_t bytes = std::max<uint64_t>(ops_[g].size, 1);
  uint64_t ready = std::max(cpuClock(d, c), recvGap(d, n));
  if (ready > t) {
    if constexpr (Rec)
      causeOfMax(msgAct(g), cpuClock(d, c), cpuOwner(d, c), Via::Cpu, recvGap(d, n),
                 recvOwner(d, n), Via::Nic);
    reinsert(heap, e, ready);
    rq_.append(d, r.op, r.src, r.tag, r.time);   // the recv goes to the back of its queue
    return;
  }
  uint64_t nicTime = std::max(recvGap(d, n), t) + p_.g;
  uint64_t cpuTime = nicTime + p_.o + p_.O.forMessage(bytes);
  cpuClock(d, c) = cpuTime;
  recvGap(d, n) = nicTime;
  const uint32_t act = msgAct(g);
  if constexpr (Rec)
    actStart_[act] = t;
  recordReceive<Rec>(d, c, n, act, g, g, r.op, t, cpuTime, nicTime);
  if (bytes > p_.S) {
    // Rendezvous: the sender is released when the receive completes.
    markDone<true>(src, g, cpuTime, act);
    touch(src);
    releaseSender<Rec>(src, ops_[g].cpu, n, cpuTime, nicTime, act);
  }
  markDone<true>(d, r.op, cpuTime, act);
  touch(d);
}

template <bool Rec> void EventEngine::atlahsPushFreed(TimeOnlyHeap &heap) {
  // Hosts in the order ATLAHS's unordered_set yields them; ops in release order, not
  // sorted. Times: calc max(start, cpu clock), send max(start, send gap), recv start.
  for (unsigned i = numTouched_; i-- > 0;) {
    const uint32_t h = touched_[i];
    for (size_t j = 0; j < freed_.size(); ++j) {
      if (freed_[j].rank != h)
        continue;
      const uint32_t g = freed_[j].op;
      const Carried &f = carried_[j];
      uint64_t t = f.start;
      OpKind k = ops_[g].kind;
      if (k == OpKind::Calc) {
        uint32_t c = ops_[g].cpu;
        if constexpr (Rec)
          causeOfMax(g, t, f.pred, Via::Dependency, cpuClock(h, c), cpuOwner(h, c), Via::Cpu);
        t = std::max(t, cpuClock(h, c));
      } else if (k == OpKind::Send) {
        uint32_t n = ops_[g].nic;
        if constexpr (Rec)
          causeOfMax(g, t, f.pred, Via::Dependency, sendGap(h, n), sendOwner(h, n), Via::Nic);
        t = std::max(t, sendGap(h, n));
      } else if constexpr (Rec) {
        setCause(g, f.pred, Via::Dependency);
      }
      ops_[g].state = OpState::Queued;
      heap.push({t, seq_++, g, h});
    }
  }
  freed_.clear();
  carried_.clear();
}

// =====================================================================================

void EventEngine::collectStuck() {
  // Every op done (so no recv is still posted) and no message left over: nothing is
  // stuck, and the per-op scan below can be skipped.
  if (res_.opsDone == numOps_) {
    bool leftover = false;
    for (uint32_t r = 0; r < P_ && !leftover; ++r)
      leftover = uq_.size(r) != 0;
    if (!leftover)
      return;
  }
  std::vector<uint32_t> totalDeps;
  for (uint32_t r = 0; r < P_; ++r) {
    const uint32_t begin = s_.rankBegin(r), end = begin + s_.numOps(r);
    bool haveWaiting = false;
    for (uint32_t g = begin; g < end && !haveWaiting; ++g)
      haveWaiting = ops_[g].state == OpState::Waiting;
    if (haveWaiting) {
      totalDeps.assign(end - begin, 0);
      for (uint32_t g = begin; g < end; ++g)
        for (uint32_t raw : s_.successorsRaw(g))
          ++totalDeps[raw & ~Schedule::IRequiresBit];
    }
    std::vector<MatchQueues::Entry> posted, unexpected;
    if (rq_.size(r))
      posted = rq_.entries(r);
    if (uq_.size(r))
      unexpected = uq_.entries(r);
    for (uint32_t g = begin; g < end; ++g) {
      StuckItem item;
      item.rank = r;
      item.op = g;
      switch (ops_[g].state) {
      case OpState::Done:
        continue;
      case OpState::Waiting:
      case OpState::Queued:
        item.why = StuckItem::WaitsForDependencies;
        item.pending = ops_[g].remaining;
        item.total = totalDeps.empty() ? 0 : totalDeps[g - begin];
        break;
      case OpState::Started:
        if (ops_[g].kind != OpKind::Send)
          continue;   // a posted recv: listed below, in posting order
        item.why = StuckItem::RendezvousUnmatched;
        break;
      }
      res_.stuck.push_back(item);
    }
    for (const auto &p : posted) {
      StuckItem item;
      item.why = StuckItem::RecvUnmatched;
      item.rank = r;
      item.op = p.op;
      item.time = p.time;
      res_.stuck.push_back(item);
    }
    for (const auto &u : unexpected) {
      StuckItem item;
      item.why = StuckItem::MessageUnreceived;
      item.rank = r;
      item.op = u.op;
      item.time = u.time;
      res_.stuck.push_back(item);
    }
  }
}

namespace {
struct Phase {
  Category cat;
  int64_t amount;
};
} // namespace

void EventEngine::extractCriticalPath() {
  CriticalPath &cp = res_.criticalPath;
  cp.valid = true;
  if (res_.makespan == 0 || P_ == 0)
    return;
  const uint32_t H = res_.makespanRank;
  uint32_t cStar = 0;
  for (uint32_t c = 1; c < C_; ++c)
    if (cpuClock(H, c) > cpuClock(H, cStar))
      cStar = c;
  const bool atlahs = opt_.engine == sim::Engine::Atlahs;

  uint32_t cur = cpuOwner(H, cStar);
  Via via = Via::Cpu;
  int64_t end = static_cast<int64_t>(res_.makespan);
  std::vector<PathStep> steps;
  llvm::SmallVector<Phase, 4> phases;
  while (cur != NoAct) {
    PathStep st;
    st.via = actVia_[cur];
    const bool isMsg = cur >= numOps_;
    const uint32_t g = isMsg ? static_cast<uint32_t>(cur - numOps_) : cur;
    const uint32_t opRank = s_.rankOf(g);
    const OpKind k = ops_[g].kind;
    const int64_t start = static_cast<int64_t>(actStart_[cur]);
    st.op = g;
    st.start = static_cast<uint64_t>(start);
    st.end = static_cast<uint64_t>(end);
    phases.clear();
    auto add = [&](Category c, uint64_t v) { phases.push_back({c, static_cast<int64_t>(v)}); };
    if (isMsg || k == OpKind::Send) {
      const uint32_t dst = ops_[g].peer;
      PairCost pc = pairCost(opRank, dst, g);
      const uint64_t raw = ops_[g].size;
      const uint64_t bytes = atlahs ? std::max<uint64_t>(raw, 1) : raw;
      const uint64_t cG = pc.G.forMessage(bytes), cO = p_.O.forMessage(bytes);
      if (isMsg) {
        st.kind = StepKind::Message;
        st.rank = dst;
        st.peer = opRank;
        if (atlahs) {
          add(Category::Gap, p_.g);
          if (via != Via::Nic)
            add(Category::Overhead, p_.o + cO);
        } else if (via == Via::Nic) {
          add(Category::Gap, p_.g);
          add(Category::Bandwidth, cG);
        } else {
          add(Category::Overhead, p_.o);
          add(cG >= cO ? Category::Bandwidth : Category::Overhead, std::max(cO, cG));
        }
      } else {
        st.kind = StepKind::Send;
        st.rank = opRank;
        st.peer = dst;
        if (via == Via::Nic) {
          add(Category::Gap, p_.g);
          add(Category::Bandwidth, cG);
        } else if (via == Via::Arrival) {
          add(Category::Overhead, p_.o + (atlahs ? cO : 0));
          add(Category::Latency, pc.L);
          if (atlahs)
            add(Category::Bandwidth, cG);
        } else {
          add(Category::Overhead, p_.o);
          add(Category::Overhead, cO);
        }
      }
    } else if (k == OpKind::Calc) {
      st.kind = StepKind::Calc;
      st.rank = opRank;
      add(Category::Computation, ops_[g].size);
    } else {
      // A recv matched from the unexpected queue: free in LogGOPSim (its message paid
      // on arrival); in ATLAHS it pays g and o here.
      st.kind = StepKind::Recv;
      st.rank = opRank;
      st.peer = ops_[g].peer;
      if (atlahs) {
        const uint64_t bytes = std::max<uint64_t>(ops_[g].size, 1);
        add(Category::Gap, p_.g);
        if (via != Via::Nic)
          add(Category::Overhead, p_.o + p_.O.forMessage(bytes));
      }
    }
    // Fit the phases into [start, end): exact, longer (the rest is waiting), or cut.
    const int64_t len = end - start;
    int64_t sum = 0;
    bool negative = false;
    for (const Phase &ph : phases) {
      sum += ph.amount;
      negative |= ph.amount < 0;
    }
    if (sum == len || (len > sum)) {
      for (const Phase &ph : phases)
        st.amount[unsigned(ph.cat)] += ph.amount;
      if (len > sum)
        st.amount[unsigned(Category::Wait)] += len - sum;
    } else if (!negative && len >= 0) {
      int64_t left = len;
      for (const Phase &ph : phases) {
        int64_t take = std::min(ph.amount, left);
        st.amount[unsigned(ph.cat)] += take;
        left -= take;
      }
    } else {
      st.amount[unsigned(Category::Wait)] += len;
    }
    steps.push_back(st);
    via = actVia_[cur];
    end = start;
    cur = actPred_[cur];
  }
  if (end != 0 && !steps.empty())
    steps.back().amount[unsigned(Category::Wait)] += end;   // time before the first step
  std::reverse(steps.begin(), steps.end());
  for (const PathStep &st : steps)
    for (unsigned c = 0; c < NumCategories; ++c)
      cp.total[c] += st.amount[c];
  cp.steps = std::move(steps);
}

SimResult EventEngine::run() {
  res_.engine = opt_.engine;
  res_.numRanks = P_;
  res_.numCpus = C_;
  res_.numNics = N_;
  recording_ = opt_.criticalPath || opt_.trace;
  if (opt_.criticalPath && numOps_ >= 0x7FFFFFFFull)
    recording_ = opt_.trace != nullptr;   // activity ids would not fit; no path

  // Filled rank by rank, without zeroing first: a rank's records stay in cache while
  // its dependency counts are added up.
  ops_.reset(new OpRec[numOps_ + 1]);
  succBase_ = numOps_ ? s_.successorsRaw(0).data() : nullptr;
  uint32_t succAt = 0;
  for (uint32_t r = 0; r < P_; ++r) {
    const uint32_t base = s_.rankBegin(r), end = base + s_.numOps(r);
    for (uint32_t g = base; g < end; ++g)
      ops_[g].remaining = 0;
    for (uint32_t g = base; g < end; ++g) {
      OpRec &o = ops_[g];
      o.size = s_.size(g);
      o.peer = s_.peer(g);
      o.tag = s_.tag(g);
      o.succBegin = succAt;
      o.cpu = static_cast<uint16_t>(s_.cpu(g));
      o.nic = static_cast<uint16_t>(s_.nic(g));
      o.kind = s_.kind(g);
      o.state = OpState::Waiting;
      uint8_t irequires = 0;
      llvm::ArrayRef<uint32_t> succ = s_.successorsRaw(g);
      for (uint32_t raw : succ) {
        irequires |= (raw & Schedule::IRequiresBit) != 0;
        ++ops_[base + (raw & ~Schedule::IRequiresBit)].remaining;
      }
      o.hasIRequires = irequires;
      o.numSucc = static_cast<uint8_t>(std::min<size_t>(succ.size(), OpRec::ManySucc));
      succAt += static_cast<uint32_t>(succ.size());
    }
  }
  ops_[numOps_] = OpRec{};
  ops_[numOps_].succBegin = succAt;
  nexto_.assign(size_t(P_) * C_, 0);
  nextgs_.assign(size_t(P_) * N_, 0);
  nextgr_.assign(size_t(P_) * N_, 0);
  freed_.reserve(64);
  carried_.reserve(64);
  scratch_.reserve(64);
  if (opt_.engine == sim::Engine::Atlahs) {
    depStart_.assign(numOps_, 0);
    depPred_.assign(numOps_, NoAct);
  }
  if (recording_) {
    actStart_.assign(2 * numOps_, 0);
    actPred_.assign(2 * numOps_, NoAct);
    actVia_.assign(2 * numOps_, Via::Start);
    ownO_.assign(size_t(P_) * C_, NoAct);
    ownGs_.assign(size_t(P_) * N_, NoAct);
    ownGr_.assign(size_t(P_) * N_, NoAct);
    if (opt_.trace)
      traceMsg_.assign(numOps_, 0);
  }

  auto t0 = std::chrono::steady_clock::now();
  if (opt_.engine == sim::Engine::Atlahs) {
    if (recording_)
      runEngine<true, true>();
    else
      runEngine<false, true>();
  } else {
    if (recording_)
      runEngine<true, false>();
    else
      runEngine<false, false>();
  }
  res_.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res_.events = seq_;
  res_.atlahsAverageFct = fctSum_ / static_cast<double>(res_.messages);

  res_.cpuFinish = nexto_;
  res_.hostFinish.assign(P_, 0);
  for (uint32_t r = 0; r < P_; ++r) {
    uint64_t m = 0;
    for (uint32_t c = 0; c < C_; ++c)
      m = std::max(m, cpuClock(r, c));
    res_.hostFinish[r] = m;
    if (m > res_.makespan) {
      res_.makespan = m;
      res_.makespanRank = r;
    }
  }
  if (!res_.aborted)
    collectStuck();
  if (opt_.criticalPath && recording_ && res_.finished())
    extractCriticalPath();
  return std::move(res_);
}

} // namespace

SimResult simulate(const Schedule &s, const SimOptions &opts) {
  EventEngine e(s, opts);
  return e.run();
}

} // namespace infracc::sim
