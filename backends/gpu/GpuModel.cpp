#include "backends/gpu/GpuModel.h"

#include "ir/Kernels.h"
#include "ir/LoadStore.h"
#include "ir/Schedule.h"
#include "support/Diagnostics.h"
#include "support/Progress.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLFunctionalExtras.h>

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <optional>
#include <queue>

namespace infracc::gpu {

llvm::Error checkRunnable(const Schedule &s) {
  const KernelLevel *k = s.kernels();
  if (!k)
    return usageError("-sim-model=gpu runs GPU kernels: give an MSCCL++ plan or a .kernels "
                      "file, or lower collectives with -coll-target=kernels");
  if (!k->loadStore)
    return usageError("-sim-model=gpu runs the kernels' instruction streams: add "
                      "unroll-loadstore to -passes");
  for (uint64_t g = 0; g < s.numOps(); ++g) {
    OpKind kind = s.kind(static_cast<uint32_t>(g));
    if (kind != OpKind::Kernel && kind != OpKind::Calc)
      return inputError(fmt::format(
          "-sim-model=gpu runs kernel launches and calcs; rank {} has a {} ({}), which "
          "-sim-model=lgs, topo or flow simulate",
          s.rankOf(static_cast<uint32_t>(g)), opKindName(kind),
          s.opName(static_cast<uint32_t>(g))));
  }
  return llvm::Error::success();
}

namespace {
/// Calls f(kernel, stream) for every wavefront of every workgroup; stops when f says false.
void forEachStream(const KernelLevel &k,
                   llvm::function_ref<bool(uint32_t, WavefrontStream)> f) {
  for (uint32_t kn = 0; kn < k.kernels.size(); ++kn)
    for (uint32_t wg = 0; wg < k.kernels[kn].numWorkgroups; ++wg)
      for (uint32_t wf = 0; wf < k.kernels[kn].wavefronts; ++wf)
        if (!f(kn, WavefrontStream(k, *k.loadStore, kn, wg, wf)))
          return;
}
} // namespace

uint64_t requestsTotal(const Schedule &s) {
  uint64_t total = 0;
  forEachStream(*s.kernels(), [&](uint32_t, WavefrontStream ws) {
    InstructionCounts c = countInstructions(std::move(ws));
    for (InstrKind x : {InstrKind::Load, InstrKind::Store, InstrKind::SemaphoreAcquire,
                        InstrKind::SemaphoreRelease})
      total += c.byKind[unsigned(x)];
    return true;
  });
  return total;
}

namespace {

enum class Ev : uint32_t { CuRun, Hop, Deliver, LinkFree, OpDone };
enum class WaveState : uint8_t { Ready, Waitcnt, Nop, Barrier, Semaphore, Drain, Done };
enum class Step { Issued, IssuedAndStalled, Stalled, Busy, Full, Done };

// 16 bytes: the time, then the order of scheduling (35 bits: 34 G events), the kind (3)
// and its object (26 bits); events of one time run in the order they were scheduled.
struct Event {
  uint64_t time, rest;
  static constexpr unsigned IndexBits = 26;
  Ev type() const { return Ev((rest >> IndexBits) & 7); }
  uint32_t index() const { return uint32_t(rest & ((1u << IndexBits) - 1)); }
  bool operator>(const Event &o) const { return time != o.time ? time > o.time : rest > o.rest; }
};

// Events in (time, scheduling order), as a binary heap would give them, but cheaper when
// hundreds of thousands wait: a wheel of 1024-ps buckets covers the next ~8.4 us (a few
// link latencies); only the current bucket is a heap; later events wait in an overflow
// heap until the wheel reaches them.
class EventWheel {
public:
  void push(const Event &e) {
    if (e.time < curEnd_) {
      cur_.push_back(e);
      std::push_heap(cur_.begin(), cur_.end(), std::greater<>());
    } else if (e.time < windowEnd()) {
      bucket_[(e.time / Width) % Buckets].push_back(e);
      ++inBuckets_;
    } else {
      overflow_.push(e);
    }
  }
  bool empty() const { return cur_.empty() && inBuckets_ == 0 && overflow_.empty(); }
  /// The next event; the wheel must not be empty.
  Event pop() {
    while (cur_.empty())
      advance();
    std::pop_heap(cur_.begin(), cur_.end(), std::greater<>());
    Event e = cur_.back();
    cur_.pop_back();
    return e;
  }

private:
  static constexpr uint64_t Width = 1024, Buckets = 8192;
  uint64_t windowEnd() const { return curEnd_ + (Buckets - 1) * Width; }
  void advance() {
    if (inBuckets_ == 0 && !overflow_.empty() && overflow_.top().time >= windowEnd())
      curEnd_ = overflow_.top().time / Width * Width;   // jump over the empty stretch
    curEnd_ += Width;
    // The bucket now current, then what the wheel's far end now covers.
    std::vector<Event> &b = bucket_[((curEnd_ - Width) / Width) % Buckets];
    inBuckets_ -= b.size();
    cur_.swap(b);
    // The bucket keeps the emptied vector; a large one is given back, so that memory
    // follows the events waiting, not every bucket's busiest moment.
    if (b.capacity() > 64)
      std::vector<Event>().swap(b);
    std::make_heap(cur_.begin(), cur_.end(), std::greater<>());
    while (!overflow_.empty() && overflow_.top().time < windowEnd()) {
      Event e = overflow_.top();
      overflow_.pop();
      push(e);
    }
  }

  uint64_t curEnd_ = Width;   // the current bucket is [curEnd_ - Width, curEnd_)
  std::vector<Event> cur_;
  std::vector<std::vector<Event>> bucket_ = std::vector<std::vector<Event>>(Buckets);
  uint64_t inBuckets_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> overflow_;
};

struct Packet {
  uint64_t tail = 0;                 // when its last byte is at `at`
  NodeId at = 0, target = 0;         // where it is, where it goes
  NodeId out = InvalidNode, in = InvalidNode;   // ports between GPUs (none: local)
  NodeId cu = 0;
  uint32_t wave = 0, bytes = 0, semaphore = 0, lineBytes = 0;
  InstrKind kind = InstrKind::Load;
  uint32_t nextWaiting = ~0u;        // the packet behind it in a link's queue
  uint8_t leg = 0;                   // 0: to `out` (or target), 1: to `in`, 2: to target
  bool data = false, response = false;
  // LL packets: the line; a load waits at the memory for the line's `need`-th put (0: no
  // wait); a store from another GPU is a put (a multicast store: its copies to the others).
  bool put = false;
  uint32_t need = 0;
  uint64_t line = 0;
  // Multicast (NVLS): the request goes to the switch behind its GPU's port (`in` and
  // `target` there), which sends a copy to each member of `group` (children with
  // `parent` set) and answers once all children are back; `line` holds the offset.
  bool multicast = false;
  BufferKind buffer = BufferKind::Input;
  uint32_t group = 0, children = 0, parent = ~0u;
};

struct Wave {
  std::optional<InstructionIterator> it;
  Instruction cur;
  bool haveCur = false;
  uint32_t loads = 0, stores = 0, group = 0;
  WaveState state = WaveState::Ready;
};

struct Group {
  uint32_t kernel = 0, workgroup = 0, cu = 0, firstWave = 0, waves = 0, done = 0, atNop = 0;
};

struct Cu {
  NodeId node = 0;
  uint32_t gpu = 0, used = 0, outstanding = 0;
  uint64_t nextIssue = 0, busyPs = 0;
  bool scheduled = false, full = false;
  std::deque<uint32_t> ready;
};

// Everything a hop touches of a link, in 40 bytes: waiting packets are chained through
// Packet::nextWaiting (fifo: all in queue 0; fair: control in 0, data in 1).
struct LinkState {
  uint64_t busyUntil = 0;
  uint64_t bitsPerSecond = 0, latencyPs = 0;
  uint32_t head[2] = {~0u, ~0u}, tail[2] = {~0u, ~0u};
  uint32_t waiting = 0;
  bool freeScheduled = false, bare = false;
  uint8_t turn = 0;
};

class Engine {
public:
  Engine(const Schedule &s, GpuMachine &m, const GpuModelOptions &o)
      : s_(s), k_(*s.kernels()), m_(m), o_(o), lookup_(k_), line_(k_.loadStore->cacheLine) {}
  llvm::Expected<GpuRunResult> run();

private:
  void push(uint64_t t, Ev type, uint32_t index) {
    heap_.push({t, (seq_++ << (Event::IndexBits + 3)) | (uint64_t(type) << Event::IndexBits) |
                       index});
  }

  // Schedule ops.
  void startOp(uint32_t g, uint64_t t);
  void opDone(uint32_t g, uint64_t t);
  // Compute units.
  void dispatch(uint32_t gpu, uint64_t t);
  void wake(uint32_t w, uint64_t t);
  void schedule(uint32_t c, uint64_t t);
  void runCu(uint32_t c, uint64_t t);
  Step advance(uint32_t w, uint64_t t);
  void finishWave(uint32_t w, uint64_t t);
  void issue(uint32_t w, const Instruction &x, uint64_t t);
  void completed(const Packet &p, uint64_t t);
  // Network.
  void route(uint32_t p, uint64_t t);
  void transmit(uint32_t l, uint32_t p, uint64_t t);
  void linkFree(uint32_t l, uint64_t t);
  void atMemory(uint32_t p, uint64_t t);
  void respond(uint32_t p, uint64_t t, uint32_t bytes, bool data);
  void fanOut(uint32_t p, uint64_t t);
  void childDone(uint32_t child, uint64_t t);
  /// A slot for packet p; ~0u (and the run fails) when too many are in flight.
  uint32_t place(const Packet &p);
  void fail(std::string msg) {
    if (error_.empty())
      error_ = std::move(msg);
  }
  void noRoute(uint32_t from, uint32_t to) {
    fail(fmt::format("-sim-model=gpu: the fabric has no route from GPU {} to GPU {} (their I/O "
                     "ports are not joined)",
                     from, to));
  }
  void tooManyRequests() {
    fail(fmt::format("-sim-model=gpu: the kernels issue more than {} requests "
                     "(-gpu-max-requests)",
                     o_.maxRequests));
  }
  uint64_t address(uint32_t owner, BufferKind b, uint64_t offset, uint32_t instance) const;

  const Schedule &s_;
  const KernelLevel &k_;
  GpuMachine &m_;
  GpuModelOptions o_;
  KernelLookup lookup_;
  uint64_t line_;
  EventWheel heap_;
  uint64_t seq_ = 0;
  std::string error_;

  std::vector<uint32_t> deps_;           // per op: requires-predecessors not done
  std::vector<uint32_t> launchOp_;       // per kernel: the op that launched it
  std::vector<uint32_t> groupsLeft_;     // per kernel
  std::vector<std::deque<std::pair<uint32_t, uint32_t>>> pending_;   // per GPU
  std::vector<uint32_t> nextCu_, cuBase_;   // per GPU
  std::vector<Cu> cus_;
  std::vector<Wave> waves_;
  std::vector<Group> groups_;
  std::vector<Packet> packets_;
  std::vector<uint32_t> freePackets_;
  std::vector<LinkState> links_;
  std::vector<uint64_t> kernelBase_;     // per kernel: where its buffers start
  std::vector<uint64_t> semaphoreBase_;  // per GPU
  std::vector<uint32_t> semCount_;
  std::vector<std::deque<uint32_t>> semWaiting_;   // parked acquire packets
  llvm::DenseMap<uint64_t, std::vector<uint32_t>> barrier_;   // (kernel, id) -> waves
  // LL packets, per (GPU, line) of memory: the puts that will land there in all and
  // those landed so far, the loads waiting for one; per (workgroup, GPU) and line, the
  // workgroup's loads of it so far.
  using LineKey = std::pair<uint64_t, uint64_t>;
  llvm::DenseMap<LineKey, uint32_t> putsTotal_, putsLanded_, packetLoads_;
  llvm::DenseMap<LineKey, std::vector<uint32_t>> waitingForPuts_;
  void countPuts();
  GpuRunResult r_;
};

uint64_t Engine::address(uint32_t owner, BufferKind b, uint64_t offset, uint32_t instance) const {
  uint32_t kn = lookup_.find(owner, instance);
  if (kn == ~0u)   // the verifier refuses such ranges; kept safe all the same
    return 0;
  const Kernel &K = k_.kernels[kn];
  uint64_t base = kernelBase_[kn];
  for (unsigned i = 0; i < unsigned(b); ++i)
    base += (K.bufferBytes[i] + line_ - 1) / line_ * line_;
  return base + offset;
}

// A workgroup's n-th load of a line of LL packets waits for the n-th put into that line
// (the packets' flags tell the rounds apart), a load past the last put for the last, a
// load of a line no other GPU puts into for nothing: the rule the message-level lowering
// follows (lower-kernels), per line. The puts are counted first, from the streams.
void Engine::countPuts() {
  Segment seg;
  uint64_t puts = 0;   // each is a request: -gpu-max-requests bounds the counting too
  forEachStream(k_, [&](uint32_t kn, WavefrontStream ws) {
    const Kernel &K = k_.kernels[kn];
    while (ws.next(seg))
      for (size_t j = 0; j < seg.body.size(); ++j) {
        const Instruction &x = seg.body[j];
        if (x.kind != InstrKind::Store || !(x.flags & instr::Packet))
          continue;
        // A multicast store puts into every member of its group but the writer.
        llvm::ArrayRef<uint32_t> into(&x.gpu, 1);
        if (x.flags & instr::Multicast)
          into = x.gpu < k_.groups.size() ? llvm::ArrayRef<uint32_t>(k_.groups[x.gpu].gpus)
                                          : llvm::ArrayRef<uint32_t>();
        for (uint64_t i = 0; i < seg.iterations; ++i) {
          if (o_.maxRequests && ++puts > o_.maxRequests) {
            tooManyRequests();
            return false;
          }
          for (uint32_t m : into)
            if (m != K.gpu)
              ++putsTotal_[{m, address(m, x.buffer, seg.at(i, j).address, K.instance) / line_}];
        }
      }
    return true;
  });
}

llvm::Expected<GpuRunResult> Engine::run() {
  const uint32_t numGpus = k_.numGpus;
  constexpr uint64_t MaxObjects = 1u << Event::IndexBits;
  if (s_.numOps() >= MaxObjects || m_.numLinks() >= MaxObjects ||
      m_.graph().numNodes() >= MaxObjects)
    return inputError(fmt::format("-sim-model=gpu: at most {} ops, links and fabric nodes "
                                  "(the schedule has {} ops, the fabric {} links)",
                                  MaxObjects - 1, s_.numOps(), m_.numLinks()));
  // Memory layout per GPU: its kernels' input, output and scratch buffers in turn, each
  // from a line boundary, then its semaphores, a line each.
  kernelBase_.resize(k_.kernels.size());
  semaphoreBase_.assign(numGpus, 0);
  for (uint32_t gpu = 0; gpu < numGpus; ++gpu) {
    uint64_t at = 0;
    for (uint32_t kn : k_.kernelsOfGpu(gpu)) {
      kernelBase_[kn] = at;
      for (uint64_t b : k_.kernels[kn].bufferBytes)
        at += (b + line_ - 1) / line_ * line_;
    }
    semaphoreBase_[gpu] = at;
  }
  semCount_.resize(k_.semaphores.size());
  for (size_t i = 0; i < k_.semaphores.size(); ++i)
    semCount_[i] = k_.semaphores[i].init;
  semWaiting_.resize(k_.semaphores.size());

  for (uint32_t gpu = 0; gpu < m_.gpus().size(); ++gpu) {
    cuBase_.push_back(static_cast<uint32_t>(cus_.size()));
    for (NodeId n : m_.gpus()[gpu].cus) {
      Cu c;
      c.node = n;
      c.gpu = gpu;
      cus_.push_back(std::move(c));
    }
  }
  pending_.resize(numGpus);
  nextCu_.assign(numGpus, 0);
  links_.resize(m_.numLinks());
  for (uint32_t l = 0; l < m_.numLinks(); ++l) {
    links_[l].bitsPerSecond = m_.link(l).bitsPerSecond;
    links_[l].latencyPs = m_.link(l).latencyPs;
    links_[l].bare = m_.link(l).bare;
  }
  r_.links.resize(m_.numLinks());
  r_.kernels.resize(k_.kernels.size());
  launchOp_.assign(k_.kernels.size(), ~0u);
  groupsLeft_.resize(k_.kernels.size());
  for (uint32_t kn = 0; kn < k_.kernels.size(); ++kn) {
    groupsLeft_[kn] = k_.kernels[kn].numWorkgroups;
    if (m_.gpus()[k_.kernels[kn].gpu].cus.empty() && groupsLeft_[kn])
      return inputError(fmt::format("-sim-model=gpu: GPU {} has no compute units", k_.kernels[kn].gpu));
  }

  countPuts();
  if (!error_.empty())
    return inputError(error_);
  deps_.assign(s_.numOps(), 0);
  for (uint32_t rank = 0; rank < s_.numRanks(); ++rank)
    for (uint32_t g = s_.rankBegin(rank); g < s_.rankBegin(rank) + s_.numOps(rank); ++g)
      for (uint32_t i = 0; i < s_.numSuccessors(g); ++i)
        ++deps_[s_.rankBegin(rank) + s_.successor(g, i)];
  for (uint32_t rank = 0; rank < s_.numRanks(); ++rank)
    for (uint32_t i = 0; i < s_.numOps(rank); ++i) {
      uint32_t g = s_.globalIndex(rank, i);
      if (deps_[g] == 0)
        startOp(g, 0);
    }

  uint64_t now = 0;
  while (!heap_.empty() && error_.empty()) {
    Event e = heap_.pop();
    now = e.time;
    if ((++r_.events & 0xFFFF) == 0 && o_.progress)
      o_.progress->update(r_.requests(), [&](double seconds) {
        return fmt::format("{:.3f} us simulated, {:.2g} requests/s", now / 1e6,
                           seconds > 0 ? r_.requests() / seconds : 0.0);
      });
    switch (e.type()) {
    case Ev::CuRun:
      runCu(e.index(), now);
      break;
    case Ev::Hop:
      route(e.index(), now);
      break;
    case Ev::Deliver: {
      Packet &p = packets_[e.index()];
      if (p.response && p.parent != ~0u) {
        childDone(e.index(), now);
      } else if (p.response) {
        completed(p, now);
        freePackets_.push_back(e.index());
      } else if (p.multicast) {
        fanOut(e.index(), now);
      } else {
        atMemory(e.index(), now);
      }
      break;
    }
    case Ev::LinkFree:
      linkFree(e.index(), now);
      break;
    case Ev::OpDone:
      opDone(e.index(), now);
      break;
    }
  }
  if (!error_.empty())
    return inputError(error_);

  for (const KernelRun &kr : r_.kernels)
    r_.makespanPs = std::max(r_.makespanPs, kr.endPs);
  r_.makespanPs = std::max(r_.makespanPs, now);
  r_.cuBusyPs.resize(m_.gpus().size());
  for (const Cu &c : cus_)
    r_.cuBusyPs[c.gpu].push_back(c.busyPs);
  if (!r_.finished()) {
    // Name what waits: undispatched workgroups, then wavefronts that never ended.
    static const char *const what[] = {"ready", "at a Waitcnt", "at a Nop", "at a Barrier",
                                       "waiting for a semaphore", "draining its requests",
                                       "done"};
    for (uint32_t kn = 0; kn < k_.kernels.size(); ++kn) {
      if (r_.kernels[kn].finished)
        continue;
      if (launchOp_[kn] == ~0u)
        r_.stuck.push_back(fmt::format("gpu {} kernel {}: never launched (its launch waits for "
                                       "an op that never finished)",
                                       k_.kernels[kn].gpu, kn));
    }
    for (uint32_t gpu = 0; gpu < pending_.size(); ++gpu)
      if (!pending_[gpu].empty())
        r_.stuck.push_back(fmt::format("gpu {}: {} workgroups never found a free compute unit "
                                       "(-wg-per-cu={} per CU)",
                                       gpu, pending_[gpu].size(), o_.workgroupsPerCu));
    for (uint32_t w = 0; w < waves_.size(); ++w) {
      const Wave &wv = waves_[w];
      if (wv.state == WaveState::Done)
        continue;
      const Group &G = groups_[wv.group];
      std::string where = describeGpuOp(
          k_, G.kernel, G.workgroup,
          wv.it ? wv.it->segment().op - k_.workgroups[k_.kernels[G.kernel].firstWorkgroup +
                                                       G.workgroup].firstOp
                : 0);
      r_.stuck.push_back(fmt::format("{}, wavefront {}: {}", where, w - G.firstWave,
                                     what[unsigned(wv.state)]));
    }
  }
  return std::move(r_);
}

// --- schedule ops -----------------------------------------------------------------------

void Engine::startOp(uint32_t g, uint64_t t) {
  uint32_t base = s_.rankBegin(s_.rankOf(g));
  for (uint32_t i = 0; i < s_.numSuccessors(g); ++i)
    if (s_.successorKind(g, i) == DepKind::IRequires && --deps_[base + s_.successor(g, i)] == 0)
      startOp(base + s_.successor(g, i), t);
  if (s_.kind(g) == OpKind::Calc) {
    uint64_t ns = std::min<uint64_t>(s_.size(g), (~uint64_t(0) - t) / 1000);   // saturate
    push(t + ns * 1000, Ev::OpDone, g);
    return;
  }
  uint32_t kn = s_.peer(g);
  const Kernel &K = k_.kernels[kn];
  launchOp_[kn] = g;
  r_.kernels[kn].startPs = t;
  if (K.numWorkgroups == 0) {
    r_.kernels[kn].finished = true;
    r_.kernels[kn].endPs = t;
    push(t, Ev::OpDone, g);
    return;
  }
  for (uint32_t wg = 0; wg < K.numWorkgroups; ++wg)
    pending_[K.gpu].push_back({kn, wg});
  dispatch(K.gpu, t);
}

void Engine::opDone(uint32_t g, uint64_t t) {
  uint32_t base = s_.rankBegin(s_.rankOf(g));
  for (uint32_t i = 0; i < s_.numSuccessors(g); ++i)
    if (s_.successorKind(g, i) == DepKind::Requires && --deps_[base + s_.successor(g, i)] == 0)
      startOp(base + s_.successor(g, i), t);
}

// --- compute units ----------------------------------------------------------------------

void Engine::dispatch(uint32_t gpu, uint64_t t) {
  uint32_t n = static_cast<uint32_t>(m_.gpus()[gpu].cus.size());
  while (!pending_[gpu].empty()) {
    uint32_t c = ~0u;
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t cand = cuBase_[gpu] + (nextCu_[gpu] + i) % n;
      if (cus_[cand].used < o_.workgroupsPerCu) {
        c = cand;
        nextCu_[gpu] = (nextCu_[gpu] + i + 1) % n;
        break;
      }
    }
    if (c == ~0u)
      return;
    auto [kn, wg] = pending_[gpu].front();
    pending_[gpu].pop_front();
    const Kernel &K = k_.kernels[kn];
    Group G;
    G.kernel = kn;
    G.workgroup = wg;
    G.cu = c;
    G.firstWave = static_cast<uint32_t>(waves_.size());
    G.waves = K.wavefronts;
    uint32_t gi = static_cast<uint32_t>(groups_.size());
    groups_.push_back(G);
    r_.workgroups.push_back({gpu, c - cuBase_[gpu], kn, wg, t, 0});
    ++cus_[c].used;
    for (uint32_t w = 0; w < K.wavefronts; ++w) {
      Wave wv;
      wv.it.emplace(WavefrontStream(k_, *k_.loadStore, kn, wg, w));
      wv.group = gi;
      waves_.push_back(std::move(wv));
      cus_[c].ready.push_back(G.firstWave + w);
    }
    schedule(c, t);
  }
}

void Engine::schedule(uint32_t c, uint64_t t) {
  Cu &cu = cus_[c];
  if (cu.scheduled || cu.full || cu.ready.empty())
    return;
  cu.scheduled = true;
  push(std::max(t, cu.nextIssue), Ev::CuRun, c);
}

void Engine::wake(uint32_t w, uint64_t t) {
  Wave &wv = waves_[w];
  wv.state = WaveState::Ready;
  uint32_t c = groups_[wv.group].cu;
  cus_[c].ready.push_back(w);
  schedule(c, t);
}

void Engine::runCu(uint32_t c, uint64_t t) {
  Cu &cu = cus_[c];
  cu.scheduled = true;   // wavefronts woken while it runs are taken by this loop
  while (!cu.ready.empty() && error_.empty()) {
    if (t < cu.nextIssue) {
      push(cu.nextIssue, Ev::CuRun, c);
      return;
    }
    uint32_t w = cu.ready.front();
    switch (advance(w, t)) {
    case Step::Issued:
      cu.nextIssue = t + o_.cyclePs;
      cu.busyPs += o_.cyclePs;
      break;
    case Step::IssuedAndStalled:
      cu.nextIssue = t + o_.cyclePs;
      cu.busyPs += o_.cyclePs;
      cu.ready.pop_front();
      break;
    case Step::Busy:
      cu.nextIssue = t + uint64_t(o_.reduceCycles) * o_.cyclePs;
      cu.busyPs += uint64_t(o_.reduceCycles) * o_.cyclePs;
      break;
    case Step::Stalled:
    case Step::Done:
      cu.ready.pop_front();
      break;
    case Step::Full:
      cu.full = true;   // until a response frees a slot
      cu.scheduled = false;
      return;
    }
  }
  cu.scheduled = false;
}

Step Engine::advance(uint32_t w, uint64_t t) {
  for (;;) {
    Wave &wv = waves_[w];
    if (!wv.haveCur) {
      if (!wv.it->next(wv.cur)) {
        wv.it.reset();
        if (wv.loads || wv.stores) {
          wv.state = WaveState::Drain;
          return Step::Stalled;
        }
        finishWave(w, t);
        return Step::Done;
      }
      wv.haveCur = true;
    }
    const Instruction &x = wv.cur;
    Group &G = groups_[wv.group];
    switch (x.kind) {
    case InstrKind::Waitcnt:
      if (wv.loads > x.arg || wv.stores > x.arg2) {
        wv.state = WaveState::Waitcnt;
        return Step::Stalled;
      }
      wv.haveCur = false;
      continue;
    case InstrKind::Nop:
      wv.haveCur = false;
      if (++G.atNop < G.waves) {
        wv.state = WaveState::Nop;
        return Step::Stalled;
      }
      G.atNop = 0;
      for (uint32_t o = G.firstWave; o < G.firstWave + G.waves; ++o)
        if (o != w && waves_[o].state == WaveState::Nop)
          wake(o, t);
      continue;
    case InstrKind::Barrier: {
      wv.haveCur = false;
      uint64_t key = (uint64_t(G.kernel) << 32) | x.arg;
      std::vector<uint32_t> &at = barrier_[key];
      uint64_t need = uint64_t(x.arg2) * k_.kernels[G.kernel].wavefronts;
      if (at.size() + 1 < need) {
        at.push_back(w);
        wv.state = WaveState::Barrier;
        return Step::Stalled;
      }
      std::vector<uint32_t> release = std::move(at);
      barrier_.erase(key);
      for (uint32_t o : release)
        wake(o, t);
      continue;
    }
    case InstrKind::Reduce:
      wv.haveCur = false;
      return Step::Busy;
    case InstrKind::Load:
    case InstrKind::Store:
    case InstrKind::SemaphoreAcquire:
    case InstrKind::SemaphoreRelease: {
      Cu &cu = cus_[G.cu];
      if (cu.outstanding >= o_.maxOutstanding)
        return Step::Full;
      Instruction copy = x;
      wv.haveCur = false;
      issue(w, copy, t);
      if (copy.kind == InstrKind::SemaphoreAcquire) {
        waves_[w].state = WaveState::Semaphore;
        return Step::IssuedAndStalled;
      }
      return Step::Issued;
    }
    }
  }
}

void Engine::finishWave(uint32_t w, uint64_t t) {
  waves_[w].state = WaveState::Done;
  Group &G = groups_[waves_[w].group];
  if (++G.done < G.waves)
    return;
  Cu &cu = cus_[G.cu];
  --cu.used;
  r_.workgroups[waves_[w].group].endPs = t;   // groups and their records share numbers
  uint32_t kn = G.kernel;
  if (--groupsLeft_[kn] == 0) {
    r_.kernels[kn].finished = true;
    r_.kernels[kn].endPs = t;
    push(t, Ev::OpDone, launchOp_[kn]);
  }
  dispatch(cu.gpu, t);
}

void Engine::issue(uint32_t w, const Instruction &x, uint64_t t) {
  if (o_.maxRequests && r_.requests() >= o_.maxRequests)
    return tooManyRequests();
  Wave &wv = waves_[w];
  const Group &G = groups_[wv.group];
  Cu &cu = cus_[G.cu];
  const Kernel &K = k_.kernels[G.kernel];
  uint32_t owner;
  uint64_t addr;
  Packet p;
  p.kind = x.kind;
  p.wave = w;
  p.cu = cu.node;
  p.tail = t;
  p.at = cu.node;
  // A Load asks with a control packet and gets the line back; a Store carries the line.
  auto access = [&] {
    p.lineBytes = x.bytes;
    if (x.kind == InstrKind::Load) {
      ++wv.loads;
      ++r_.loads;
      p.bytes = o_.controlBytes;
    } else {
      ++wv.stores;
      ++r_.stores;
      p.bytes = x.bytes;
      p.data = true;
    }
  };
  bool multicast = false;
  if ((x.flags & instr::Multicast) && (x.kind == InstrKind::Load || x.kind == InstrKind::Store)) {
    if (x.gpu >= k_.groups.size()) {   // the verifier refuses it; kept safe all the same
      fail(fmt::format("-sim-model=gpu: no multicast group mc{}", x.gpu));
      return;
    }
    // A group of this GPU alone is its own memory.
    for (uint32_t m : k_.groups[x.gpu].gpus)
      multicast |= m != cu.gpu;
  }
  if (multicast) {
    p.multicast = true;
    p.put = x.kind == InstrKind::Store && (x.flags & instr::Packet);
    p.group = x.gpu;
    p.buffer = x.buffer;
    p.line = x.address;
    access();
    ++cu.outstanding;
    // To the switch behind the port that leads to the group's first other member.
    NodeId in = InvalidNode;
    for (uint32_t m : k_.groups[x.gpu].gpus)
      if (m != cu.gpu) {
        if (!m_.ports(cu.gpu, m, x.address / line_, p.out, in))
          return noRoute(cu.gpu, m);
        break;
      }
    uint32_t first = m_.nextOutside(p.out, in);
    NodeId sw = first == ~0u ? InvalidNode : m_.graph().directedTo(first);
    if (sw == InvalidNode || m_.gpuOf(sw) != ~0u) {
      const FabricGraph &g = m_.graph();
      fail(fmt::format("-sim-model=gpu: multicast group mc{} needs a switch between its GPUs "
                       "(NVLS); GPU {}'s port '{}' does not lead to one",
                       x.gpu, cu.gpu, g.name(p.out)));
      return;
    }
    p.in = p.target = sw;
    if (uint32_t pi = place(p); pi != ~0u)
      route(pi, t);
    return;
  }
  if (x.kind == InstrKind::Load || x.kind == InstrKind::Store) {
    owner = (x.flags & instr::Multicast) ? cu.gpu : x.gpu;
    addr = address(owner, x.buffer, x.address, K.instance);
    if (x.flags & instr::Packet) {
      p.line = addr / line_;
      if (x.kind == InstrKind::Store) {
        p.put = owner != cu.gpu;
      } else if (auto total = putsTotal_.find({owner, p.line}); total != putsTotal_.end()) {
        uint32_t n = ++packetLoads_[{(uint64_t(wv.group) << 32) | owner, p.line}];
        p.need = std::min(n, total->second);
      }
    }
    access();
  } else {
    owner = k_.semaphores[x.arg].gpu;
    addr = semaphoreBase_[owner] + uint64_t(x.arg) * line_;
    p.semaphore = x.arg;
    p.bytes = o_.controlBytes;
    ++r_.semaphoreAccesses;
    if (x.kind == InstrKind::SemaphoreAcquire)
      ++wv.loads;
    else
      ++wv.stores;
  }
  ++cu.outstanding;
  const NocGpu &dst = m_.gpus()[owner];
  uint64_t lineNo = addr / line_;
  p.target = dst.memories[lineNo % dst.memories.size()];
  if (owner != cu.gpu && !m_.ports(cu.gpu, owner, lineNo, p.out, p.in))
    return noRoute(cu.gpu, owner);
  if (uint32_t pi = place(p); pi != ~0u)
    route(pi, t);
}

uint32_t Engine::place(const Packet &p) {
  uint32_t pi;
  if (!freePackets_.empty()) {
    pi = freePackets_.back();
    freePackets_.pop_back();
    packets_[pi] = p;
  } else {
    pi = static_cast<uint32_t>(packets_.size());
    if (pi >= (1u << Event::IndexBits) - 1) {
      fail(fmt::format("-sim-model=gpu: more than {} requests in flight at once; lower "
                       "-max-outstanding",
                       pi));
      return ~0u;
    }
    packets_.push_back(p);
  }
  return pi;
}

// At the switch: a copy of the request to each member's memory, entering its GPU by the
// port its lines take from this GPU (this GPU's own copy by the port it left by).
void Engine::fanOut(uint32_t pi, uint64_t t) {
  const Packet p = packets_[pi];
  const uint32_t writer = m_.gpuOf(p.cu);
  const uint32_t instance = k_.kernels[groups_[waves_[p.wave].group].kernel].instance;
  const std::vector<uint32_t> &members = k_.groups[p.group].gpus;
  packets_[pi].children = static_cast<uint32_t>(members.size());
  for (uint32_t m : members) {
    Packet c;
    c.kind = p.kind;
    c.wave = p.wave;
    c.cu = p.cu;
    c.parent = pi;
    c.at = p.at;
    c.tail = t;
    c.leg = 1;
    c.lineBytes = p.lineBytes;
    c.bytes = p.bytes;
    c.data = p.data;
    uint64_t addr = address(m, p.buffer, p.line, instance);
    c.line = addr / line_;
    const NocGpu &G = m_.gpus()[m];
    c.target = G.memories[c.line % G.memories.size()];
    NodeId out = InvalidNode;
    if (m == writer)
      c.in = p.out;
    else if (!m_.ports(writer, m, c.line, out, c.in))
      return noRoute(writer, m);
    c.put = p.put && m != writer;
    uint32_t ci = place(c);
    if (ci == ~0u)
      return;
    route(ci, t);
  }
}

// A copy's answer is back at the switch; the last one sends the answer to the CU (a
// load's lines reduced there, a store's acks as one).
void Engine::childDone(uint32_t ci, uint64_t t) {
  const uint32_t pi = packets_[ci].parent;
  freePackets_.push_back(ci);
  Packet &p = packets_[pi];
  if (--p.children)
    return;
  bool load = p.kind == InstrKind::Load;
  p.response = true;
  p.bytes = load ? p.lineBytes : o_.controlBytes;
  p.data = load;
  p.tail = t;
  p.leg = 1;   // from the switch, outside, to the port it came by, then to the CU
  p.in = p.out;
  p.out = InvalidNode;
  p.target = p.cu;
  route(pi, t);
}

void Engine::completed(const Packet &p, uint64_t t) {
  Wave &wv = waves_[p.wave];
  bool load = p.kind == InstrKind::Load || p.kind == InstrKind::SemaphoreAcquire;
  --(load ? wv.loads : wv.stores);
  uint32_t c = groups_[wv.group].cu;
  Cu &cu = cus_[c];
  --cu.outstanding;
  if (cu.full) {
    cu.full = false;
    schedule(c, t);
  }
  switch (wv.state) {
  case WaveState::Waitcnt:
    if (wv.loads <= wv.cur.arg && wv.stores <= wv.cur.arg2)
      wake(p.wave, t);
    break;
  case WaveState::Semaphore:
    if (p.kind == InstrKind::SemaphoreAcquire)
      wake(p.wave, t);
    break;
  case WaveState::Drain:
    if (!wv.loads && !wv.stores)
      finishWave(p.wave, t);
    break;
  default:
    break;
  }
}

// --- network ----------------------------------------------------------------------------

void Engine::route(uint32_t pi, uint64_t t) {
  for (;;) {
    Packet &p = packets_[pi];
    NodeId goal = p.leg == 0 ? (p.out != InvalidNode ? p.out : p.target)
                  : p.leg == 1 ? p.in
                               : p.target;
    if (p.at == goal) {
      if (goal != p.target) {
        ++p.leg;
        continue;
      }
      push(std::max(t, p.tail), Ev::Deliver, pi);
      return;
    }
    uint32_t l = p.leg == 1 ? m_.nextOutside(p.at, goal) : m_.nextInside(m_.gpuOf(p.at), p.at, goal);
    if (l == ~0u) {
      const FabricGraph &g = m_.graph();
      fail(fmt::format("-sim-model=gpu: no route from '{}' to '{}'", g.name(p.at), g.name(goal)));
      return;
    }
    LinkState &L = links_[l];
    if (L.bare) {
      const FabricGraph &g = m_.graph();
      fail(fmt::format("-sim-model=gpu: the link {} ('{}') has no bandwidth; give it one",
                       g.directedLinkName(l), g.link(g.edge(l / 2).link).name));
      return;
    }
    if (L.busyUntil <= t && L.waiting == 0) {
      transmit(l, pi, t);
      return;
    }
    unsigned q = o_.fairArbitration && p.data ? 1 : 0;
    p.nextWaiting = ~0u;
    if (L.tail[q] == ~0u)
      L.head[q] = pi;
    else
      packets_[L.tail[q]].nextWaiting = pi;
    L.tail[q] = pi;
    r_.links[l].peakQueue = std::max(r_.links[l].peakQueue, ++L.waiting);
    if (!L.freeScheduled) {
      L.freeScheduled = true;
      push(std::max(t, L.busyUntil), Ev::LinkFree, l);
    }
    return;
  }
}

void Engine::transmit(uint32_t l, uint32_t pi, uint64_t t) {
  Packet &p = packets_[pi];
  LinkState &L = links_[l];
  uint64_t ser =
      L.bitsPerSecond
          ? (uint64_t(p.bytes) * 8'000'000'000'000ull + L.bitsPerSecond - 1) / L.bitsPerSecond
          : 0;
  uint64_t end = std::max(t + ser, p.tail);   // cut-through: not before the tail is here
  L.busyUntil = end;
  LinkUse &u = r_.links[l];
  u.bytes += p.bytes;
  ++u.packets;
  u.busyPs += end - t;
  p.at = m_.graph().directedTo(l);
  p.tail = end + L.latencyPs;
  // A link without latency hands the head on at once (on-chip links usually have none):
  // no event, which halves the events per request on the generic GPU.
  if (L.latencyPs == 0)
    route(pi, t);
  else
    push(t + L.latencyPs, Ev::Hop, pi);
}

void Engine::linkFree(uint32_t l, uint64_t t) {
  LinkState &L = links_[l];
  L.freeScheduled = false;
  unsigned q = 0;
  if (o_.fairArbitration) {
    // Alternate between control and data while both wait.
    if (L.head[0] == ~0u || (L.head[1] != ~0u && L.turn == 1))
      q = 1;
    L.turn = q == 0 ? 1 : 0;
  }
  uint32_t pi = L.head[q];
  if (pi == ~0u)
    return;
  L.head[q] = packets_[pi].nextWaiting;
  if (L.head[q] == ~0u)
    L.tail[q] = ~0u;
  --L.waiting;
  transmit(l, pi, t);
  if (L.waiting) {
    L.freeScheduled = true;
    push(L.busyUntil, Ev::LinkFree, l);
  }
}

void Engine::respond(uint32_t pi, uint64_t t, uint32_t bytes, bool data) {
  Packet &p = packets_[pi];
  p.response = true;
  p.bytes = bytes;
  p.data = data;
  if (p.parent != ~0u) {
    // A multicast copy answers the switch: out of its GPU by the port it came in by.
    p.out = p.in;
    p.in = p.target = packets_[p.parent].in;
  } else {
    std::swap(p.out, p.in);
    p.target = p.cu;
  }
  p.leg = 0;
  p.tail = t;
  route(pi, t);
}

void Engine::atMemory(uint32_t pi, uint64_t t) {
  Packet &p = packets_[pi];
  switch (p.kind) {
  case InstrKind::Load:
    if (p.need) {
      LineKey key{m_.gpuOf(p.target), p.line};
      if (putsLanded_.lookup(key) < p.need) {
        waitingForPuts_[key].push_back(pi);   // polling its flags, as an acquire waits
        break;
      }
    }
    respond(pi, t, p.lineBytes, true);
    break;
  case InstrKind::Store:
    if (p.put) {
      // Waiting loads that this put satisfies are answered first, then the put's ack.
      LineKey key{m_.gpuOf(p.target), p.line};
      uint32_t landed = ++putsLanded_[key];
      if (auto w = waitingForPuts_.find(key); w != waitingForPuts_.end()) {
        std::vector<uint32_t> still;
        for (uint32_t q : w->second) {
          if (packets_[q].need <= landed)
            respond(q, t, packets_[q].lineBytes, true);
          else
            still.push_back(q);
        }
        if (still.empty())
          waitingForPuts_.erase(w);
        else
          w->second = std::move(still);
      }
    }
    respond(pi, t, o_.controlBytes, false);
    break;
  case InstrKind::SemaphoreRelease: {
    // A waiting acquire is answered first, then the release's ack leaves.
    uint32_t sem = p.semaphore;
    if (!semWaiting_[sem].empty()) {
      uint32_t waiting = semWaiting_[sem].front();
      semWaiting_[sem].pop_front();
      respond(waiting, t, o_.controlBytes, false);
    } else {
      ++semCount_[sem];
    }
    respond(pi, t, o_.controlBytes, false);
    break;
  }
  case InstrKind::SemaphoreAcquire:
    if (semCount_[p.semaphore] > 0) {
      --semCount_[p.semaphore];
      respond(pi, t, o_.controlBytes, false);
    } else {
      semWaiting_[p.semaphore].push_back(pi);
    }
    break;
  default:
    break;
  }
}

} // namespace

llvm::Expected<GpuRunResult> runGpuModel(const Schedule &s, GpuMachine &m,
                                         const GpuModelOptions &o) {
  if (s.kernels()->numGpus > m.gpus().size())
    return inputError(fmt::format("-sim-model=gpu: the kernels run on {} GPUs; the fabric has {}",
                                  s.kernels()->numGpus, m.gpus().size()));
  Engine e(s, m, o);
  return e.run();
}

} // namespace infracc::gpu
