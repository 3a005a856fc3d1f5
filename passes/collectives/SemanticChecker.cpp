#include "passes/collectives/SemanticChecker.h"

#include "passes/collectives/Algorithms.h"

#include <llvm/ADT/DenseMap.h>

#include <map>

namespace infracc::coll {

namespace {

using K = CollectiveKind;

// Which contributions a byte holds: count per member (empty: the rank holds nothing).
using Content = std::vector<uint16_t>;

struct Piece {
  uint64_t hi = 0;
  Content content;
  // Accesses since the last copy into these bytes, for the race proof.
  std::vector<std::pair<uint32_t, bool>> writers;   // (node, is reduce)
  std::vector<uint32_t> reads;
};
using State = std::map<uint64_t, Piece>;   // keyed by lo; pieces cover [0, extent)

struct Captured {
  uint64_t lo, hi;
  Content content;
};

std::string contentText(const Content &c) {
  if (c.empty())
    return "nothing";
  std::string s;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i]) {
      s += (s.empty() ? "" : ",") + std::to_string(i);
      if (c[i] > 1)
        s += "x" + std::to_string(c[i]);
    }
  return s.empty() ? "no contribution" : "contributions of members {" + s + "}";
}

class Checker {
public:
  Checker(const Schedule &s, const Recording &rec, llvm::ArrayRef<Communicator> comms,
          const CheckOptions &opts, CheckResult &out)
      : s_(s), rec_(rec), comms_(comms), opts_(opts), out_(out) {}

  void run();

private:
  bool error(const std::string &msg) {
    if (out_.errors.size() < opts_.maxErrors)
      out_.errors.push_back(msg);
    return false;
  }
  std::string opText(uint32_t g) const {
    uint32_t r = s_.rankOf(g);
    std::string t = "rank " + std::to_string(r) + " " + opKindName(s_.kind(g)).str() + " #" +
                    std::to_string(g - s_.rankBegin(r));
    if (s_.kind(g) == OpKind::Send)
      t += " (to rank " + std::to_string(s_.peer(g)) + ")";
    else if (s_.kind(g) == OpKind::Recv)
      t += " (from rank " + std::to_string(s_.peer(g)) + ")";
    return t;
  }
  std::string instText(uint32_t inst) const {
    const InstanceInfo &ii = rec_.instances[inst];
    return collectiveKindName(ii.kind).str() + " " + std::to_string(ii.bytes) + "b on " +
           std::to_string(comms_[ii.communicator].ranks.size()) + " ranks (communicator " +
           std::to_string(comms_[ii.communicator].id) + ", algorithm " +
           collAlgorithmName(ii.algorithm).str() +
           (ii.kind == K::Bcast || ii.kind == K::Reduce || ii.kind == K::Gather ||
                    ii.kind == K::Scatter
                ? ", root " + std::to_string(ii.root)
                : "") +
           ")";
  }
  llvm::ArrayRef<Interval> intervals(uint32_t g) const {
    const OpRecord &r = rec_.records[g];
    return {rec_.intervals.data() + r.intervalsBegin, r.intervalsCount};
  }
  bool checkInstance(uint32_t inst, const std::vector<uint32_t> &ops);

  const Schedule &s_;
  const Recording &rec_;
  llvm::ArrayRef<Communicator> comms_;
  const CheckOptions &opts_;
  CheckResult &out_;
  llvm::DenseMap<uint32_t, uint32_t> match_;   // send <-> recv, both directions
};

// Splits so that a piece starts at `at` (at < extent).
State::iterator splitAt(State &st, uint64_t at) {
  auto it = st.upper_bound(at);
  --it;
  if (it->first == at)
    return it;
  Piece tail = it->second;
  it->second.hi = at;
  return st.emplace(at, std::move(tail)).first;
}

template <typename F> void forRange(State &st, uint64_t extent, uint64_t lo, uint64_t hi, F &&f) {
  if (lo >= hi)
    return;
  auto it = splitAt(st, lo);
  if (hi < extent)
    splitAt(st, hi);
  it = st.find(lo);
  for (; it != st.end() && it->first < hi; ++it)
    f(it->first, it->second);
}

bool Checker::checkInstance(uint32_t inst, const std::vector<uint32_t> &ops) {
  const InstanceInfo &ii = rec_.instances[inst];
  const Communicator &comm = comms_[ii.communicator];
  uint32_t P = uint32_t(comm.ranks.size());
  std::string where = instText(inst);
  llvm::DenseMap<uint32_t, uint32_t> member;
  for (uint32_t i = 0; i < P; ++i)
    member[comm.ranks[i]] = i;
  Layout L;
  L.kind = ii.kind;
  L.bytes = ii.bytes;
  L.members = P;
  L.pairOffset = ii.pairOffset;
  uint64_t extent = L.extent();
  bool barrier = ii.kind == K::Barrier;

  // Nodes and the happens-before graph over the instance's ops.
  size_t N = ops.size();
  llvm::DenseMap<uint32_t, uint32_t> node;
  for (uint32_t i = 0; i < N; ++i)
    node[ops[i]] = i;
  std::vector<std::vector<uint32_t>> succ(N);
  std::vector<uint32_t> indeg(N, 0);
  llvm::DenseMap<uint32_t, uint32_t> applyOf;   // reduction calc -> its recv
  for (uint32_t i = 0; i < N; ++i) {
    uint32_t g = ops[i];
    for (uint32_t raw : s_.successorsRaw(g)) {
      uint32_t sg = s_.rankBegin(s_.rankOf(g)) + (raw & ~Schedule::IRequiresBit);
      auto it = node.find(sg);
      if (it == node.end())
        continue;
      if ((raw & Schedule::IRequiresBit) && s_.kind(g) != OpKind::Send)
        continue;   // a recv's or calc's start says nothing about its data
      succ[i].push_back(it->second);
      ++indeg[it->second];
    }
    if (s_.kind(g) == OpKind::Send) {
      uint32_t r = match_.lookup(g);
      succ[i].push_back(node[r]);
      ++indeg[node[r]];
    }
    if (s_.kind(g) == OpKind::Recv && rec_.records[g].applyAt != g)
      applyOf[rec_.records[g].applyAt] = g;
  }
  std::vector<uint32_t> order;
  order.reserve(N);
  for (uint32_t i = 0; i < N; ++i)
    if (!indeg[i])
      order.push_back(i);
  for (size_t q = 0; q < order.size(); ++q)
    for (uint32_t t : succ[order[q]])
      if (--indeg[t] == 0)
        order.push_back(t);
  if (order.size() != N) {
    for (uint32_t i = 0; i < N; ++i)
      if (indeg[i])
        return error(where + ": " + std::to_string(N - order.size()) +
                     " ops can never run (a cycle through dependencies and messages), e.g. " +
                     opText(ops[i]));
  }
  bool races = N <= opts_.raceCheckLimit;
  size_t W = (N + 63) / 64;
  std::vector<uint64_t> anc(races ? N * W : 0, 0);
  if (races) {
    for (uint32_t i : order)
      for (uint32_t t : succ[i]) {
        uint64_t *dst = &anc[size_t(t) * W];
        const uint64_t *src = &anc[size_t(i) * W];
        for (size_t w = 0; w < W; ++w)
          dst[w] |= src[w];
        dst[i / 64] |= uint64_t(1) << (i % 64);
      }
  }
  auto hb = [&](uint32_t a, uint32_t b) {
    return !races || (anc[size_t(b) * W + a / 64] >> (a % 64)) & 1;
  };

  // Initial state.
  std::vector<State> state(P);
  for (State &st : state)
    st[0] = Piece{extent, {}, {}, {}};
  auto own = [&](uint32_t m, Interval iv, uint32_t from) {
    if (iv.lo >= iv.hi)
      return;
    forRange(state[m], extent, iv.lo, iv.hi, [&](uint64_t, Piece &p) {
      p.content.assign(P, 0);
      p.content[from] = 1;
    });
  };
  for (uint32_t m = 0; m < P; ++m) {
    switch (ii.kind) {
    case K::Allreduce:
    case K::Reduce:
    case K::Reducescatter:
      own(m, {0, extent}, m);
      break;
    case K::Bcast:
      if (m == ii.root)
        own(m, {0, extent}, m);
      break;
    case K::Allgather:
    case K::Gather:
    case K::Barrier:
      own(m, L.block(m), m);
      break;
    case K::Scatter:
      if (m == ii.root)
        own(m, {0, extent}, m);
      break;
    case K::Alltoall:
    case K::Alltoallv:
      for (uint32_t d = 0; d < P; ++d)
        own(m, L.pair(m, d), m);
      break;
    }
  }

  // Execution in a topological order, with the race proof along the way.
  std::vector<std::vector<Captured>> sent(N);
  bool ok = true;
  auto race = [&](uint32_t a, uint32_t b, const char *what, uint64_t lo, uint64_t hi) {
    ok = error(where + ": " + opText(ops[b]) + " " + what + " bytes [" + std::to_string(lo) +
               "," + std::to_string(hi) + ") that " + opText(ops[a]) +
               " also accesses, but nothing orders the two");
  };
  auto write = [&](uint32_t w, uint32_t recvNode) {
    uint32_t g = ops[recvNode];
    uint32_t m = member.lookup(s_.rankOf(g));
    bool reduce = rec_.records[g].mode == DataMode::Reduce;
    for (const Captured &c : sent[node[match_.lookup(g)]])
      forRange(state[m], extent, c.lo, c.hi, [&](uint64_t lo, Piece &p) {
        if (races && ok) {
          for (uint32_t r : p.reads)
            if (!hb(r, w))
              race(r, w, "writes", lo, p.hi);
          for (auto [wr, red] : p.writers)
            if (!(reduce && red) && !hb(wr, w))
              race(wr, w, "writes", lo, p.hi);
        }
        p.reads.clear();
        if (!reduce)
          p.writers.clear();
        p.writers.push_back({w, reduce});
        if (reduce && !p.content.empty() && !c.content.empty()) {
          for (uint32_t k = 0; k < P; ++k)
            p.content[k] = uint16_t(p.content[k] + c.content[k]);
        } else if (reduce && p.content.empty()) {
          p.content = c.content;
        } else if (!reduce) {
          p.content = c.content;
        }
      });
  };
  for (uint32_t i : order) {
    uint32_t g = ops[i];
    OpKind k = s_.kind(g);
    if (k == OpKind::Send) {
      uint32_t m = member.lookup(s_.rankOf(g));
      for (Interval iv : intervals(g))
        forRange(state[m], extent, iv.lo, iv.hi, [&](uint64_t lo, Piece &p) {
          if (races && ok)
            for (auto [wr, red] : p.writers)
              if (!hb(wr, i))
                race(wr, i, "reads", lo, p.hi);
          p.reads.push_back(i);
          sent[i].push_back({lo, p.hi, p.content});
        });
    } else if (k == OpKind::Recv) {
      if (rec_.records[g].applyAt == g)
        write(i, i);
    } else if (k == OpKind::Calc) {
      auto it = applyOf.find(g);
      if (it != applyOf.end())
        write(i, node[it->second]);
    }
    if (!ok)
      return false;
  }
  if (races)
    ++out_.racesChecked;

  // The definition.
  auto expect = [&](uint32_t m, Interval iv, const Content &want, const char *what) {
    if (iv.lo >= iv.hi)
      return true;
    bool good = true;
    forRange(state[m], extent, iv.lo, iv.hi, [&](uint64_t lo, Piece &p) {
      if (good && p.content != want) {
        good = false;
        ok = error(where + ": afterwards rank " + std::to_string(comm.ranks[m]) + " (member " +
                   std::to_string(m) + ") holds " + contentText(p.content) + " in bytes [" +
                   std::to_string(lo) + "," + std::to_string(p.hi) + ") of " + what +
                   ", but should hold " + contentText(want));
      }
    });
    return good;
  };
  Content all(P, 1);
  auto only = [&](uint32_t from) {
    Content c(P, 0);
    c[from] = 1;
    return c;
  };
  for (uint32_t m = 0; m < P && ok; ++m) {
    switch (ii.kind) {
    case K::Allreduce:
      expect(m, {0, extent}, all, "the result");
      break;
    case K::Reduce:
      if (m == ii.root)
        expect(m, {0, extent}, all, "the result");
      break;
    case K::Reducescatter:
      expect(m, L.block(m), all, "its block");
      break;
    case K::Bcast:
      expect(m, {0, extent}, only(ii.root), "the buffer");
      break;
    case K::Allgather:
    case K::Barrier:
      for (uint32_t b = 0; b < P && ok; ++b)
        expect(m, L.block(b), only(b), barrier ? "what it learnt" : "the gathered blocks");
      break;
    case K::Gather:
      if (m == ii.root)
        for (uint32_t b = 0; b < P && ok; ++b)
          expect(m, L.block(b), only(b), "the gathered blocks");
      break;
    case K::Scatter:
      expect(m, L.block(m), only(ii.root), "its block");
      break;
    case K::Alltoall:
    case K::Alltoallv:
      for (uint32_t src = 0; src < P && ok; ++src)
        expect(m, L.pair(src, m), only(src), "the received blocks");
      break;
    }
  }
  return ok;
}

void Checker::run() {
  // Group the lowered ops by instance and match the messages.
  std::vector<std::vector<uint32_t>> byInstance(rec_.instances.size());
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint32_t> sends, recvs;
  for (uint32_t g = 0; g < s_.numOps(); ++g) {
    const OpRecord &r = rec_.records[g];
    if (r.instance == ~0u)
      continue;
    byInstance[r.instance].push_back(g);
    OpKind k = s_.kind(g);
    if (k != OpKind::Send && k != OpKind::Recv)
      continue;
    uint32_t me = s_.rankOf(g);
    auto key = k == OpKind::Send ? std::make_tuple(me, s_.peer(g), s_.tag(g))
                                 : std::make_tuple(s_.peer(g), me, s_.tag(g));
    auto &table = k == OpKind::Send ? sends : recvs;
    auto [it, fresh] = table.emplace(key, g);
    if (!fresh)
      error(opText(g) + " and " + opText(it->second) + " share source, destination and tag " +
            std::to_string(s_.tag(g)) + ", so which message each gets depends on timing");
  }
  for (auto &[key, sg] : sends) {
    auto it = recvs.find(key);
    if (it == recvs.end()) {
      error(opText(sg) + " with tag " + std::to_string(std::get<2>(key)) + " has no matching recv");
      continue;
    }
    uint32_t rg = it->second;
    match_[sg] = rg;
    match_[rg] = sg;
    const OpRecord &a = rec_.records[sg], &b = rec_.records[rg];
    llvm::ArrayRef<Interval> ia = intervals(sg), ib = intervals(rg);
    bool same = a.instance == b.instance && a.payload == b.payload && ia.size() == ib.size();
    for (size_t i = 0; same && i < ia.size(); ++i)
      same = ia[i].lo == ib[i].lo && ia[i].hi == ib[i].hi;
    if (!same) {
      error(opText(sg) + " and " + opText(rg) + " match but disagree on the data they move");
      continue;
    }
    bool barrier = rec_.instances[a.instance].kind == K::Barrier;
    uint64_t sum = 0;
    for (Interval iv : ia)
      sum += iv.hi - iv.lo;
    if (!barrier && sum != a.payload)
      error(opText(sg) + " carries " + std::to_string(sum) + " bytes of data but says " +
            std::to_string(a.payload));
    uint64_t wire = barrier ? 1 : protocolWireBytes(rec_.instances[a.instance].protocol, a.payload);
    if (s_.size(sg) != wire || s_.size(rg) != wire)
      error(opText(sg) + " has size " + std::to_string(s_.size(sg)) + " and its recv " +
            std::to_string(s_.size(rg)) + ", but " + std::to_string(a.payload) +
            " bytes of data take " + std::to_string(wire) + " on the wire");
  }
  for (auto &[key, rg] : recvs)
    if (!sends.count(key))
      error(opText(rg) + " with tag " + std::to_string(std::get<2>(key)) + " has no matching send");
  if (!out_.errors.empty())
    return;
  for (uint32_t inst = 0; inst < byInstance.size(); ++inst) {
    if (out_.errors.size() >= opts_.maxErrors)
      return;
    if (rec_.instances[inst].algorithm == CollAlgorithm::Auto)
      continue;   // never issued
    if (checkInstance(inst, byInstance[inst]))
      ++out_.instancesChecked;
  }
}

} // namespace

CheckResult checkCollectives(const Schedule &lowered, const Recording &rec,
                             llvm::ArrayRef<Communicator> communicators, const CheckOptions &opts) {
  CheckResult r;
  Checker(lowered, rec, communicators, opts, r).run();
  return r;
}

} // namespace infracc::coll
