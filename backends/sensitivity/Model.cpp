#include "backends/sensitivity/Model.h"

#include "ir/MessageMatching.h"
#include "ir/Schedule.h"
#include "support/Diagnostics.h"
#include "support/HugePages.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <iterator>

namespace infracc::sens {

namespace {
constexpr uint32_t IBit = Schedule::IRequiresBit;
/// LogGOPSim's unsigned max of (s-1)O and (s-1)G, as a signed cost.
int64_t unsignedMax(uint64_t a, uint64_t b) { return static_cast<int64_t>(std::max(a, b)); }
} // namespace

Model::Model(const Schedule &s, ModelOptions opts) : s_(s), o_(std::move(opts)) {
  // The varied parameter contributes through the slopes only.
  if (o_.param == ParamKind::o)
    o_.params.o = 0;
  if (o_.messages.costs.empty()) {
    MessageCost c;
    c.L = o_.param == ParamKind::L ? Line{0, 1} : Line{static_cast<int64_t>(o_.params.L), 0};
    c.G = o_.params.G;
    c.gIsParam = o_.param == ParamKind::G;
    o_.messages.costs.push_back(c);
  }
}
Model::~Model() = default;

llvm::Expected<std::unique_ptr<Model>> Model::build(const Schedule &s, ModelOptions opts) {
  std::unique_ptr<Model> m(new Model(s, std::move(opts)));
  if (llvm::Error e = m->buildElements())
    return e;
  return m;
}

llvm::Error Model::buildElements() {
  const Schedule &s = s_;
  const uint64_t N = s.numOps();
  const uint32_t P = s.numRanks(), C = s.maxCpu() + 1, NN = s.maxNic() + 1;
  for (uint64_t g = 0; g < N; ++g)
    if (!isGoalCoreKind(s.kind(g)))
      return inputError(fmt::format("rank {}, op {}: '{}' is not lowered; the analysis runs "
                                    "on send, recv and calc (add {} to -passes)",
                                    s.rankOf(g), s.opName(g), opKindName(s.kind(g)).str(),
                                    loweringPassFor(s.kind(g)).str()));
  partner_ = matchMessages(s);
  std::vector<uint32_t> rankOf;
  reserveHugePages(rankOf, N);
  rankOf.resize(N);
  for (uint32_t r = 0; r < P; ++r)
    std::fill(rankOf.begin() + s.rankBegin(r), rankOf.begin() + s.rankBegin(r) + s.numOps(r), r);
  for (uint64_t g = 0; g < N; ++g) {
    OpKind k = s.kind(g);
    if ((k == OpKind::Send || k == OpKind::Recv) && partner_[g] == NoPartner)
      return inputError(fmt::format(
          "rank {}, {} ({} {} rank {}): no {} matches it in MPI order; the analysis needs every "
          "message matched statically (wildcard sources and tags are not supported; -emit=sim "
          "matches them at run time)",
          rankOf[g], s.opName(g), k == OpKind::Send ? "send to" : "recv from",
          k == OpKind::Send ? "" : "", s.peer(g) == AnySource ? "any" : std::to_string(s.peer(g)),
          k == OpKind::Send ? "recv" : "send"));
  }

  // Dependency predecessors (for release times).
  reserveHugePages(predBegin_, N + 1);
  predBegin_.assign(N + 1, 0);
  for (uint64_t g = 0; g < N; ++g)
    for (uint32_t raw : s.successorsRaw(g))
      ++predBegin_[s.rankBegin(rankOf[g]) + (raw & ~IBit) + 1];
  for (uint64_t g = 0; g < N; ++g)
    predBegin_[g + 1] += predBegin_[g];
  reserveHugePages(pred_, predBegin_[N]);
  pred_.resize(predBegin_[N]);
  // predBegin_[op] serves as the op's cursor, ending where the next op's entries
  // begin; shifted back by one afterwards (no second array of positions).
  for (uint64_t g = 0; g < N; ++g)
    for (uint32_t raw : s.successorsRaw(g))
      pred_[predBegin_[s.rankBegin(rankOf[g]) + (raw & ~IBit)]++] =
          static_cast<uint32_t>(g) | (raw & IBit);
  for (uint64_t g = N; g > 0; --g)
    predBegin_[g] = predBegin_[g - 1];
  predBegin_[0] = 0;

  auto rendezvous = [&](uint32_t send) { return s.size(send) > o_.params.S; };
  // Kahn over ops [0, N) and message nodes N + recv. A recv's requires-successors wait
  // for its message, and so do a rendezvous send's.
  // (The messages' counts are at most 2, a byte each: zeroing fresh pages is a large
  // part of the model's build, so every array costs.)
  std::vector<uint32_t> indeg;
  std::vector<uint8_t> msgIndeg;
  reserveHugePages(indeg, N);
  indeg.resize(N);
  reserveHugePages(msgIndeg, N);
  msgIndeg.resize(N);
  for (uint64_t g = 0; g < N; ++g) {
    indeg[g] = predBegin_[g + 1] - predBegin_[g];
    msgIndeg[g] = s.kind(g) == OpKind::Recv ? 2 : 0;   // its send and its post
  }
  // Kahn's queue: nodes to process from qi on; the processed prefix is dropped now and
  // then, so the queue holds about the frontier (every rank's ready ops) and not every
  // node of the schedule.
  std::vector<uint32_t> queue;
  std::vector<uint32_t> roots;
  reserveHugePages(bigBatch_, N);
  bigBatch_.assign(N, 0);
  for (uint32_t r = 0; r < P; ++r) {
    roots.clear();
    for (uint32_t g = s.rankBegin(r); g < s.rankBegin(r) + s.numOps(r); ++g)
      if (!indeg[g])
        roots.push_back(g);
    // LogGOPSim takes a rank's ready ops sends first, then recvs, then calcs.
    std::stable_sort(roots.begin(), roots.end(),
                     [&](uint32_t a, uint32_t b) { return s.kind(a) < s.kind(b); });
    if (roots.size() > 16)
      for (uint32_t x : roots)
        bigBatch_[x] = 1;
    queue.insert(queue.end(), roots.begin(), roots.end());
  }

  std::vector<uint32_t> lastCpu(size_t(P) * C, None), lastSend(size_t(P) * NN, None),
      lastRecv(size_t(P) * NN, None);
  for (std::vector<uint32_t> *v : {&elemOf_, &msgOf_}) {
    reserveHugePages(*v, N);
    v->assign(N, None);
  }
  const size_t expect = N + N;   // ops + at most one message per op
  reserveHugePages(kind_, expect);
  for (std::vector<uint32_t> *v : {&op_, &cpuPrev_, &nicPrev_, &aux_})
    reserveHugePages(*v, expect);
  auto add = [&](Kind k, uint32_t op, uint32_t cpuPrev, uint32_t nicPrev, uint32_t aux) {
    kind_.push_back(k);
    op_.push_back(op);
    cpuPrev_.push_back(cpuPrev);
    nicPrev_.push_back(nicPrev);
    aux_.push_back(aux);
    return static_cast<uint32_t>(kind_.size() - 1);
  };
  // Ops freed by one event, as LogGOPSim orders them: irequires-successors before
  // requires-successors, then sorted by kind (its std::sort, stable up to 16 ops).
  std::vector<uint32_t> batch;
  auto free = [&](uint32_t node) {
    if (node < N ? --indeg[node] == 0 : --msgIndeg[node - N] == 0)
      batch.push_back(node);
  };
  auto freeSuccessors = [&](uint32_t g, bool irequires, bool requires_) {
    const uint32_t base = s.rankBegin(rankOf[g]);
    for (uint32_t raw : s.successorsRaw(g))
      if ((raw & IBit) ? irequires : requires_)
        free(base + (raw & ~IBit));
  };
  auto flush = [&] {
    if (batch.size() > 1)   // (std::stable_sort allocates a buffer even for one element)
      std::stable_sort(batch.begin(), batch.end(), [&](uint32_t a, uint32_t b) {
        return a < N && b < N && s.kind(a) < s.kind(b);
      });
    if (batch.size() > 16)
      for (uint32_t x : batch)
        if (x < N)
          bigBatch_[x] = 1;
    queue.insert(queue.end(), batch.begin(), batch.end());
    batch.clear();
  };
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    if (qi >= (size_t(1) << 16) && 2 * qi >= queue.size()) {
      queue.erase(queue.begin(), queue.begin() + static_cast<ptrdiff_t>(qi));
      qi = 0;
    }
    const uint32_t node = queue[qi];
    if (node < N) {
      const uint32_t g = node, h = rankOf[g];
      const OpKind k = s.kind(g);
      uint32_t &cpu = lastCpu[size_t(h) * C + s.cpu(g)];
      bool done = true;
      if (k == OpKind::Calc) {
        cpu = elemOf_[g] = add(Calc, g, cpu, None, None);
      } else if (k == OpKind::Send) {
        uint32_t &nic = lastSend[size_t(h) * NN + s.nic(g)];
        cpu = nic = elemOf_[g] = add(Send, g, cpu, nic, None);
        done = !rendezvous(g);
        free(static_cast<uint32_t>(N + partner_[g]));
      } else {
        cpu = elemOf_[g] = add(Post, g, cpu, None, None);
        done = false;
        free(static_cast<uint32_t>(N + g));
      }
      freeSuccessors(g, true, done);
    } else {
      // The message of recv r, processed at its rank d on the sender's cpu and nic.
      const uint32_t r = static_cast<uint32_t>(node - N), u = partner_[r];
      const uint32_t d = rankOf[r], src = rankOf[u], c = s.cpu(u), n = s.nic(u);
      uint32_t &cpu = lastCpu[size_t(d) * C + c];
      uint32_t &nic = lastRecv[size_t(d) * NN + n];
      const uint32_t m = add(Msg, r, cpu, nic, elemOf_[u]);
      cpu = nic = msgOf_[r] = msgOf_[u] = m;
      ++messages_;
      if (rendezvous(u)) {
        freeSuccessors(u, false, true);
        uint32_t &scpu = lastCpu[size_t(src) * C + c];
        scpu = add(RaiseCpu, u, scpu, None, m);
        uint32_t &snic = lastSend[size_t(src) * NN + n];
        snic = add(RaiseNic, u, None, snic, m);
      }
      freeSuccessors(r, false, true);
    }
    flush();
  }
  uint64_t placed = 0;
  for (uint64_t g = 0; g < N; ++g)
    placed += elemOf_[g] != None;
  if (placed != N) {
    for (uint64_t g = 0; g < N; ++g)
      if (elemOf_[g] == None)
        return inputError(fmt::format(
            "rank {}, {}: the schedule cannot finish (this op waits on a dependency cycle or "
            "on a message that needs it; -emit=sim lists every stuck op)",
            rankOf[g], s.opName(g)));
  }
  for (uint32_t t : lastCpu)
    if (t != None)
      cpuTails_.push_back(t);
  std::sort(cpuTails_.begin(), cpuTails_.end());
  for (std::vector<int64_t> *v : {&A_, &Br_, &Bl_}) {
    reserveHugePages(*v, kind_.size());
    v->assign(kind_.size(), 0);
  }
  return llvm::Error::success();
}

uint64_t Model::memoryBytes() const {
  auto bytes = [](const auto &v) { return uint64_t(v.capacity()) * sizeof(v[0]); };
  return bytes(kind_) + bytes(op_) + bytes(cpuPrev_) + bytes(nicPrev_) + bytes(aux_) +
         bytes(cpuTails_) + bytes(elemOf_) + bytes(msgOf_) + bytes(partner_) +
         bytes(predBegin_) + bytes(pred_) + bytes(A_) + bytes(Br_) + bytes(Bl_);
}

// --- costs ---------------------------------------------------------------------------

/// The cpu clock after element p, as candidate lines from p's start.
template <class F> void Model::forEachClockAfter(uint32_t p, F &&f) const {
  const sim::LogGPParams &pr = o_.params;
  const int64_t oB = o_.param == ParamKind::o ? 1 : 0;
  const uint32_t g = op_[p];
  switch (kind_[p]) {
  case Calc:
    f(p, Line{static_cast<int64_t>(s_.size(g)), 0});
    return;
  case Send:
    f(p, Line{static_cast<int64_t>(pr.o + pr.O.forMessage(s_.size(g))), oB});
    return;
  case Msg: {
    const uint32_t u = partner_[g];
    const uint64_t bytes = s_.size(u);
    const MessageCost &mc = o_.messages.of(u);
    const uint64_t cO = pr.O.forMessage(bytes);
    const int64_t o = static_cast<int64_t>(pr.o);
    if (!mc.gIsParam) {
      f(p, Line{o + unsignedMax(cO, mc.G.forMessage(bytes)), oB});
      return;
    }
    // G varies: max((s-1)O, (s-1)G) is the larger of two lines (for a 0-byte message
    // LogGOPSim's wrap-around makes both negative: -min(O, G) = max(-O, -G)).
    const int64_t sm1 = static_cast<int64_t>(bytes) - 1;
    if (pr.O.value() != 0)
      f(p, Line{o + static_cast<int64_t>(cO), oB});
    f(p, Line{o, oB + sm1});
    return;
  }
  default:   // post, raise: the clock stays at the element's time
    f(p, Line{0, 0});
  }
}

/// The nic clock after element p (send: send gap; raise-nic: its time; msg: receive gap).
template <class F> void Model::forEachNicAfter(uint32_t p, F &&f) const {
  const sim::LogGPParams &pr = o_.params;
  if (kind_[p] == RaiseNic) {
    f(p, Line{0, 0});
    return;
  }
  const uint32_t u = kind_[p] == Msg ? partner_[op_[p]] : op_[p];
  const uint64_t bytes = s_.size(u);
  const MessageCost &mc = o_.messages.of(u);
  const int64_t g = static_cast<int64_t>(pr.g);
  if (mc.gIsParam)
    f(p, Line{g, static_cast<int64_t>(bytes) - 1});
  else
    f(p, Line{g + static_cast<int64_t>(mc.G.forMessage(bytes)), 0});
}

template <class F> void Model::forEachCandidate(uint32_t e, F &&f) const {
  const uint32_t cp = cpuPrev_[e], np = nicPrev_[e];
  switch (kind_[e]) {
  case Calc:
  case Post:
  case RaiseCpu:
    if (cp != None)
      forEachClockAfter(cp, f);
    else
      f(None, Line{0, 0});
    if (kind_[e] == RaiseCpu)
      f(aux_[e], Line{0, 0});
    return;
  case RaiseNic:
    if (np != None)
      forEachNicAfter(np, f);
    else
      f(None, Line{0, 0});
    f(aux_[e], Line{0, 0});
    return;
  case Send:
    if (cp != None)
      forEachClockAfter(cp, f);
    if (np != None)
      forEachNicAfter(np, f);
    if (cp == None && np == None)
      f(None, Line{0, 0});
    return;
  case Msg: {
    const uint32_t r = op_[e], u = partner_[r];
    const MessageCost &mc = o_.messages.of(u);
    const int64_t oB = o_.param == ParamKind::o ? 1 : 0;
    f(aux_[e], Line{static_cast<int64_t>(o_.params.o) + mc.L.a, oB + mc.L.b});   // arrival
    f(elemOf_[r], Line{0, 0});                                                  // posted
    if (cp != None)
      forEachClockAfter(cp, f);
    if (np != None)
      forEachNicAfter(np, f);
    return;
  }
  }
}

template <class F> void Model::forEachSink(F &&f) const {
  for (uint32_t t : cpuTails_)
    forEachClockAfter(t, f);
  if (cpuTails_.empty())
    f(None, Line{0, 0});
}

void Model::candidates(uint32_t e, llvm::function_ref<void(uint32_t, Line)> f) const {
  forEachCandidate(e, f);
}
void Model::sinkCandidates(llvm::function_ref<void(uint32_t, Line)> f) const { forEachSink(f); }

// --- evaluation -------------------------------------------------------------------------

namespace {
/// The maximum of candidate lines at p = P/Q, with the largest slope among the tied
/// (right derivative) and the smallest (left derivative).
struct Best {
  Int128 v = 0;
  int64_t A = 0, Br = 0, Bl = 0;
  bool any = false;
  void offer(int64_t A1, int64_t Br1, int64_t Bl1, int64_t P, int64_t Q) {
    Int128 v1 = Int128(A1) * Q + Int128(Br1) * P;
    if (!any || v1 > v) {
      any = true;
      v = v1;
      A = A1;
      Br = Br1;
      Bl = Bl1;
    } else if (v1 == v) {
      if (Br1 > Br) {
        Br = Br1;
        A = A1;
      }
      Bl = std::min(Bl, Bl1);
    }
  }
};
} // namespace

Evaluation Model::evaluate(const Rational &p, bool checkContention) {
  assert(p.num >= INT64_MIN && p.num <= INT64_MAX && p.den <= INT64_MAX);
  const int64_t P = static_cast<int64_t>(p.num), Q = static_cast<int64_t>(p.den);
  ++sweeps_;
  Evaluation ev;
  ev.at = p;
  const size_t E = kind_.size();
  for (size_t e = 0; e < E; ++e) {
    Best b;
    forEachCandidate(static_cast<uint32_t>(e), [&](uint32_t pr, Line c) {
      if (pr == None)
        b.offer(c.a, c.b, c.b, P, Q);
      else
        b.offer(A_[pr] + c.a, Br_[pr] + c.b, Bl_[pr] + c.b, P, Q);
    });
    A_[e] = b.A;
    Br_[e] = b.Br;
    Bl_[e] = b.Bl;
    // The first place is what the report names; after it the sweep only evaluates.
    if (checkContention && !ev.contention)
      ev.contention = checkElement(static_cast<uint32_t>(e), P, Q);
  }
  Best t;
  forEachSink([&](uint32_t pr, Line c) {
    if (pr == None)
      t.offer(c.a, c.b, c.b, P, Q);
    else
      t.offer(A_[pr] + c.a, Br_[pr] + c.b, Bl_[pr] + c.b, P, Q);
  });
  ev.value = Rational(t.v, Q);
  ev.right = {t.A, t.Br};
  // The left line passes through the same point: A_l = A_r + (B_r - B_l) p.
  Rational Al = Rational(t.A) + Rational(t.Br - t.Bl) * p;
  assert(Al.isInteger() && "a path line has an integer intercept");
  ev.left = {Al.num, t.Bl};
  return ev;
}

// --- the whole curve in one pass ----------------------------------------------------------

namespace {
/// [lo, hi] as lo = loP/loQ and hi = hiP/hiQ.
struct Range {
  int64_t loP, loQ, hiP, hiQ;
  /// Lines u and v (u.b < v.b) meet at or left of lo: v is above u on all of (lo, hi].
  bool meetAtOrBeforeLo(const Line &u, const Line &v) const {
    return (Int128(u.a) - v.a) * loQ <= (Int128(v.b) - u.b) * loP;
  }
  /// ... at or right of hi: u is above v on all of [lo, hi).
  bool meetAtOrAfterHi(const Line &u, const Line &v) const {
    return (Int128(u.a) - v.a) * hiQ >= (Int128(v.b) - u.b) * hiP;
  }
};

/// Whether m (l.b < m.b < r.b) is nowhere strictly above both l and r: l and r meet
/// at or below it.
/// (Times and slopes stay far below 2^62, as in evaluate(), so their differences fit
/// 64 bits; the products mostly fit too, and are taken in 128 bits when they do not.)
inline bool hidden(const Line &l, const Line &m, const Line &r) {
  const int64_t x = l.a - m.a, y = r.b - m.b, u = m.a - r.a, v = m.b - l.b;
  int64_t xy, uv;
  if (!__builtin_mul_overflow(x, y, &xy) && !__builtin_mul_overflow(u, v, &uv))
    return xy >= uv;
  return Int128(x) * y >= Int128(u) * v;
}

/// Builds the upper envelope of lines offered in order of slope (push), then keeps the
/// lines maximal on an interval of positive length in the range (the one line maximal
/// just right of lo when the range is a point).
struct Hull {
  std::vector<Line> &out;
  [[gnu::always_inline]] void push(const Line &l) {
    if (!out.empty() && out.back().b == l.b) {
      if (l.a <= out.back().a)
        return;
      out.pop_back();
    }
    while (out.size() >= 2 && hidden(out[out.size() - 2], out.back(), l))
      out.pop_back();
    out.push_back(l);
  }
  void trim(const Range &rg, bool point) {
    size_t first = 0, last = out.size();
    while (last - first >= 2 && rg.meetAtOrBeforeLo(out[first], out[first + 1]))
      ++first;
    if (point)
      last = first + 1;
    while (last - first >= 2 && rg.meetAtOrAfterHi(out[last - 2], out[last - 1]))
      --last;
    out.erase(out.begin() + static_cast<ptrdiff_t>(last), out.end());
    out.erase(out.begin(), out.begin() + static_cast<ptrdiff_t>(first));
  }
};

} // namespace

std::vector<PathLine> Model::envelope(const Rational &lo, const Rational &hi) {
  assert(lo <= hi && lo.num >= INT64_MIN && hi.num <= INT64_MAX && lo.den <= INT64_MAX &&
         hi.den <= INT64_MAX);
  ++sweeps_;
  const Range rg{static_cast<int64_t>(lo.num), static_cast<int64_t>(lo.den),
                 static_cast<int64_t>(hi.num), static_cast<int64_t>(hi.den)};
  const bool point = lo == hi;
  const size_t E = kind_.size();

  // How many candidates read each element, so that its envelope is dropped after the
  // last one (at most six: the next element on its cpu, twice when G varies, on its
  // nic, a message or two raises, a sink).
  std::vector<uint8_t> uses;
  reserveHugePages(uses, E);
  uses.assign(E, 0);
  auto count = [&](uint32_t pr, Line) {
    if (pr != None) {
      assert(uses[pr] < 255);
      ++uses[pr];
    }
  };
  for (size_t e = 0; e < E; ++e)
    forEachCandidate(static_cast<uint32_t>(e), count);
  forEachSink(count);

  // Envelopes live in slots; an element whose time is one earlier element's plus a
  // line shares that element's slot (a calc, a post: most elements), so only maxima
  // of several candidates build a new one. refs: reads still to come, over all the
  // elements sharing the slot.
  std::vector<std::vector<Line>> slots;
  std::vector<uint32_t> refs, freeSlots;
  auto release = [&](uint32_t pr) {
    const uint32_t s = static_cast<uint32_t>(Bl_[pr]);
    if (--refs[s] == 0)
      freeSlots.push_back(s);
  };
  struct Candidate {
    uint32_t pred;
    Line c;
  };
  llvm::SmallVector<Candidate, 8> cands, kept;
  std::vector<Line> hull, spare;
  // The maximum of the candidates as an envelope (in `hull`): their lines merged by
  // slope straight into the hull.
  struct Source {
    const Line *at, *end;
    Line shift;
  };
  llvm::SmallVector<Source, 8> sources;
  auto combine = [&] {
    sources.clear();
    for (const Candidate &cd : kept) {
      if (cd.pred == None) {
        sources.push_back({&cd.c, &cd.c + 1, Line{0, 0}});
      } else {
        const std::vector<Line> &v = slots[static_cast<size_t>(Bl_[cd.pred])];
        const Line shift{A_[cd.pred] + cd.c.a, Br_[cd.pred] + cd.c.b};
        // One envelope shifted twice by the same slope: the higher copy is above the
        // other everywhere (a message's post and the cpu element before it, often).
        auto same = std::find_if(sources.begin(), sources.end(), [&](const Source &o) {
          return o.at == v.data() && o.shift.b == shift.b;
        });
        if (same == sources.end())
          sources.push_back({v.data(), v.data() + v.size(), shift});
        else
          same->shift.a = std::max(same->shift.a, shift.a);
      }
    }
    // One source is an envelope over the range already; more are merged two at a time
    // (the first with the second, their envelope with the third, ...).
    const Source *first = &sources[0];
    if (sources.size() == 1) {
      hull.clear();
      for (const Line *l = first->at; l != first->end; ++l)
        hull.push_back(Line{l->a + first->shift.a, l->b + first->shift.b});
      return;
    }
    Source acc = *first;
    for (size_t k = 1; k < sources.size(); ++k) {
      spare.clear();
      Hull h{spare};
      const Source &y = sources[k];
      const Line *i = acc.at, *j = y.at;
      while (i != acc.end && j != y.end) {
        // A branch, not a select: the sides alternate in long runs (a merge's result
        // is mostly one side's lines over a few stretches of the range), which the
        // predictor follows, and a select would chain every step's loads to the last
        // comparison (measured: the 9.7 M-event curve 4.8-5.1 s with the select,
        // 3.6-3.8 s with the branch).
        const Line li{i->a + acc.shift.a, i->b + acc.shift.b}, lj{j->a + y.shift.a, j->b + y.shift.b};
        if (lj.b < li.b || (lj.b == li.b && lj.a < li.a)) {
          h.push(lj);
          ++j;
        } else {
          h.push(li);
          ++i;
        }
      }
      for (; i != acc.end; ++i)
        h.push(Line{i->a + acc.shift.a, i->b + acc.shift.b});
      for (; j != y.end; ++j)
        h.push(Line{j->a + y.shift.a, j->b + y.shift.b});
      h.trim(rg, point);
      hull.swap(spare);   // the merge so far is in hull; spare takes the next
      acc = Source{hull.data(), hull.data() + hull.size(), Line{0, 0}};
    }
  };
  // A candidate below another on the whole range adds nothing to the maximum. Known
  // without merging when the other's element follows this one's on a cpu clock: each
  // step along the clock adds at least its clock line (a send's nic candidate, the
  // send before it on the nic, is three steps back on its cpu in a blocking exchange;
  // a message's previous message likewise). Then a send often has one candidate left
  // and shares its envelope.
  auto nonNegative = [&](const Line &d) {
    return Int128(d.a) * rg.loQ + Int128(d.b) * rg.loP >= 0 &&
           Int128(d.a) * rg.hiQ + Int128(d.b) * rg.hiP >= 0;
  };
  auto below = [&](const Candidate &x, const Candidate &y) {
    if (x.pred == None || y.pred == None || x.pred >= y.pred)
      return false;
    // First whether x.pred is on y.pred's cpu chain at all (usually not: the other
    // candidate is on another rank), by the chain's links alone; the clock lines only
    // when it is.
    uint32_t z = y.pred;
    int steps = 0;
    for (; steps < 8 && z > x.pred; ++steps) {
      z = cpuPrev_[z];
      if (z == None)
        return false;
    }
    if (z != x.pred)
      return false;
    Line path{0, 0};   // time(y.pred) >= time(x.pred) + path
    z = y.pred;
    for (int step = 0; step < steps; ++step) {
      const uint32_t cp = cpuPrev_[z];
      bool first = true;   // any one of the clock's lines is a lower bound
      forEachClockAfter(cp, [&](uint32_t, Line c) {
        if (first)
          path = Line{path.a + c.a, path.b + c.b};
        first = false;
      });
      z = cp;
    }
    return nonNegative(Line{path.a + y.c.a - x.c.a, path.b + y.c.b - x.c.b});
  };
  auto prune = [&] {
    kept.clear();
    for (size_t i = 0; i < cands.size(); ++i) {
      bool drop = false;
      for (size_t j = 0; j < cands.size() && !drop; ++j)
        drop = j != i && below(cands[i], cands[j]);
      if (!drop)
        kept.push_back(cands[i]);
    }
  };
  for (size_t i = 0; i < E; ++i) {
    const uint32_t e = static_cast<uint32_t>(i);
    cands.clear();
    forEachCandidate(e, [&](uint32_t pr, Line c) { cands.push_back({pr, c}); });
    prune();
    if (kept.size() == 1 && kept[0].pred != None) {
      const uint32_t pr = kept[0].pred;
      A_[e] = A_[pr] + kept[0].c.a;
      Br_[e] = Br_[pr] + kept[0].c.b;
      Bl_[e] = Bl_[pr];
      refs[static_cast<size_t>(Bl_[e])] += uses[e];
    } else if (uses[e]) {
      combine();
      uint32_t s;
      if (!freeSlots.empty()) {
        s = freeSlots.back();
        freeSlots.pop_back();
      } else {
        s = static_cast<uint32_t>(slots.size());
        slots.emplace_back();
        refs.push_back(0);
      }
      slots[s].swap(hull);
      refs[s] = uses[e];
      A_[e] = Br_[e] = 0;
      Bl_[e] = s;
    }
    for (const Candidate &cd : cands)
      if (cd.pred != None)
        release(cd.pred);
  }
  cands.clear();
  forEachSink([&](uint32_t pr, Line c) { cands.push_back({pr, c}); });
  prune();
  combine();
  std::vector<PathLine> out;
  out.reserve(hull.size());
  for (const Line &l : hull)
    out.push_back(PathLine{Int128(l.a), l.b});
  return out;
}

// --- contention ---------------------------------------------------------------------------

std::string Model::describe(uint32_t e) const {
  const uint32_t g = op_[e];
  const uint32_t rank = s_.rankOf(g);
  switch (kind_[e]) {
  case Calc: return fmt::format("rank {} calc {}", rank, s_.opName(g));
  case Send: return fmt::format("rank {} send {}", rank, s_.opName(g));
  case Post: return fmt::format("rank {} recv {} (posting)", rank, s_.opName(g));
  case Msg: {
    const uint32_t u = partner_[g];
    return fmt::format("rank {} receive of the message from rank {} ({} -> {})", rank,
                       s_.rankOf(u), s_.opName(u), s_.opName(g));
  }
  case RaiseCpu:
  case RaiseNic:
    return fmt::format("rank {} rendezvous send {} released by its receiver", rank,
                       s_.opName(g));
  }
  return "?";
}

void Model::releaseOf(uint32_t e, int64_t P, int64_t Q, Int128 &rel,
                      llvm::SmallVectorImpl<uint32_t> &by) const {
  auto val = [&](uint32_t x) { return Int128(A_[x]) * Q + Int128(Br_[x]) * P; };
  rel = 0;
  by.clear();
  if (kind_[e] == Msg) {
    const uint32_t u = partner_[op_[e]];
    const MessageCost &mc = o_.messages.of(u);
    const int64_t oB = o_.param == ParamKind::o ? 1 : 0;
    rel = val(aux_[e]) + Int128(static_cast<int64_t>(o_.params.o) + mc.L.a) * Q +
          Int128(oB + mc.L.b) * P;
    return;
  }
  const uint32_t g = op_[e];
  for (uint32_t i = predBegin_[g]; i < predBegin_[g + 1]; ++i) {
    const uint32_t raw = pred_[i], u = raw & ~IBit;
    uint32_t x = elemOf_[u];
    if (!(raw & IBit)) {
      // A recv is done when its message is processed, a rendezvous send when its
      // receiver matches it; calcs and eager sends when they start.
      const OpKind uk = s_.kind(u);
      if (uk == OpKind::Recv || (uk == OpKind::Send && s_.size(u) > o_.params.S))
        x = msgOf_[u];
    }
    const Int128 t = val(x);
    if (t > rel || by.empty()) {
      if (t > rel)
        by.clear();
      rel = std::max(rel, t);
    }
    if (t == rel)
      by.push_back(x);
  }
}

std::optional<ContentionNote> Model::checkElement(uint32_t e, int64_t P, int64_t Q) const {
  auto val = [&](uint32_t x) { return Int128(A_[x]) * Q + Int128(Br_[x]) * P; };
  auto isRaise = [&](uint32_t x) { return kind_[x] == RaiseCpu || kind_[x] == RaiseNic; };
  // The event at which an element acts on its clock (a raise: its message's processing).
  auto eventOf = [&](uint32_t x) { return isRaise(x) ? aux_[x] : x; };
  const uint8_t k = kind_[e];
  if (isRaise(e))
    return std::nullopt;   // a clock moving up to a time: any order gives the same clocks

  Int128 rel;
  llvm::SmallVector<uint32_t, 4> by;
  releaseOf(e, P, Q, rel, by);

  // Whether the simulator processes e after p, the element before it on a clock.
  auto orderedAfter = [&](uint32_t p, bool sameBatchOk) {
    const Int128 evp = val(eventOf(p));
    if (isRaise(p))
      return rel >= evp;
    if (rel > evp)
      return true;
    if (rel == evp && std::find(by.begin(), by.end(), p) != by.end())
      return true;   // p's own event frees e
    if (!sameBatchOk || kind_[p] == Msg || s_.rankOf(op_[p]) != s_.rankOf(op_[e]) ||
        bigBatch_[op_[p]] || bigBatch_[op_[e]])
      return false;
    // Freed by the same event as p (LogGOPSim then takes them in the order the chain
    // has): fine if p started at the clock they were freed at, or e waits for p's nic.
    Int128 relp;
    llvm::SmallVector<uint32_t, 4> byp;
    releaseOf(p, P, Q, relp, byp);
    bool sameEvent = relp == rel && (by.empty() ? byp.empty() && predBegin_[op_[e]] ==
                                                                     predBegin_[op_[e] + 1]
                                                : std::find_first_of(by.begin(), by.end(),
                                                                     byp.begin(), byp.end()) !=
                                                      by.end());
    if (!sameEvent)
      return false;
    if (nicPrev_[e] == p)
      return true;
    Int128 before = 0;
    if (cpuPrev_[p] != None)
      forEachClockAfter(cpuPrev_[p], [&](uint32_t x, Line c) {
        before = std::max(before, val(x) + Int128(c.a) * Q + Int128(c.b) * P);
      });
    return val(p) == before;
  };
  auto note = [&](uint32_t p, const char *clock) {
    return ContentionNote{s_.rankOf(op_[e]),
                          fmt::format("{} can be processed before {} on its {}", describe(e),
                                      describe(p), clock)};
  };

  if (k == Msg) {
    // Waiting for the cpu is only safe when the cpu was busy from the arrival on:
    // the element before it (posts cost nothing and are skipped) started before.
    uint32_t q = cpuPrev_[e];
    while (q != None && kind_[q] == Post)
      q = cpuPrev_[q];
    if (q != None && !orderedAfter(q, false))
      return note(q, "cpu");
    const uint32_t r = op_[e], u = partner_[r];
    if (s_.cpu(r) != s_.cpu(u) || s_.nic(r) != s_.nic(u)) {
      // Charged on another cpu than its recv's: LogGOPSim processes it without waiting
      // for the post (and a rendezvous is then released with the recv's indices).
      const Int128 post = val(elemOf_[r]);
      if (rel < post || (rel == post && s_.size(u) > o_.params.S))
        return ContentionNote{s_.rankOf(r),
                              fmt::format("{} arrives before its recv is posted on another cpu "
                                          "or nic (LogGOPSim charges the sender's indices)",
                                          describe(e))};
    }
    if (nicPrev_[e] != None && !orderedAfter(nicPrev_[e], false))
      return note(nicPrev_[e], "nic");
    return std::nullopt;
  }
  if (cpuPrev_[e] != None && !orderedAfter(cpuPrev_[e], true))
    return note(cpuPrev_[e], "cpu");
  if (k == Send && nicPrev_[e] != None && !orderedAfter(nicPrev_[e], true))
    return note(nicPrev_[e], "nic");
  return std::nullopt;
}

} // namespace infracc::sens
