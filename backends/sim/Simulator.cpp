// The event engines. Both follow their reference's main loop statement by statement
// (spcl/LogGOPSim src/LogGOPSim/LogGOPSim.cpp and spcl/atlahs sim/LogGOPSim/
// LogGOPSim.cpp); the comments name the reference's behaviour where it is surprising.
// Everything per event is preallocated: the heap, the matching-queue pool and the
// buffers of freed ops grow amortised and are reused.
#include "backends/sim/Simulator.h"

#include "backends/sim/EventQueue.h"
#include "backends/sim/MatchQueue.h"
#include "backends/sim/ZeroedArray.h"
#include "ir/Schedule.h"
#include "support/InputFile.h"
#include "support/Progress.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <queue>
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
  if (s.numOps() > MaxSimOps)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        fmt::format("the schedule has {} operations; the simulator handles at most {}",
                    s.numOps(), MaxSimOps));
  if (s.isPacked())
    return llvm::Error::success();   // packed records hold valid sends, recvs and calcs
  for (uint32_t r = 0; r < P; ++r) {
    RankOps ops = s.ops(r);
    for (uint32_t i = 0; i < ops.size(); ++i) {
      OpKind k = ops.kind(i);
      uint32_t g = ops.globalIndex(i);
      if (!isGoalCoreKind(k))
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            opName(s, r, g) + ": '" + opKindName(k).str() +
                "' is not lowered; the simulator runs send, recv and calc only (add " +
                loweringPassFor(k).str() + " to -passes)");
      uint32_t peer = ops.peer(i);
      bool badPeer = (k == OpKind::Send && peer >= P) ||
                     (k == OpKind::Recv && peer >= P && peer != AnySource);
      if (badPeer)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            fmt::format("{}: {} rank {}, but the schedule has {} ranks (0..{})", opName(s, r, g),
                        k == OpKind::Send ? "send to" : "recv from", peer, P, P - 1));
    }
  }
  return llvm::Error::success();
}

namespace {

namespace field = packed::field;
constexpr size_t RecordSize = packed::RecordSize;

enum class OpState : uint8_t { Waiting, Queued, Started, Done };
constexpr uint32_t NoAct = 0xFFFFFFFFu;
// How many events ahead to prefetch (measured on 1024-rank allreduces: 5 to 16 and 2
// to 8 do about equally well).
constexpr size_t PrefetchFar = 12, PrefetchMid = 6, PrefetchNear = 2;

/// Where a rank's packed records and successor entries are, and how its ops are
/// named: the engine refers to op i of rank r as `base + i` (an op reference: dense
/// per rank, below 2^31 so that events stay 16 bytes), the schedule as `first + i`.
struct RankInfo {
  uintptr_t recordBias;   // address of the record of reference 0 (as if the rank's
                          // records started there): record(ref) = bias + 39 * ref
  const uint8_t *succ;
  uint32_t base, first;
};

/// One byte per op reference: its state (2 bits) and how many of its dependencies are
/// satisfied (6 bits; from CountInMap on the count lives in a map). The op becomes
/// executable when the count reaches the record's dependency count; counts that go on
/// (an op marked done twice: a send whose recv declares a size on the other side of S)
/// never free it again, as LogGOPSim's wrapping uint32 counter does not.
constexpr uint8_t StateMask = 3, CountShift = 2, CountInMap = 63;
/// The storage type of that byte: an enum, not a character type, so that the compiler
/// knows that storing one changes nothing else (a char store may alias any object, and
/// the engine's members would be reloaded after each).
enum class StateByte : uint8_t {};

struct Freed {
  uint32_t rank, ref;
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
        N_(s.maxNic() + 1), clockStride_(size_t(C_) + 2 * size_t(N_)), numOps_(s.numOps()),
        mq_(P_, numOps_, opt.engine == Engine::Atlahs) {}

  SimResult run();

private:
  // --- op references -----------------------------------------------------------------
  void layOutReferences();
  uint32_t rankOfRef(uint32_t ref) const {
    return direct_ ? ref >> shift_ : slotRank_[ref >> shift_];
  }
  const uint8_t *rec(uint32_t rank, uint32_t ref) const {
    return reinterpret_cast<const uint8_t *>(rk_[rank].recordBias + RecordSize * ref);
  }
  uint32_t globalOf(uint32_t rank, uint32_t ref) const {
    return ranks_[rank].first + (ref - ranks_[rank].base);
  }
  uint32_t globalOf(uint32_t ref) const { return globalOf(rankOfRef(ref), ref); }

  // --- record fields -------------------------------------------------------------------
  static OpKind kindOf(const uint8_t *r) { return static_cast<OpKind>(r[field::Type]); }
  static uint32_t peerOf(const uint8_t *r) { return packed::u32(r + field::Peer); }
  static uint64_t sizeOf(const uint8_t *r) { return packed::u64(r + field::Size); }
  static uint32_t tagOf(const uint8_t *r) { return packed::u32(r + field::Tag); }
  uint32_t cpuOf(const uint8_t *r, uint32_t rank, uint32_t ref) const {
    uint8_t c = r[field::Cpu];
    return c == 0xFF && wideCpu_ ? s_.packedCpu(globalOf(rank, ref), c) : c;
  }
  uint32_t nicOf(const uint8_t *r, uint32_t rank, uint32_t ref) const {
    uint8_t n = r[field::Nic];
    return n == 0xFF && wideNic_ ? s_.packedNic(globalOf(rank, ref), n) : n;
  }
  const uint8_t *succOf(uint32_t rank, const uint8_t *r) const {
    return rk_[rank].succ + 4 * size_t(packed::u32(r + field::SuccFirst));
  }

  // --- per-reference state -------------------------------------------------------------
  uint8_t stateByte(uint32_t ref) const { return static_cast<uint8_t>(state_[ref]); }
  OpState stateOf(uint32_t ref) const { return static_cast<OpState>(stateByte(ref) & StateMask); }
  void setState(uint32_t ref, OpState st) {
    state_[ref] = StateByte((stateByte(ref) & ~StateMask) | uint8_t(st));
  }
  /// One more dependency of `ref` (of `rank`) is satisfied; true if that frees it.
  [[gnu::always_inline]] bool satisfy(uint32_t rank, uint32_t ref) {
    uint8_t st = stateByte(ref);
    if ((st & StateMask) != uint8_t(OpState::Waiting))
      return false;   // already freed: LogGOPSim's counter has wrapped past 0
    uint32_t count = (st >> CountShift) + 1;
    if (count < CountInMap) [[likely]] {
      state_[ref] = StateByte(count << CountShift);
    } else {
      uint32_t &big = countMap_[ref];
      count = big = count == CountInMap ? CountInMap : big + 1;
      state_[ref] = StateByte(CountInMap << CountShift);
    }
    return count == packed::u32(rec(rank, ref) + field::DepCount);
  }
  uint32_t satisfiedOf(uint32_t ref) const {
    uint32_t count = stateByte(ref) >> CountShift;
    return count < CountInMap ? count : countMap_.lookup(ref);
  }

  // --- clocks: per rank its CPUs' o clocks, its NICs' send and receive gap clocks --------
  uint64_t &cpuClock(uint32_t rank, uint32_t cpu) { return clk_[rank * clockStride_ + cpu]; }
  uint64_t &sendGap(uint32_t rank, uint32_t nic) { return clk_[rank * clockStride_ + C_ + nic]; }
  uint64_t &recvGap(uint32_t rank, uint32_t nic) {
    return clk_[rank * clockStride_ + C_ + N_ + nic];
  }
  uint32_t &cpuOwner(uint32_t rank, uint32_t cpu) { return ownO_[size_t(rank) * C_ + cpu]; }
  uint32_t &sendOwner(uint32_t rank, uint32_t nic) { return ownGs_[size_t(rank) * N_ + nic]; }
  uint32_t &recvOwner(uint32_t rank, uint32_t nic) { return ownGr_[size_t(rank) * N_ + nic]; }

  PairCost pairCost(uint32_t src, uint32_t dst, uint32_t sendRef) const {
    if (opt_.costs)
      return opt_.costs->costOfSend(src, dst, globalOf(src, sendRef));
    return PairCost{p_.L, p_.G};
  }
  /// Activities (what the critical path is made of): an op's execution is its
  /// reference, the receipt of a send's message the reference plus space_.
  uint32_t msgAct(uint32_t sendRef) const { return space_ + sendRef; }

  /// LogGOPSim's MarkNodeAsStarted: frees irequires-successors whose count reaches 0.
  template <bool Carry>
  [[gnu::always_inline]] void markStarted(uint32_t rank, const uint8_t *r) {
    uint32_t numI = packed::u32(r + field::NumISucc);
    if (numI == 0)
      return;
    const uint32_t base = rk_[rank].base;
    const uint8_t *succ = succOf(rank, r) + 4 * size_t(packed::u32(r + field::NumSucc));
    for (uint32_t k = 0; k < numI; ++k) {
      uint32_t s = base + packed::u32(succ + 4 * size_t(k));
      if (satisfy(rank, s)) {
        freed_.push_back({rank, s});
        if constexpr (Carry)
          carried_.push_back({0, NoAct});
      }
    }
  }

  /// MarkNodeAsDone: frees requires-successors. `finish`/`act` feed ATLAHS's carried
  /// start times (and the critical path).
  template <bool Carry>
  [[gnu::always_inline]] void markDone(uint32_t rank, uint32_t ref, uint64_t finish = 0, uint32_t act = NoAct) {
    if (stateOf(ref) != OpState::Done) {
      setState(ref, OpState::Done);
      ++res_.opsDone;
    }
    const uint8_t *r = rec(rank, ref);
    uint32_t num = packed::u32(r + field::NumSucc);
    if (num == 0)
      return;
    const uint32_t base = rk_[rank].base;
    const uint8_t *succ = succOf(rank, r);
    for (uint32_t k = 0; k < num; ++k) {
      uint32_t s = base + packed::u32(succ + 4 * size_t(k));
      if constexpr (Carry) {
        // The first finish time, then the max (ATLAHS's node_start_time map); the
        // activity is kept plus one, so that zeroed memory means "none yet".
        if (depPred_[s] == 0 || finish > depStart_[s]) {
          depStart_[s] = finish;
          depPred_[s] = act + 1;
        }
      }
      if (satisfy(rank, s)) {
        freed_.push_back({rank, s});
        if constexpr (Carry)
          carried_.push_back({depStart_[s], depPred_[s] - 1});
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

  void addInterval(uint32_t rank, uint32_t ref, uint32_t unit, Resource res, IntervalKind k,
                   uint64_t start, uint64_t end) {
    opt_.trace->intervals.push_back({start, end, rank, globalOf(rank, ref), unit, res, k});
  }
  TraceMessage &traceMessage(uint32_t sendRef) {
    return opt_.trace->messages[traceMsg_[sendRef]];
  }

  void sortByKind(uint32_t rank, PodBuffer<uint32_t> &v) const {
    // LogGOPSim: std::sort(free_ops, gnp_op_comp_func()) - libstdc++ introsort, NOT
    // stable beyond 16 elements; the same call on the same sequence gives the same
    // permutation.
    std::sort(v.begin(), v.end(), [this, rank](uint32_t a, uint32_t b) {
      return kindOf(rec(rank, a)) < kindOf(rec(rank, b));
    });
  }

  /// The event loop waits on memory: the records of ops that become executable were
  /// last touched long ago, and a message finds a recv posted long ago. Start loading
  /// what an upcoming event needs, each step with what the previous one brought in:
  /// far ahead its rank's table entry and state byte, then its record, near its
  /// successor list or, for a message, the receiver's clocks and the recv it will likely
  /// match. (always_inline: GCC deems a function of prefetches alone free of effects
  /// and drops the call.)
  template <class Queue> [[gnu::always_inline]] void prefetchAhead(const Queue &heap) const {
    if (const Event *far = heap.peek(PrefetchFar)) {
      uint32_t ref = far->ref & ~Event::MessageBit;
      __builtin_prefetch(&rk_[rankOfRef(ref)]);
      __builtin_prefetch(&state_[ref]);
    }
    if (const Event *mid = heap.peek(PrefetchMid)) {
      uint32_t ref = mid->ref & ~Event::MessageBit;
      const uint8_t *r = rec(rankOfRef(ref), ref);
      __builtin_prefetch(r);
      __builtin_prefetch(r + RecordSize - 1);
    }
    if (const Event *near = heap.peek(PrefetchNear)) {
      uint32_t ref = near->ref & ~Event::MessageBit, rank = rankOfRef(ref);
      const uint8_t *r = rec(rank, ref);
      if (near->isMessage()) {
        uint32_t dst = peerOf(r);
        __builtin_prefetch(&clocks_[dst * clockStride_]);
        uint32_t q = mq_.likelyOp(MatchQueues::Posted, dst);
        if (q != MatchQueues::None)
          __builtin_prefetch(rec(dst, q));
      } else {
        __builtin_prefetch(succOf(rank, r));
      }
    }
  }

  /// A rank mostly works through its ops in order: when one of its ops becomes
  /// executable, fetch its next records (a software stream prefetch per rank).
  [[gnu::always_inline]] void prefetchRankAhead(uint32_t rank, uint32_t ref) const {
    __builtin_prefetch(rec(rank, ref) + 2 * RecordSize);
  }
  /// The same from the file, when it is read page by page (SimOptions::streamWindow):
  /// the next window of the rank's records and of its successor entries is asked for
  /// once the rank is half way through the last one.
  void streamAhead(uint32_t rank, uint32_t ref) {
    const uint8_t *r = rec(rank, ref);
    askAhead(askedRec_[rank], r);
    askAhead(askedSucc_[rank], succOf(rank, r));
  }
  void askAhead(uintptr_t &asked, const uint8_t *p) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(p);
    if (at < asked)
      return;
    adviseWillNeed(p, size_t(std::min<uint64_t>(window_, viewEnd_ - at)));
    asked = at + window_ / 2;
    ++res_.readAheadRequests;
  }
  uint64_t window_ = 0;
  std::vector<uintptr_t> askedRec_, askedSucc_;   // addresses in the mapped file
  uintptr_t viewEnd_ = 0;

  // --- shared by both engines ---------------------------------------------------------
  /// The main loop: roots first, then events in time order until none is left.
  template <bool Rec, bool Atlahs> void runEngine();
  template <bool Rec> void runWithNetwork(EventQueue &heap, uint64_t &now);
  uint64_t present_ = 0;   // with a network: the latest event time so far
  /// Rank h's ops without dependencies into roots_, in index order (LogGOPSim sorts
  /// them by kind, ATLAHS does not), marked queued.
  template <bool Rec, bool SortByKind> void rootsOf(uint32_t h);
  /// One event: its op's (or message's) rule, then the ops it freed.
  template <bool Rec, bool Atlahs, class Queue> void process(Queue &heap, Event e);
  /// A calc: the same rule in both engines, ATLAHS also carries its finish time.
  template <bool Rec, bool Carry, class Queue>
  void calc(Queue &heap, Event e, uint32_t h, const uint8_t *r);
  /// An event whose resource is busy goes back into the queue at `until`.
  template <class Queue> void reinsert(Queue &heap, Event e, uint64_t until) {
    e.time = until;
    heap.push(e);
    ++res_.reinsertions;
  }
  /// A blocked send, calc or message: parked with the others blocked on the same clocks
  /// when parking is on: cpu c of rank h and, for a send, its nic n's send gap (a calc:
  /// Wildcard n), for a message its nic n's receive gap.
  template <class Queue>
  void reinsertOrPark(Queue &heap, Event e, uint64_t until, uint32_t h, uint32_t c, uint32_t n,
                      bool message = false) {
    if (parking_)
      park(((uint64_t(h) * C_ + c) * (uint64_t(N_) + 1) + (n == Wildcard ? N_ : n)) * 2 + message,
           e, until);
    else
      reinsert(heap, e, until);
  }
  /// The sender of a rendezvous message is released by the receive: its cpu and send
  /// gap clocks move forward to the receive (never back), caused by `act`.
  template <bool Rec>
  void releaseSender(uint32_t src, uint32_t c, uint32_t n, uint64_t cpuAt, uint64_t nicAt,
                     uint32_t act);
  /// Bookkeeping of a started send: critical-path causes and the trace.
  template <bool Rec>
  void recordSend(uint32_t h, uint32_t ref, uint32_t c, uint32_t n, uint32_t d, uint64_t bytes,
                  uint64_t t, uint64_t cpuEnd, uint64_t nicEnd, uint64_t arrival, bool eager);
  /// Bookkeeping of a receive charged on rank d (activity `act`, the intervals drawn
  /// for op `shownRef` of rank `shownRank`); `recvRef` is NoAct when the message has
  /// not matched a recv yet.
  template <bool Rec>
  void recordReceive(uint32_t d, uint32_t c, uint32_t n, uint32_t act, uint32_t shownRank,
                     uint32_t shownRef, uint32_t sendRef, uint32_t recvRef, uint64_t t,
                     uint64_t cpuEnd, uint64_t nicEnd);

  // --- LogGOPSim v1 ------------------------------------------------------------------
  // Each gets the event, its rank and the record of its op (for a message: the send).
  template <bool Rec> void lgsSend(EventQueue &heap, Event e, uint32_t h, const uint8_t *r);
  template <bool Rec> void lgsRecv(Event e, uint32_t h, const uint8_t *r);
  template <bool Rec>
  void lgsMessage(EventQueue &heap, Event e, uint32_t src, const uint8_t *r);
  template <bool Rec> void lgsPushFreed(EventQueue &heap);
  template <bool Rec> void lgsPushFreedOp(EventQueue &heap, uint32_t h, uint32_t ref);

  // --- ATLAHS ------------------------------------------------------------------------
  template <bool Rec>
  void atlahsSend(TimeOnlyHeap &heap, Event e, uint32_t h, const uint8_t *r);
  template <bool Rec> void atlahsRecv(Event e, uint32_t h, const uint8_t *r);
  template <bool Rec>
  void atlahsMessage(TimeOnlyHeap &heap, Event e, uint32_t src, const uint8_t *r);
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
  /// What is done between events now and then, when seq_ reaches nextCheck_ (so that
  /// nothing is done per event): the event limit's check and the progress bar (redrawn
  /// at most every 65536 events).
  void checkpoint(uint64_t now);
  void armNextCheck();
  /// The progress bar's last drawing (only with a bar).
  void finishProgress(uint64_t now);
  /// The bar's text after the count, given the seconds since it started.
  auto progressDetail(uint64_t now) const {
    return [this, now](double seconds) {
      return fmt::format("{:.1f} M events/s, simulated time {} ns",
                         seconds > 0 ? double(seq_) / seconds / 1e6 : 0.0, now);
    };
  }
  static constexpr uint64_t ProgressEvery = 65536;
  uint64_t nextCheck_ = ~uint64_t(0);

  const Schedule &s_;
  const SimOptions &opt_;
  const LogGPParams &p_;
  const uint32_t P_, C_, N_;
  const size_t clockStride_;
  const uint64_t numOps_;
  bool recording_ = false;

  // Op references: rank r's ops are base..base+numOps-1. `direct_`: base = r << shift_;
  // otherwise a rank's ops occupy whole slots of 2^shift_ references, slotRank_ per slot.
  std::vector<RankInfo> ranks_;
  const RankInfo *rk_ = nullptr;   // ranks_.data() and clocks_.data(), for the event loop
  uint64_t *clk_ = nullptr;
  std::vector<uint32_t> slotRank_;
  unsigned shift_ = 0;
  bool direct_ = true;
  uint32_t space_ = 0;   // references in use: [0, space_)
  bool wideCpu_ = false, wideNic_ = false;

  ZeroedArray<StateByte> state_;
  llvm::DenseMap<uint32_t, uint32_t> countMap_;
  std::vector<uint64_t> clocks_;
  MatchQueues mq_;   // per rank: posted receives, unexpected messages
  PodBuffer<Freed> freed_;
  PodBuffer<Carried> carried_;
  PodBuffer<uint32_t> scratch_, roots_;
  uint64_t seq_ = 0;
  SimResult res_;

  // Parking (LogGOPSim engine, no critical path, no network model): events blocked on
  // one resource wait together instead of each being retried whenever it frees. Many
  // sends waiting for one CPU are otherwise all retried at every time it frees, each
  // time one of them gets it: quadratic in the queue. A blocked check changes nothing,
  // so it may be left out or made early, never late; a group of events blocked on the
  // same clocks (a send: its cpu and nic's send gap; a calc: its cpu; a message at its
  // receiver: the cpu and the nic's receive gap) sits in the group queue at
  // (time, seq of its oldest member), which is never later than any member's next
  // check in LogGOPSim, and only its oldest member is checked: when it starts, the
  // next one is checked at the same time; when it is still blocked, the clocks are
  // busy for every member until at least the time it is put back at, so the whole
  // group moves there. docs/sim.md, "Performance".
  struct Group {
    uint64_t time = 0;
    uint32_t version = 0;
    std::vector<Event> members;   // a min-heap by seq
  };
  struct GroupEntry {
    uint64_t time;
    uint32_t seq, gid, version;
  };
  struct GroupEntryLater {
    bool operator()(const GroupEntry &a, const GroupEntry &b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };
  static bool seqLater(const Event &a, const Event &b) { return a.seq > b.seq; }
  bool parking_ = false;
  llvm::DenseMap<uint64_t, uint32_t> groupOf_;
  std::vector<Group> groups_;
  std::priority_queue<GroupEntry, std::vector<GroupEntry>, GroupEntryLater> groupQueue_;
  void park(uint64_t key, Event e, uint64_t until);
  void pushGroup(uint32_t gid) {
    Group &g = groups_[gid];
    groupQueue_.push({g.time, g.members.front().seq, gid, ++g.version});
  }
  /// The next event by (time, seq), as LogGOPSim orders them: the event queue's first or
  /// the first group's oldest member. False when there is none.
  bool popNext(EventQueue &heap, Event &e) {
    const GroupEntry *ge = parking_ ? liveGroup() : nullptr;
    if (ge && (heap.empty() || ge->time < heap.top().time ||
               (ge->time == heap.top().time && ge->seq < heap.top().seq))) {
      const uint32_t gid = ge->gid;
      groupQueue_.pop();
      Group &g = groups_[gid];
      std::pop_heap(g.members.begin(), g.members.end(), seqLater);
      e = g.members.back();
      g.members.pop_back();
      e.time = g.time;
      if (!g.members.empty())
        pushGroup(gid);
      else
        ++g.version;
      return true;
    }
    if (heap.empty())
      return false;
    e = heap.pop();
    prefetchAhead(heap);
    return true;
  }
  /// The group queue's first live entry, if any (stale ones dropped).
  const GroupEntry *liveGroup() {
    while (!groupQueue_.empty()) {
      const GroupEntry &top = groupQueue_.top();
      const Group &g = groups_[top.gid];
      if (top.version == g.version && !g.members.empty())
        return &top;
      groupQueue_.pop();
    }
    return nullptr;
  }

  // ATLAHS carried start times (per reference; the activity stored plus one).
  ZeroedArray<uint64_t> depStart_;
  ZeroedArray<uint32_t> depPred_;
  uint32_t touched_[2] = {0, 0};
  unsigned numTouched_ = 0;
  double fctSum_ = 0;

  // Critical path: per activity its start and cause; per clock the activity that set
  // it last.
  std::vector<uint64_t> actStart_;
  std::vector<uint32_t> actPred_;
  std::vector<Via> actVia_;
  std::vector<uint32_t> ownO_, ownGs_, ownGr_;
  std::vector<uint32_t> traceMsg_;
};

// =====================================================================================
// Shared by both engines
// =====================================================================================

void EventEngine::layOutReferences() {
  ranks_.resize(P_);
  uint32_t maxOps = 0;
  uint64_t nonEmpty = 0;
  for (uint32_t r = 0; r < P_; ++r) {
    const Schedule::PackedRank &pr = s_.packedRank(r);
    ranks_[r] = {reinterpret_cast<uintptr_t>(pr.records), pr.successors, 0, s_.rankBegin(r)};
    maxOps = std::max(maxOps, pr.numOps);
    nonEmpty += pr.numOps != 0;
  }
  // Direct when one slot per rank, big enough for the largest, wastes little; else
  // slots as large as that limit allows (a few ranks far larger than the others).
  const uint64_t limit = std::min<uint64_t>(MaxSimOps + 1, 2 * numOps_ + (uint64_t(1) << 20));
  unsigned bits = 0;
  while ((uint64_t(1) << bits) < maxOps)
    ++bits;
  direct_ = (uint64_t(P_) << bits) <= limit;
  if (direct_) {
    shift_ = bits;
    for (uint32_t r = 0; r < P_; ++r)
      ranks_[r].base = r << shift_;
    space_ = static_cast<uint32_t>(uint64_t(P_) << bits);
  } else {
    shift_ = 0;
    while (shift_ < bits && numOps_ + nonEmpty * ((uint64_t(2) << shift_) - 1) <= limit)
      ++shift_;
    uint64_t at = 0;
    for (uint32_t r = 0; r < P_; ++r) {
      ranks_[r].base = static_cast<uint32_t>(at);
      uint64_t slots = (uint64_t(s_.numOps(r)) + (uint64_t(1) << shift_) - 1) >> shift_;
      slotRank_.insert(slotRank_.end(), slots, r);
      at += slots << shift_;
    }
    space_ = static_cast<uint32_t>(at);
  }
  // Unsigned wrap-around: the bias may lie below the records.
  for (RankInfo &ri : ranks_)
    ri.recordBias -= RecordSize * uintptr_t(ri.base);
}

template <bool Rec, bool SortByKind> void EventEngine::rootsOf(uint32_t h) {
  roots_.clear();
  const Schedule::PackedRank &pr = s_.packedRank(h);
  const uint32_t base = ranks_[h].base;
  for (uint32_t i = 0; i < pr.numRoots; ++i)
    roots_.push_back(base + packed::u32(pr.roots + 4 * size_t(i)));
  if (SortByKind && roots_.size() > 1)
    sortByKind(h, roots_);
  for (uint32_t ref : roots_) {
    setState(ref, OpState::Queued);
    if constexpr (Rec)
      setCause(ref, NoAct, Via::Start);
  }
}

template <bool Rec, bool Atlahs, class Queue>
[[gnu::always_inline]] inline void EventEngine::process(Queue &heap, Event e) {
  const uint32_t ref = e.ref & ~Event::MessageBit, h = rankOfRef(ref);
  const uint8_t *r = rec(h, ref);
  if (e.isMessage()) {
    if constexpr (Atlahs)
      atlahsMessage<Rec>(heap, e, h, r);
    else
      lgsMessage<Rec>(heap, e, h, r);
  } else {
    OpKind k = kindOf(r);
    if (k == OpKind::Calc) {
      calc<Rec, /*Carry=*/Atlahs>(heap, e, h, r);
    } else if (k == OpKind::Send) {
      if constexpr (Atlahs)
        atlahsSend<Rec>(heap, e, h, r);
      else
        lgsSend<Rec>(heap, e, h, r);
    } else {
      if constexpr (Atlahs)
        atlahsRecv<Rec>(e, h, r);
      else
        lgsRecv<Rec>(e, h, r);
    }
  }
  if (!freed_.empty()) {
    if constexpr (Atlahs)
      atlahsPushFreed<Rec>(heap);
    else
      lgsPushFreed<Rec>(heap);
  }
}

template <bool Rec, bool Atlahs> void EventEngine::runEngine() {
  std::conditional_t<Atlahs, TimeOnlyHeap, EventQueue> heap;
  heap.reserve(size_t(P_) * 4);
  if constexpr (Atlahs) {
    // The heap's order of equal times depends on its whole history: push every root.
    for (uint32_t h = 0; h < P_; ++h) {
      rootsOf<Rec, /*SortByKind=*/false>(h);
      for (uint32_t ref : roots_)
        heap.push({0, uint32_t(seq_++), ref});
    }
  } else {
    // The roots are the first events (time 0, the first sequence numbers, in rank
    // order): run them straight away instead of queueing them, each with the sequence
    // number it would have had; what they create is numbered after all of them.
    uint32_t rootSeq = 0;
    for (uint32_t h = 0; h < P_; ++h)
      seq_ += s_.packedRank(h).numRoots;
    for (uint32_t h = 0; h < P_ && !res_.aborted; ++h) {
      rootsOf<Rec, /*SortByKind=*/true>(h);
      for (size_t i = 0; i < roots_.size(); ++i) {
        if (i + PrefetchMid < roots_.size())
          __builtin_prefetch(rec(h, roots_[i + PrefetchMid]));
        process<Rec, Atlahs>(heap, Event{0, rootSeq++, roots_[i]});
      }
      if (rootSeq >= nextCheck_) [[unlikely]]
        checkpoint(0);
    }
  }
  uint64_t now = 0;   // the last event's simulated time, for the final report
  if constexpr (!Atlahs) {
    if (opt_.network) {
      runWithNetwork<Rec>(heap, now);
      finishProgress(now);
      return;
    }
  }
  if constexpr (!Atlahs && !Rec) {
    parking_ = true;
    Event e;
    while (!res_.aborted && popNext(heap, e)) {
      now = e.time;
      process<Rec, Atlahs>(heap, e);
      if (seq_ >= nextCheck_) [[unlikely]]
        checkpoint(now);
    }
    parking_ = false;
  } else {
    while (!heap.empty() && !res_.aborted) {
      Event e = heap.pop();
      now = e.time;
      if constexpr (Atlahs)
        numTouched_ = 0;
      else
        prefetchAhead(heap);
      process<Rec, Atlahs>(heap, e);
      if (seq_ >= nextCheck_) [[unlikely]]
        checkpoint(now);
    }
  }
  finishProgress(now);
}

// The event loop with a network model: before each event, the network's own steps that
// come no later (its deliveries become message events, numbered as they arrive).
template <bool Rec> void EventEngine::runWithNetwork(EventQueue &heap, uint64_t &now) {
  MessageNetwork &net = *opt_.network;
  auto deliver = [&](uint32_t ref, uint64_t arrival) {
    heap.push({arrival, uint32_t(seq_++), ref | Event::MessageBit});
    if constexpr (Rec)
      if (opt_.trace)
        traceMessage(ref).arrival = arrival;
  };
  // No parking here: `present_` is the latest time of any event taken so far, retries
  // included, and a parked group's early tries would move it (docs/sim.md).
  for (;;) {
    double tn = net.nextTime();
    if (tn != std::numeric_limits<double>::infinity() &&
        (heap.empty() || tn <= double(heap.top().time))) {
      net.advance(deliver);
      continue;
    }
    if (heap.empty() || res_.aborted)
      break;
    Event e = heap.pop();
    now = e.time;
    present_ = std::max(present_, now);
    process<Rec, false>(heap, e);
    if (seq_ >= nextCheck_) [[unlikely]]
      checkpoint(now);
  }
}

void EventEngine::armNextCheck() {
  nextCheck_ = opt_.progress ? seq_ + ProgressEvery : ~uint64_t(0);
  if (opt_.maxEvents && !res_.aborted)
    nextCheck_ = std::min(nextCheck_, opt_.maxEvents + 1);
}

void EventEngine::checkpoint(uint64_t now) {
  if (opt_.maxEvents && seq_ > opt_.maxEvents) {
    res_.aborted = true;
    res_.stoppedAtEvents = seq_;
    res_.stoppedAtTime = now;
  }
  armNextCheck();
  if (opt_.progress)
    opt_.progress->update(res_.opsDone, progressDetail(now));
}

void EventEngine::finishProgress(uint64_t now) {
  if (!opt_.progress)
    return;
  opt_.progress->update(res_.opsDone, progressDetail(now));
  opt_.progress->finish(progressDetail(now));
}

template <bool Rec, bool Carry, class Queue>
[[gnu::always_inline]] inline void EventEngine::calc(Queue &heap, Event e, uint32_t h, const uint8_t *r) {
  const uint32_t ref = e.ref;
  const uint32_t c = cpuOf(r, h, ref);
  uint64_t &clk = cpuClock(h, c);
  if (clk > e.time) {
    if constexpr (Rec)
      setCause(ref, cpuOwner(h, c), Via::Cpu);
    reinsertOrPark(heap, e, clk, h, c, Wildcard);
    return;
  }
  clk = e.time + sizeOf(r);
  if constexpr (Rec) {
    actStart_[ref] = e.time;
    cpuOwner(h, c) = ref;
    if (opt_.trace)
      addInterval(h, ref, c, Resource::Cpu, IntervalKind::Compute, e.time, clk);
  }
  setState(ref, OpState::Started);
  markStarted<Carry>(h, r);
  markDone<Carry>(h, ref, clk, ref);
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
void EventEngine::recordSend(uint32_t h, uint32_t ref, uint32_t c, uint32_t n, uint32_t d,
                             uint64_t bytes, uint64_t t, uint64_t cpuEnd, uint64_t nicEnd,
                             uint64_t arrival, bool eager) {
  if constexpr (Rec) {
    actStart_[ref] = t;
    cpuOwner(h, c) = ref;
    sendOwner(h, n) = ref;
    setCause(msgAct(ref), ref, Via::Arrival);
    if (opt_.trace) {
      addInterval(h, ref, c, Resource::Cpu, IntervalKind::SendOverhead, t, cpuEnd);
      addInterval(h, ref, n, Resource::NicSend, IntervalKind::SendGap, t, nicEnd);
      traceMsg_[ref] = static_cast<uint32_t>(opt_.trace->messages.size());
      TraceMessage m;
      m.sendOp = globalOf(h, ref);
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
                                uint32_t shownRank, uint32_t shownRef, uint32_t sendRef,
                                uint32_t recvRef, uint64_t t, uint64_t cpuEnd, uint64_t nicEnd) {
  if constexpr (Rec) {
    cpuOwner(d, c) = act;
    recvOwner(d, n) = act;
    if (opt_.trace) {
      opt_.trace->intervals.push_back({t, cpuEnd, d, globalOf(shownRank, shownRef), c,
                                       Resource::Cpu, IntervalKind::RecvOverhead});
      opt_.trace->intervals.push_back({t, nicEnd, d, globalOf(shownRank, shownRef), n,
                                       Resource::NicRecv, IntervalKind::RecvGap});
      TraceMessage &tm = traceMessage(sendRef);
      if (recvRef != NoAct)
        tm.recvOp = globalOf(d, recvRef);
      tm.received = t;
      tm.completed = cpuEnd;
    }
  }
}

// =====================================================================================
// LogGOPSim v1
// =====================================================================================

template <bool Rec>
[[gnu::always_inline]] inline void EventEngine::lgsSend(EventQueue &heap, Event e, uint32_t h, const uint8_t *r) {
  const uint32_t ref = e.ref;
  const uint32_t c = cpuOf(r, h, ref), n = nicOf(r, h, ref), d = peerOf(r);
  const uint64_t bytes = sizeOf(r), t = e.time;
  uint64_t &co = cpuClock(h, c), &cg = sendGap(h, n);
  if (std::max(co, cg) <= t) {
    setState(ref, OpState::Started);
    markStarted<false>(h, r);
    PairCost pc = pairCost(h, d, ref);
    co = t + p_.o + p_.O.forMessage(bytes);
    cg = t + p_.g + pc.G.forMessage(bytes);
    // The message event: first byte at t + o + L; G is charged at the receiver. A
    // network model delivers it itself (runWithNetwork).
    if (opt_.network) [[unlikely]]
      opt_.network->inject(ref, globalOf(h, ref), t + p_.o, bytes, present_);
    else
      heap.push({t + p_.o + pc.L, uint32_t(seq_++), ref | Event::MessageBit});
    ++res_.messages;
    res_.bytes += bytes;
    bool eager = bytes <= p_.S;
    recordSend<Rec>(h, ref, c, n, d, bytes, t, co, cg, t + p_.o + pc.L, eager);
    if (eager) {
      ++res_.eager;
      markDone<false>(h, ref);
    } else {
      ++res_.rendezvous;
    }
  } else {
    if constexpr (Rec)
      causeOfMax(ref, co, cpuOwner(h, c), Via::Cpu, cg, sendOwner(h, n), Via::Nic);
    reinsertOrPark(heap, e, std::max(co, cg), h, c, n);
  }
}

void EventEngine::park(uint64_t key, Event e, uint64_t until) {
  ++res_.reinsertions;
  e.time = until;
  auto [it, fresh] = groupOf_.try_emplace(key, uint32_t(groups_.size()));
  if (fresh)
    groups_.emplace_back();
  const uint32_t gid = it->second;
  Group &g = groups_[gid];
  if (g.members.empty()) {
    g.time = until;
    g.members.push_back(e);
    pushGroup(gid);
    return;
  }
  // The clocks are busy until `until` for every member (it was just computed from
  // them, and they only move forward), and no member is checked before now.
  const uint32_t head = g.members.front().seq;
  g.members.push_back(e);
  std::push_heap(g.members.begin(), g.members.end(), seqLater);
  if (until > g.time || e.seq < head) {
    g.time = std::max(g.time, until);
    pushGroup(gid);
  }
}

template <bool Rec> [[gnu::always_inline]] inline void EventEngine::lgsRecv(Event e, uint32_t h, const uint8_t *r) {
  // Posting a recv costs nothing and needs no free resource.
  const uint32_t ref = e.ref;
  const uint64_t t = e.time;
  setState(ref, OpState::Started);
  markStarted<false>(h, r);
  if constexpr (Rec)
    actStart_[ref] = t;
  MatchQueues::Entry m;
  if (mq_.take(MatchQueues::Unexpected, h, peerOf(r), tagOf(r), m)) {
    // The message's o and G were charged when it arrived. The eager/rendezvous decision
    // uses the RECV's size, and the sender's clocks are raised with the recv's indices.
    if (sizeOf(r) > p_.S) {
      const uint32_t src = m.src();
      markDone<false>(src, m.op);
      releaseSender<Rec>(src, cpuOf(r, h, ref), nicOf(r, h, ref), t, t, ref);
    }
    if constexpr (Rec) {
      if (opt_.trace) {
        TraceMessage &tm = traceMessage(m.op);
        tm.recvOp = globalOf(h, ref);
        tm.completed = std::max(tm.completed, t);
      }
    }
    markDone<false>(h, ref);
  } else {
    mq_.append(MatchQueues::Posted, h, ref, peerOf(r), tagOf(r), t);
  }
}

template <bool Rec>
[[gnu::always_inline]] inline void EventEngine::lgsMessage(EventQueue &heap, Event e, uint32_t src, const uint8_t *r) {
  const uint32_t ref = e.ref & ~Event::MessageBit;
  const uint32_t d = peerOf(r), c = cpuOf(r, src, ref), n = nicOf(r, src, ref);
  const uint64_t bytes = sizeOf(r), t = e.time;
  // The receiver is charged on the SENDER's cpu and nic indices.
  uint64_t &co = cpuClock(d, c), &cr = recvGap(d, n);
  if (std::max(co, cr) <= t) {
    PairCost pc = pairCost(src, d, ref);
    uint64_t cG = pc.G.forMessage(bytes), cO = p_.O.forMessage(bytes);
    co = t + p_.o + std::max(cO, cG);
    cr = t + p_.g + cG;
    const uint32_t act = msgAct(ref);
    if constexpr (Rec)
      actStart_[act] = t;
    recordReceive<Rec>(d, c, n, act, src, ref, ref, NoAct, t, co, cr);
    MatchQueues::Entry q;
    if (mq_.take(MatchQueues::Posted, d, src, tagOf(r), q)) {
      if (bytes > p_.S) {
        // Rendezvous: the send completes now; the sender's clocks jump to now (no ack).
        markDone<false>(src, ref);
        releaseSender<Rec>(src, c, n, t, t, act);
      }
      if constexpr (Rec)
        if (opt_.trace)
          traceMessage(ref).recvOp = globalOf(d, q.op);
      markDone<false>(d, q.op);
    } else {
      mq_.append(MatchQueues::Unexpected, d, ref, src, tagOf(r), t);
    }
  } else {
    if constexpr (Rec)
      causeOfMax(msgAct(ref), co, cpuOwner(d, c), Via::Cpu, cr, recvOwner(d, n), Via::Nic);
    reinsertOrPark(heap, e, std::max(co, cr), d, c, n, /*message=*/true);
  }
}

template <bool Rec> void EventEngine::lgsPushFreed(EventQueue &heap) {
  // Hosts in ascending order; each host's freed ops in the order they were freed,
  // then sorted by type (send < recv < calc). Their time is the host's clock now: the
  // predecessor's finish time is not carried over.
  if (freed_.size() == 1) {   // the usual case
    lgsPushFreedOp<Rec>(heap, freed_[0].rank, freed_[0].ref);
    freed_.clear();
    return;
  }
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
        scratch_.push_back(f.ref);
      freed_.clear();
    } else {
      size_t keep = 0;
      for (size_t i = 0; i < freed_.size(); ++i) {
        if (freed_[i].rank == h)
          scratch_.push_back(freed_[i].ref);
        else
          freed_[keep++] = freed_[i];
      }
      freed_.resize(keep);
    }
    if (scratch_.size() > 1)
      sortByKind(h, scratch_);
    for (uint32_t ref : scratch_)
      lgsPushFreedOp<Rec>(heap, h, ref);
  }
}

template <bool Rec>
[[gnu::always_inline]] inline void EventEngine::lgsPushFreedOp(EventQueue &heap, uint32_t h, uint32_t ref) {
  const uint8_t *r = rec(h, ref);
  const uint32_t c = cpuOf(r, h, ref);
  uint64_t t = cpuClock(h, c);
  if (kindOf(r) == OpKind::Send) {
    const uint32_t n = nicOf(r, h, ref);
    if constexpr (Rec)
      causeOfMax(ref, t, cpuOwner(h, c), Via::Cpu, sendGap(h, n), sendOwner(h, n), Via::Nic);
    t = std::max(t, sendGap(h, n));
  } else if constexpr (Rec) {
    setCause(ref, cpuOwner(h, c), Via::Cpu);
  }
  setState(ref, OpState::Queued);
  heap.push({t, uint32_t(seq_++), ref});
  prefetchRankAhead(h, ref);
  if (window_) [[unlikely]]
    streamAhead(h, ref);
}

// =====================================================================================
// ATLAHS
// =====================================================================================

template <bool Rec>
[[gnu::always_inline]] inline void EventEngine::atlahsSend(TimeOnlyHeap &heap, Event e, uint32_t h, const uint8_t *r) {
  const uint32_t ref = e.ref;
  const uint32_t c = cpuOf(r, h, ref), n = nicOf(r, h, ref), d = peerOf(r);
  const uint64_t t = e.time;
  uint64_t &co = cpuClock(h, c), &cg = sendGap(h, n);
  uint64_t ready = std::max(co, cg);
  if (ready <= t) {
    setState(ref, OpState::Started);
    markStarted<true>(h, r);
    touch(h);
    const uint64_t bytes = std::max<uint64_t>(sizeOf(r), 1);   // ATLAHS: 0 bytes -> 1
    PairCost pc = pairCost(h, d, ref);
    uint64_t cpuTime = t + p_.o + p_.O.forMessage(bytes);
    co = cpuTime;
    uint64_t bw = pc.G.forMessage(bytes);
    cg = t + p_.g + bw;
    // G is charged on the sending side: the message arrives after o, L and (s-1)G.
    uint64_t arrival = cpuTime + pc.L + bw;
    heap.push({arrival, uint32_t(seq_++), ref | Event::MessageBit});
    ++res_.messages;
    res_.bytes += sizeOf(r);
    // ATLAHS keeps the sizes in a vector<int> for its "Average FCT".
    fctSum_ += static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(bytes))) * 8 / 200;
    bool eager = bytes <= p_.S;
    recordSend<Rec>(h, ref, c, n, d, sizeOf(r), t, co, cg, arrival, eager);
    if (eager) {
      ++res_.eager;
      markDone<true>(h, ref, cpuTime, ref);
    } else {
      ++res_.rendezvous;
    }
  } else {
    if constexpr (Rec)
      causeOfMax(ref, co, cpuOwner(h, c), Via::Cpu, cg, sendOwner(h, n), Via::Nic);
    reinsert(heap, e, ready);
  }
}

template <bool Rec> [[gnu::always_inline]] inline void EventEngine::atlahsRecv(Event e, uint32_t h, const uint8_t *r) {
  const uint32_t ref = e.ref;
  const uint32_t c = cpuOf(r, h, ref), n = nicOf(r, h, ref);
  const uint64_t t = e.time;
  setState(ref, OpState::Started);
  markStarted<true>(h, r);
  touch(h);
  if constexpr (Rec)
    actStart_[ref] = t;
  const uint64_t bytes = std::max<uint64_t>(sizeOf(r), 1);
  MatchQueues::Entry m;
  if (mq_.take(MatchQueues::Unexpected, h, peerOf(r), tagOf(r), m)) {
    if (t < m.time) {
      res_.aborted = true;
      res_.abort = {h, globalOf(h, ref), m.src(), globalOf(m.src(), m.op), t, m.time};
      return;
    }
    // ATLAHS reads the SEND gap clock here (nextgs), and sets the CPU clock even if
    // that moves it backwards.
    uint64_t nicTime = std::max(sendGap(h, n), t) + p_.g;
    uint64_t cpuTime = nicTime + p_.o + p_.O.forMessage(bytes);
    if constexpr (Rec) {
      if (sendGap(h, n) > t) {
        actStart_[ref] = sendGap(h, n);
        setCause(ref, sendOwner(h, n), Via::Nic);
      }
    }
    recordReceive<Rec>(h, c, n, ref, h, ref, m.op, ref, t, cpuTime, nicTime);
    cpuClock(h, c) = cpuTime;
    recvGap(h, n) = nicTime;
    if (bytes > p_.S) {
      markDone<true>(m.src(), m.op, cpuTime, ref);
      touch(m.src());
      releaseSender<Rec>(m.src(), c, n, cpuTime, nicTime, ref);
    }
    markDone<true>(h, ref, cpuTime, ref);
    touch(h);
  } else {
    mq_.append(MatchQueues::Posted, h, ref, peerOf(r), tagOf(r), t);
  }
}

template <bool Rec>
[[gnu::always_inline]] inline void EventEngine::atlahsMessage(TimeOnlyHeap &heap, Event e, uint32_t src, const uint8_t *r) {
  const uint32_t ref = e.ref & ~Event::MessageBit;
  const uint32_t d = peerOf(r), n = nicOf(r, src, ref);
  const uint64_t t = e.time;
  MatchQueues::Entry q;
  if (!mq_.take(MatchQueues::Posted, d, src, tagOf(r), q)) {
    mq_.append(MatchQueues::Unexpected, d, ref, src, tagOf(r), t);   // nothing is charged for an unexpected message
    return;
  }
  // Charged on the posted recv's cpu, but on the sender's nic index.
  const uint32_t c = cpuOf(rec(d, q.op), d, q.op);
  const uint64_t bytes = std::max<uint64_t>(sizeOf(r), 1);
  uint64_t ready = std::max(cpuClock(d, c), recvGap(d, n));
  if (ready > t) {
    if constexpr (Rec)
      causeOfMax(msgAct(ref), cpuClock(d, c), cpuOwner(d, c), Via::Cpu, recvGap(d, n),
                 recvOwner(d, n), Via::Nic);
    reinsert(heap, e, ready);
    mq_.append(MatchQueues::Posted, d, q.op, q.src(), q.tag(), q.time);   // the recv goes to the back of its queue
    return;
  }
  uint64_t nicTime = std::max(recvGap(d, n), t) + p_.g;
  uint64_t cpuTime = nicTime + p_.o + p_.O.forMessage(bytes);
  cpuClock(d, c) = cpuTime;
  recvGap(d, n) = nicTime;
  const uint32_t act = msgAct(ref);
  if constexpr (Rec)
    actStart_[act] = t;
  recordReceive<Rec>(d, c, n, act, src, ref, ref, q.op, t, cpuTime, nicTime);
  if (bytes > p_.S) {
    // Rendezvous: the sender is released when the receive completes.
    markDone<true>(src, ref, cpuTime, act);
    touch(src);
    releaseSender<Rec>(src, cpuOf(r, src, ref), n, cpuTime, nicTime, act);
  }
  markDone<true>(d, q.op, cpuTime, act);
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
      const uint32_t ref = freed_[j].ref;
      const uint8_t *r = rec(h, ref);
      const Carried &f = carried_[j];
      uint64_t t = f.start;
      OpKind k = kindOf(r);
      if (k == OpKind::Calc) {
        uint32_t c = cpuOf(r, h, ref);
        if constexpr (Rec)
          causeOfMax(ref, t, f.pred, Via::Dependency, cpuClock(h, c), cpuOwner(h, c), Via::Cpu);
        t = std::max(t, cpuClock(h, c));
      } else if (k == OpKind::Send) {
        uint32_t n = nicOf(r, h, ref);
        if constexpr (Rec)
          causeOfMax(ref, t, f.pred, Via::Dependency, sendGap(h, n), sendOwner(h, n), Via::Nic);
        t = std::max(t, sendGap(h, n));
      } else if constexpr (Rec) {
        setCause(ref, f.pred, Via::Dependency);
      }
      setState(ref, OpState::Queued);
      heap.push({t, uint32_t(seq_++), ref});
      if (window_) [[unlikely]]
        streamAhead(h, ref);
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
      leftover = mq_.size(MatchQueues::Unexpected, r) != 0;
    if (!leftover)
      return;
  }
  for (uint32_t r = 0; r < P_; ++r) {
    const RankInfo &ri = ranks_[r];
    const uint32_t n = s_.numOps(r);
    std::vector<MatchQueues::Entry> posted, unexpected;
    if (mq_.size(MatchQueues::Posted, r))
      posted = mq_.entries(MatchQueues::Posted, r);
    if (mq_.size(MatchQueues::Unexpected, r))
      unexpected = mq_.entries(MatchQueues::Unexpected, r);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t ref = ri.base + i;
      const uint8_t *rc = s_.packedRank(r).records + RecordSize * size_t(i);
      StuckItem item;
      item.rank = r;
      item.op = ri.first + i;
      switch (stateOf(ref)) {
      case OpState::Done:
        continue;
      case OpState::Waiting:
      case OpState::Queued:
        item.why = StuckItem::WaitsForDependencies;
        item.total = packed::u32(rc + field::DepCount);
        item.pending = item.total - satisfiedOf(ref);
        break;
      case OpState::Started:
        if (kindOf(rc) != OpKind::Send)
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
      item.op = globalOf(r, p.op);
      item.time = p.time;
      res_.stuck.push_back(item);
    }
    for (const auto &u : unexpected) {
      StuckItem item;
      item.why = StuckItem::MessageUnreceived;
      item.rank = r;
      item.op = globalOf(u.src(), u.op);
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
    const bool isMsg = cur >= space_;
    const uint32_t ref = isMsg ? cur - space_ : cur;
    const uint32_t opRank = rankOfRef(ref);
    const uint8_t *r = rec(opRank, ref);
    const OpKind k = kindOf(r);
    const int64_t start = static_cast<int64_t>(actStart_[cur]);
    st.op = globalOf(opRank, ref);
    st.start = static_cast<uint64_t>(start);
    st.end = static_cast<uint64_t>(end);
    phases.clear();
    auto add = [&](Category c, uint64_t v) { phases.push_back({c, static_cast<int64_t>(v)}); };
    if (isMsg || k == OpKind::Send) {
      const uint32_t dst = peerOf(r);
      PairCost pc = pairCost(opRank, dst, ref);
      const uint64_t raw = sizeOf(r);
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
          if (opt_.network)   // the network's sharing: the rest of the way but L
            add(Category::Bandwidth, st.end - st.start > p_.o + pc.L
                                         ? st.end - st.start - p_.o - pc.L : 0);
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
      add(Category::Computation, sizeOf(r));
    } else {
      // A recv matched from the unexpected queue: free in LogGOPSim (its message paid
      // on arrival); in ATLAHS it pays g and o here.
      st.kind = StepKind::Recv;
      st.rank = opRank;
      st.peer = peerOf(r);
      if (atlahs) {
        const uint64_t bytes = std::max<uint64_t>(sizeOf(r), 1);
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
  wideCpu_ = C_ > 0xFF;
  wideNic_ = N_ > 0xFF;

  layOutReferences();
  state_.reset(space_);
  clocks_.assign(size_t(P_) * clockStride_, 0);
  clk_ = clocks_.data();
  rk_ = ranks_.data();
  if (opt_.streamWindow && !s_.viewedBytes().empty()) {
    window_ = opt_.streamWindow;
    askedRec_.assign(P_, 0);
    askedSucc_.assign(P_, 0);
    viewEnd_ = reinterpret_cast<uintptr_t>(s_.viewedBytes().data() + s_.viewedBytes().size());
  }
  freed_.reserve(64);
  carried_.reserve(64);
  scratch_.reserve(64);
  if (opt_.engine == sim::Engine::Atlahs) {
    depStart_.reset(space_);
    depPred_.reset(space_);
  }
  if (recording_) {
    actStart_.assign(2 * size_t(space_), 0);
    actPred_.assign(2 * size_t(space_), NoAct);
    actVia_.assign(2 * size_t(space_), Via::Start);
    ownO_.assign(size_t(P_) * C_, NoAct);
    ownGs_.assign(size_t(P_) * N_, NoAct);
    ownGr_.assign(size_t(P_) * N_, NoAct);
    if (opt_.trace)
      traceMsg_.assign(space_, 0);
  }

  armNextCheck();
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

  res_.cpuFinish.assign(size_t(P_) * C_, 0);
  res_.hostFinish.assign(P_, 0);
  for (uint32_t r = 0; r < P_; ++r) {
    uint64_t m = 0;
    for (uint32_t c = 0; c < C_; ++c) {
      res_.cpuFinish[size_t(r) * C_ + c] = cpuClock(r, c);
      m = std::max(m, cpuClock(r, c));
    }
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
  // The engine reads packed op records: a mapped binary GOAL file as it is, any other
  // schedule from a packed copy.
  if (s.isPacked()) {
    SimOptions o = opts;
    const uint64_t window = s.adviseSimulationAccess();
    if (!o.streamWindow)
      o.streamWindow = window;
    return EventEngine(s, o).run();
  }
  Schedule packed = s.packedCopy();
  return EventEngine(packed, opts).run();
}

} // namespace infracc::sim
