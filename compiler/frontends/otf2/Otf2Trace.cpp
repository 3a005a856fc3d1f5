#include "compiler/frontends/otf2/Otf2Trace.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/STLExtras.h>

#include <otf2/OTF2_Events.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

namespace infracc::otf2 {
namespace {

struct Op {
  Op(OpKind k, uint32_t p = 0, uint32_t t = 0, uint64_t s = 0) : kind(k), peer(p), tag(t), size(s) {}
  OpKind kind;
  uint32_t peer = 0, tag = 0;
  uint64_t size = 0;
  uint32_t collective = ~0u;
  std::vector<uint32_t> requires_;   // local indices
};

struct RankState {
  std::vector<Op> ops;
  std::vector<uint32_t> pending;     // ops the next op in program order waits for
  uint64_t lastTime = 0;
  bool started = false;
  std::map<uint64_t, uint32_t> isends;                   // request -> op
  std::map<uint64_t, std::vector<uint32_t>> irecvs;      // request -> pending when posted
};

// `op` has finished: later ops wait for it, and no longer need what it waited for.
void finished(RankState &r, uint32_t op) {
  const auto &req = r.ops[op].requires_;
  llvm::erase_if(r.pending, [&](uint32_t p) {
    return std::find(req.begin(), req.end(), p) != req.end();
  });
  r.pending.push_back(op);
}

uint32_t add(RankState &r, Op op, bool completes) {
  op.requires_ = r.pending;
  uint32_t i = uint32_t(r.ops.size());
  r.ops.push_back(std::move(op));
  if (completes)
    r.pending = {i};
  return i;
}

} // namespace

struct TraceBuilder::State {
  uint64_t resolution = 1000000000;
  std::vector<uint64_t> locations;                        // definition order = rank
  std::map<uint32_t, std::vector<uint64_t>> groups;       // group -> members
  std::map<uint32_t, uint32_t> commGroup;                 // comm -> group
  std::vector<RankState> ranks;
  uint32_t current = 0;
  std::vector<CollectiveInfo> collectives;
  std::map<std::vector<uint32_t>, uint32_t> communicators;   // ranks -> index
  std::string error;

  uint64_t toNs(uint64_t ticks) const {
    return uint64_t((unsigned __int128)ticks * 1000000000u / resolution);
  }
  void seen(uint64_t time) {
    RankState &r = ranks[current];
    r.lastTime = std::max(r.lastTime, time);
  }
  // The rank of member `i` of communicator `comm`; ~0u and an error when unknown.
  uint32_t memberRank(uint32_t comm, uint32_t i) {
    auto c = commGroup.find(comm);
    if (c == commGroup.end() || !groups.count(c->second) || i >= groups[c->second].size()) {
      if (error.empty())
        error = fmt::format("an event names member {} of communicator {}, which is not defined",
                            i, comm);
      return ~0u;
    }
    uint64_t m = groups[c->second][i];
    if (m >= ranks.size()) {
      if (error.empty())
        error = fmt::format("communicator {} has member {}, beyond the {} ranks", comm, m,
                            ranks.size());
      return ~0u;
    }
    return uint32_t(m);
  }
  // A send or recv of the current rank to or from member `member` of `comm`, waiting for
  // what finished before it; `completes`: later ops wait for it. ~0u after an error.
  uint32_t message(uint64_t time, OpKind kind, uint32_t comm, uint32_t member, uint32_t tag,
                   uint64_t len, bool completes) {
    seen(time);
    uint32_t peer = memberRank(comm, member);
    return peer == ~0u ? ~0u : add(ranks[current], Op(kind, peer, tag, len), completes);
  }
};

TraceBuilder::TraceBuilder() : s_(std::make_unique<State>()) {}
TraceBuilder::~TraceBuilder() = default;

void TraceBuilder::location(uint64_t loc) { s_->locations.push_back(loc); }
void TraceBuilder::clock(uint64_t ticksPerSecond) {
  s_->resolution = ticksPerSecond ? ticksPerSecond : 1;
}
void TraceBuilder::group(uint32_t self, bool comm, llvm::ArrayRef<uint64_t> members) {
  if (comm)
    s_->groups[self].assign(members.begin(), members.end());
}
void TraceBuilder::communicator(uint32_t self, uint32_t group) { s_->commGroup[self] = group; }

std::optional<std::string> TraceBuilder::endDefinitions() {
  if (s_->locations.empty())
    return std::string("the trace defines no locations (ranks)");
  s_->ranks.resize(s_->locations.size());
  return std::nullopt;
}
uint32_t TraceBuilder::numRanks() const { return uint32_t(s_->ranks.size()); }
uint64_t TraceBuilder::locationOfRank(uint32_t rank) const { return s_->locations[rank]; }

void TraceBuilder::beginRank(uint32_t rank) { s_->current = rank; }

void TraceBuilder::enter(uint64_t time) {
  RankState &r = s_->ranks[s_->current];
  if (r.started && time > r.lastTime)
    add(r, Op(OpKind::Calc, 0, 0, s_->toNs(time - r.lastTime)), true);
  r.started = true;
  r.lastTime = time;
}
void TraceBuilder::leave(uint64_t time) { s_->seen(time); }

bool TraceBuilder::send(uint64_t time, uint32_t receiver, uint32_t comm, uint32_t tag,
                        uint64_t bytes) {
  return s_->message(time, OpKind::Send, comm, receiver, tag, bytes, true) != ~0u;
}
bool TraceBuilder::isend(uint64_t time, uint32_t receiver, uint32_t comm, uint32_t tag,
                         uint64_t bytes, uint64_t request) {
  uint32_t op = s_->message(time, OpKind::Send, comm, receiver, tag, bytes, false);
  if (op == ~0u)
    return false;
  s_->ranks[s_->current].isends[request] = op;
  return true;
}
bool TraceBuilder::isendComplete(uint64_t time, uint64_t request) {
  s_->seen(time);
  RankState &r = s_->ranks[s_->current];
  auto it = r.isends.find(request);
  if (it == r.isends.end()) {
    s_->error = fmt::format("rank {}: MpiIsendComplete of request {}, which no MpiIsend opened",
                            s_->current, request);
    return false;
  }
  finished(r, it->second);
  r.isends.erase(it);
  return true;
}
bool TraceBuilder::recv(uint64_t time, uint32_t sender, uint32_t comm, uint32_t tag,
                        uint64_t bytes) {
  return s_->message(time, OpKind::Recv, comm, sender, tag, bytes, true) != ~0u;
}
void TraceBuilder::irecvRequest(uint64_t time, uint64_t request) {
  s_->seen(time);
  RankState &r = s_->ranks[s_->current];
  r.irecvs[request] = r.pending;
}
bool TraceBuilder::irecv(uint64_t time, uint32_t sender, uint32_t comm, uint32_t tag,
                         uint64_t bytes, uint64_t request) {
  s_->seen(time);
  uint32_t from = s_->memberRank(comm, sender);
  if (from == ~0u)
    return false;
  RankState &r = s_->ranks[s_->current];
  auto it = r.irecvs.find(request);
  std::vector<uint32_t> after = it == r.irecvs.end() ? r.pending : it->second;
  if (it != r.irecvs.end())
    r.irecvs.erase(it);
  Op op(OpKind::Recv, from, tag, bytes);
  op.requires_ = after;
  uint32_t i = uint32_t(r.ops.size());
  r.ops.push_back(std::move(op));
  finished(r, i);
  return true;
}
bool TraceBuilder::collectiveEnd(uint64_t time, uint8_t op, uint32_t comm, uint32_t root,
                                 uint64_t sent, uint64_t received) {
  State &t = *s_;
  t.seen(time);
  auto c = t.commGroup.find(comm);
  if (c == t.commGroup.end() || !t.groups.count(c->second)) {
    t.error = fmt::format("a collective on communicator {}, which is not defined", comm);
    return false;
  }
  const auto &members = t.groups[c->second];
  if (members.size() <= 1)
    return true;   // MPI_COMM_SELF: nothing moves
  CollectiveInfo ci;
  const uint64_t n = members.size();
  switch (op) {
  case OTF2_COLLECTIVE_OP_ALLREDUCE: ci.kind = CollectiveKind::Allreduce; ci.bytes = sent / n; break;
  case OTF2_COLLECTIVE_OP_ALLTOALL: ci.kind = CollectiveKind::Alltoall; ci.bytes = sent / n; break;
  case OTF2_COLLECTIVE_OP_ALLGATHER: ci.kind = CollectiveKind::Allgather; ci.bytes = received / n; break;
  case OTF2_COLLECTIVE_OP_BCAST: ci.kind = CollectiveKind::Bcast; ci.bytes = received; break;
  case OTF2_COLLECTIVE_OP_REDUCE: ci.kind = CollectiveKind::Reduce; ci.bytes = sent; break;
  case OTF2_COLLECTIVE_OP_SCATTER: ci.kind = CollectiveKind::Scatter; ci.bytes = received; break;
  case OTF2_COLLECTIVE_OP_BARRIER: ci.kind = CollectiveKind::Barrier; break;
  default:
    t.error = fmt::format("rank {}: collective operation {} is not read (allreduce, alltoall, "
                          "allgather, bcast, reduce, scatter and barrier are)",
                          t.current, int(op));
    return false;
  }
  std::vector<uint32_t> ranks;
  for (uint64_t m : members) {
    if (m >= t.ranks.size()) {
      t.error = fmt::format("communicator {} has member {}, beyond the {} ranks", comm, m,
                            t.ranks.size());
      return false;
    }
    ranks.push_back(uint32_t(m));
  }
  auto [it, fresh] = t.communicators.try_emplace(ranks, uint32_t(t.communicators.size()));
  ci.communicator = it->second;
  ci.root = root < n ? root : 0;
  t.collectives.push_back(ci);
  Op o(OpKind::Collective);
  o.collective = uint32_t(t.collectives.size() - 1);
  o.size = ci.bytes;
  add(t.ranks[t.current], std::move(o), true);
  return true;
}

const std::string &TraceBuilder::error() const { return s_->error; }

// The number of ranks; the communicators (index, member count, members) in index order;
// the collectives (kind, communicator, root, bytes as two words); then per rank its op
// count and per op kind, peer, tag, size (two words), collective, the count of ops it
// requires and those.
void TraceBuilder::pack(llvm::raw_ostream &os) const {
  const State &t = *s_;
  auto put = [&](uint32_t w) { os.write(reinterpret_cast<const char *>(&w), sizeof w); };
  auto put64 = [&](uint64_t w) {
    put(uint32_t(w));
    put(uint32_t(w >> 32));
  };
  put(uint32_t(t.ranks.size()));
  std::vector<std::pair<uint32_t, const std::vector<uint32_t> *>> comms;
  for (const auto &[ranks, index] : t.communicators)
    comms.emplace_back(index, &ranks);
  std::sort(comms.begin(), comms.end());
  put(uint32_t(comms.size()));
  for (const auto &[index, ranks] : comms) {
    put(index);
    put(uint32_t(ranks->size()));
    for (uint32_t r : *ranks)
      put(r);
  }
  put(uint32_t(t.collectives.size()));
  for (const CollectiveInfo &c : t.collectives) {
    put(uint32_t(c.kind));
    put(c.communicator);
    put(c.root);
    put64(c.bytes);
  }
  for (const RankState &r : t.ranks) {
    put(uint32_t(r.ops.size()));
    for (const Op &o : r.ops) {
      put(uint32_t(o.kind));
      put(o.peer);
      put(o.tag);
      put64(o.size);
      put(o.collective);
      put(uint32_t(o.requires_.size()));
      for (uint32_t p : o.requires_)
        put(p);
    }
  }
}

std::optional<Schedule> unpack(llvm::StringRef bytes) {
  if (bytes.size() % sizeof(uint32_t))
    return std::nullopt;
  const uint64_t words = bytes.size() / sizeof(uint32_t);
  uint64_t at = 0;
  bool ok = true;
  // The next word, if it is at most `limit`; else `ok` turns false. Counts are at most
  // the words left, so nothing is sized beyond the input.
  auto next = [&](uint64_t limit = UINT32_MAX) -> uint32_t {
    uint32_t w = 0;
    if (at < words)
      memcpy(&w, bytes.data() + at * sizeof w, sizeof w);
    if (at >= words || w > limit) {
      ok = false;
      return 0;
    }
    ++at;
    return w;
  };
  auto next64 = [&] {
    uint64_t low = next();
    return low | uint64_t(next()) << 32;
  };
  const uint32_t numRanks = next(words);
  if (!ok)
    return std::nullopt;
  ScheduleBuilder b(numRanks);
  for (uint32_t n = next(words); ok && n > 0; --n) {
    Communicator c;
    c.id = next();
    c.ranks.resize(next(words - at));
    for (uint32_t &r : c.ranks)
      r = next(numRanks - 1);
    if (ok)
      b.addCommunicator(std::move(c));
  }
  std::vector<uint32_t> collectiveIndex;
  for (uint32_t n = next(words); ok && n > 0; --n) {
    CollectiveInfo ci;
    ci.kind = CollectiveKind(next(UINT8_MAX));
    ci.communicator = next();
    ci.root = next();
    ci.bytes = next64();
    if (ok)
      collectiveIndex.push_back(b.addCollective(ci));
  }
  for (uint32_t r = 0; ok && r < numRanks; ++r) {
    b.beginRank(r);
    const uint32_t numOps = next(words - at);
    const uint64_t first = at;
    // Two passes over the rank's words: its ops, then what each requires.
    for (uint32_t i = 0; ok && i < numOps; ++i) {
      const OpKind kind = OpKind(next(UINT8_MAX));
      const uint32_t peer = next();
      const uint32_t tag = next();
      const uint64_t size = next64();
      const uint32_t collective = next();
      at += next(words - at);
      if (kind == OpKind::Collective && collective >= collectiveIndex.size())
        ok = false;
      else if (kind == OpKind::Collective)
        b.addOp(OpKind::Collective, collectiveIndex[collective], size);
      else if (kind == OpKind::Send || kind == OpKind::Recv || kind == OpKind::Calc)
        b.addOp(kind, peer, size, tag);
      else
        ok = false;
    }
    at = first;
    for (uint32_t i = 0; ok && i < numOps; ++i) {
      at += 6;
      for (uint32_t n = next(words - at); ok && n > 0; --n)
        if (uint32_t p = next(); p < i)
          b.addDependency(i, p, DepKind::Requires);
        else
          ok = false;
    }
    b.endRank();
  }
  if (!ok || at != words)
    return std::nullopt;
  return b.finish();
}

} // namespace infracc::otf2
