#include "backends/sensitivity/Model.h"

#include "ir/MessageMatching.h"
#include "ir/Schedule.h"
#include "support/Diagnostics.h"
#include "support/HugePages.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <iterator>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

namespace {
/// Relevance pruning's sample points P[k] / Q, ascending from lo to hi: lo, then lo plus
/// the range times 2^(-j/2) for j = 32 down to 0. Two per halving, down to 1/65536 of
/// the range: a schedule's critical latencies spread about evenly over the halvings
/// (docs/sensitivity.md). False when the range's denominators are too large to sample
/// in 64-bit integers.
bool chooseSamples(const Rational &lo, const Rational &hi, int64_t &Q, std::vector<int64_t> &P) {
  constexpr int Halvings = 16;
  const Int128 L = lo.den / gcd(lo.den, hi.den) * hi.den;
  if (L > (Int128(1) << 20))
    return false;
  const Int128 loS = lo.num * (L / lo.den), d = hi.num * (L / hi.den) - loS;
  int bits = 0;
  for (Int128 x = d; x > 0; x >>= 1)
    ++bits;
  // Scaled so that the smallest step, d / 2^16, still has a few bits.
  const int shift = std::max(0, Halvings + 4 - bits);
  if (shift > 30)
    return false;
  const Int128 q = L << shift, base = loS << shift, dq = d << shift;
  const Int128 limit = Int128(1) << 60;
  if (q > limit || base < -limit || base + dq > limit)
    return false;
  Q = static_cast<int64_t>(q);
  P.assign(1, static_cast<int64_t>(base));
  for (int j = 2 * Halvings; j >= 0; --j) {
    Int128 offset = dq >> (j / 2);
    if (j % 2)
      offset = (dq >> (j / 2)) * 46341 / 65536;   // and once more by 1/sqrt(2)
    const int64_t x = static_cast<int64_t>(base + offset);
    if (x > P.back())
      P.push_back(x);
  }
  return P.size() >= 3;
}

/// The backward pass's step, lane by lane: where v + cost beats the tail t, t takes it
/// and the slope of its path (t and v: K values, then K slopes; K a multiple of 4).
/// Without branches (the lanes' outcomes follow no pattern), and mostly without the
/// multiply (most costs do not depend on the parameter): the backward pass is mostly
/// this, so it has an AVX2 version too.
void raiseTails(int64_t *t, const int64_t *v, const int64_t *P, size_t K, int64_t ca, int64_t cb) {
  for (size_t k = 0; k < K; ++k) {
    const int64_t x = v[k] + ca + (cb == 0 ? 0 : cb * P[k]);
    const bool up = x > t[k];
    t[k] = up ? x : t[k];
    t[K + k] = up ? v[K + k] + cb : t[K + k];
  }
}

/// A tail's first value: v + cost in every lane, with v's slopes plus the cost's.
void setTails(int64_t *t, const int64_t *v, const int64_t *P, size_t K, int64_t ca, int64_t cb) {
  for (size_t k = 0; k < K; ++k) {
    t[k] = v[k] + ca + (cb == 0 ? 0 : cb * P[k]);
    t[K + k] = v[K + k] + cb;
  }
}

#if defined(__x86_64__)
/// v + ca + cb * P in lanes k to k + 3.
[[gnu::target("avx2"), gnu::always_inline]] inline __m256i
costedLanes(const int64_t *v, const int64_t *P, size_t k, __m256i a, int64_t cb) {
  __m256i x = _mm256_add_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(v + k)), a);
  if (cb == 1) {
    x = _mm256_add_epi64(x, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(P + k)));
  } else if (cb != 0) {   // AVX2 has no 64-bit multiply
    alignas(32) int64_t c[4] = {cb * P[k], cb * P[k + 1], cb * P[k + 2], cb * P[k + 3]};
    x = _mm256_add_epi64(x, _mm256_load_si256(reinterpret_cast<const __m256i *>(c)));
  }
  return x;
}

[[gnu::target("avx2")]] void raiseTailsAvx2(int64_t *t, const int64_t *v, const int64_t *P,
                                            size_t K, int64_t ca, int64_t cb) {
  const __m256i a = _mm256_set1_epi64x(ca), b = _mm256_set1_epi64x(cb);
  for (size_t k = 0; k < K; k += 4) {
    const __m256i x = costedLanes(v, P, k, a, cb);
    __m256i *tv = reinterpret_cast<__m256i *>(t + k), *ts = reinterpret_cast<__m256i *>(t + K + k);
    const __m256i old = _mm256_loadu_si256(tv);
    const __m256i up = _mm256_cmpgt_epi64(x, old);
    _mm256_storeu_si256(tv, _mm256_blendv_epi8(old, x, up));
    const __m256i slope =
        _mm256_add_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(v + K + k)), b);
    _mm256_storeu_si256(ts, _mm256_blendv_epi8(_mm256_loadu_si256(ts), slope, up));
  }
}

[[gnu::target("avx2")]] void setTailsAvx2(int64_t *t, const int64_t *v, const int64_t *P,
                                          size_t K, int64_t ca, int64_t cb) {
  const __m256i a = _mm256_set1_epi64x(ca), b = _mm256_set1_epi64x(cb);
  for (size_t k = 0; k < K; k += 4) {
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(t + k), costedLanes(v, P, k, a, cb));
    _mm256_storeu_si256(
        reinterpret_cast<__m256i *>(t + K + k),
        _mm256_add_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(v + K + k)), b));
  }
}
#endif

/// A float at least x (finite): stored tail bounds may only err upwards. The float
/// nearest x, one step up: it is off by less than the step.
float roundUp(double x) {
  float f = static_cast<float>(x);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (f == 0)
    bits = 1;                                     // the least positive float
  else
    bits += (bits >> 31) ? uint32_t(-1) : 1u;     // away from 0 when positive, towards it when not
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// Where (line + a tail's chord - T's lower bound) can be largest: the samples and
/// the crossings of consecutive tangents. `w`: T's lower bound at x; x lies in
/// sample interval k, a fraction t of the way.
struct Kink {
  double x, w, t;
  uint32_t k;
};
} // namespace

std::vector<PathLine> Model::envelope(const Rational &lo, const Rational &hi,
                                    bool pruneByTails) {
  assert(lo <= hi && lo.num >= INT64_MIN && hi.num <= INT64_MAX && lo.den <= INT64_MAX &&
         hi.den <= INT64_MAX);
  const Range rg{static_cast<int64_t>(lo.num), static_cast<int64_t>(lo.den),
                 static_cast<int64_t>(hi.num), static_cast<int64_t>(hi.den)};
  const bool point = lo == hi;
  const size_t E = kind_.size();

  // How many candidates read each element, so that its envelope is dropped after the
  // last one (at most six: the next element on its cpu, twice when G varies, on its
  // nic, a message or two raises, a sink). Counted by the backward pass when there is
  // one, else by a pass of its own.
  std::vector<uint8_t> uses;
  reserveHugePages(uses, E);
  uses.assign(E, 0);
  envStats_ = EnvelopeStats{};
  int64_t Q = 1;
  std::vector<int64_t> P;
  bool pruning = pruneByTails && !point && chooseSamples(lo, hi, Q, P);
  // With pruning, a bound on the scaled value of every path the backward pass has
  // followed so far: the most any candidate of each element adds, summed. While it is
  // below 2^62, the tails' 64-bit arithmetic cannot overflow; beyond, no pruning.
  const Int128 Pmax = pruning ? std::max(absolute(P.front()), absolute(P.back())) : 0;
  Int128 most = 0, pathBound = 0;
  auto count = [&](uint32_t pr, Line c) {
    if (pr != None) {
      assert(uses[pr] < 255);
      ++uses[pr];
    }
    if (pruning)
      most = std::max(most, absolute(c.a) * Q + absolute(c.b) * Pmax);
  };
  const Int128 boundLimit = Int128(1) << 62;

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
    ++envStats_.merges;
    for (size_t k = 1; k < sources.size(); ++k) {
      envStats_.linesMerged += size_t(acc.end - acc.at) + size_t(sources[k].end - sources[k].at);
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
  // Returns which candidates it kept (bit i: cands[i]; an element has at most six, the
  // sinks' maximum one per clock and no use for the mask).
  auto prune = [&] {
    kept.clear();
    uint8_t mask = 0;
    for (size_t i = 0; i < cands.size(); ++i) {
      bool drop = false;
      for (size_t j = 0; j < cands.size() && !drop; ++j)
        drop = j != i && below(cands[i], cands[j]);
      if (!drop) {
        kept.push_back(cands[i]);
        if (i < 8)
          mask |= uint8_t(1u << i);
      }
    }
    return mask;
  };
  // The backward pass, when it ran to the end, keeps each element's choice for the
  // passes after it (the walks along cpu chains that `below` makes cost as much as
  // the rest of the step).
  std::vector<uint8_t> keptMask;
  bool masked = false;
  auto collect = [&](uint32_t e) {
    cands.clear();
    forEachCandidate(e, [&](uint32_t pr, Line c) {
      assert(cands.size() < 8 && "an element has at most six candidates");
      cands.push_back({pr, c});
    });
    if (!masked) {
      const uint8_t mask = prune();
      if (!keptMask.empty())
        keptMask[e] = mask;
      return;
    }
    kept.clear();
    for (size_t i = 0, m = keptMask[e]; m; ++i, m >>= 1)
      if (m & 1)
        kept.push_back(cands[i]);
  };

  // Relevance pruning. A line of an element's envelope matters only where a path
  // through it can be critical: where line + tail >= T, the tail being the longest
  // path from the element to the end. One backward pass computes every element's tail
  // at the K sample points (exactly: 64-bit integers scaled by Q), along the candidates
  // the forward pass keeps, and with it T and the slope of a critical path at each
  // sample. Between two samples a tail, convex, lies below its chord, and T above the
  // lines of those critical paths (its tangents there). A merged envelope then drops
  // the lines that are below (T's tangents) - (tail's chord) wherever they are the
  // maximum: no critical path goes through them, every line a critical path goes
  // through stays, and so T is unchanged (docs/sensitivity.md). Only merges keep their
  // tails (K floats each, rounded up), in reverse element order.
  const size_t K = P.size();
  const double invQ = 1.0 / double(Q);
  std::vector<float> bounds;
  std::vector<double> px(K), T0(K), Tslope(K);   // the samples, T and a tangent there
  // T's lower bound on sample interval k: the larger of the tangents at its ends (the
  // others are below these there, T being convex).
  auto lowerT = [&](size_t k, double x) {
    return std::max(T0[k] + Tslope[k] * (x - px[k]), T0[k + 1] + Tslope[k + 1] * (x - px[k + 1]));
  };
  std::vector<Kink> kinks;   // the samples and where the tangents at their ends cross
  // The merges' bounds take 4 K bytes each (about one merge per message). Beyond
  // boundBudget_ in all they are made a chunk of elements at a time, just before the
  // forward pass needs them: the first backward pass keeps the lowest chunk's and
  // saves, at the top of each other chunk, the tails its elements have from above
  // (checkpoints); the pass then runs again over that chunk from there. That costs up
  // to one more backward pass instead of memory without bound.
  const uint64_t budget = std::max<uint64_t>(boundBudget_, 1);
  const size_t chunks =
      pruning ? std::max<size_t>(1, (messages_ * K * sizeof(float) + budget - 1) / budget) : 1;
  const size_t chunkLen = (E + chunks - 1) / std::max<size_t>(chunks, 1);
  struct Checkpoint {
    std::vector<uint32_t> owners;
    std::vector<int64_t> lanes;
  };
  std::vector<Checkpoint> checkpoints(chunks);
  // Tails in slots of 2 Kp lanes: Kp values, then the slopes of their paths (lanes in
  // fours, the AVX2 step's width: the samples padded with copies of the last).
  const size_t Kp = (K + 3) / 4 * 4, W = 2 * Kp;
  std::vector<int64_t> Pp(P);
  if (pruning)
    Pp.resize(Kp, P.back());
  struct TailPool {
    std::vector<int64_t> lanes;
    std::vector<uint32_t> owner, free;   // owner None: free
  };
  auto takeTail = [&](TailPool &pool, uint32_t owner) {
    uint32_t t;
    if (!pool.free.empty()) {
      t = pool.free.back();
      pool.free.pop_back();
    } else {
      t = static_cast<uint32_t>(pool.owner.size());
      pool.owner.push_back(None);
      pool.lanes.resize(pool.lanes.size() + W);
    }
    pool.owner[t] = owner;
    return t;   // its lanes are written next (set, or a checkpoint's copy)
  };
#if defined(__x86_64__)
  const bool avx2 = __builtin_cpu_supports("avx2");
  auto raise = avx2 ? raiseTailsAvx2 : raiseTails;
  auto set = avx2 ? setTailsAvx2 : setTails;
#else
  auto raise = raiseTails;
  auto set = setTails;
#endif
  std::vector<int64_t> Tv(W, INT64_MIN);   // T's own tail lanes (values, slopes)
  // Raises pred's tail (T's for None) to the tail in lanes `from` (an index into the
  // pool, or -1 for the end's zero tail) plus cost c. slotOf(x): x's slot or -1.
  const std::vector<int64_t> zeroTail(W, 0);
  auto raiseInto = [&](TailPool &pool, auto &&slotOf, uint32_t pred, int64_t from, Line c) {
    int64_t *dst = Tv.data();
    bool fresh = false;   // a new slot is set, not raised
    if (pred != None) {
      int64_t &ps = slotOf(pred);
      fresh = ps < 0;
      if (fresh)
        ps = takeTail(pool, pred);   // (may move the lanes: addresses after it)
      dst = &pool.lanes[size_t(ps) * W];
    }
    const int64_t *src = from >= 0 ? &pool.lanes[size_t(from) * W] : zeroTail.data();
    (fresh ? set : raise)(dst, src, Pp.data(), Kp, c.a * Q, c.b);
  };
  // One step back over element e: its tail is final (what its readers gave it); the
  // candidates the forward pass keeps get it plus their cost, those at `lowest` or
  // above only (T only in the first pass, lowest 0); a merge records its bounds when
  // `store`.
  auto backStep = [&](uint32_t e, TailPool &pool, auto &&slotOf, uint32_t lowest, bool store) {
    collect(e);
    if (!masked) {   // the first pass: also what count() gathers
      for (const Candidate &cd : cands)
        count(cd.pred, cd.c);
      pathBound += most;
      most = 0;
      if (pathBound >= boundLimit)
        return false;
    }
    int64_t &own = slotOf(e);
    const int64_t t = own;
    own = -1;
    const int64_t *mine = t >= 0 ? &pool.lanes[size_t(t) * W] : nullptr;
    if (store && kept.size() >= 2) {
      const size_t at = bounds.size();
      bounds.resize(at + K);
      float *b = &bounds[at];
      // Times 1/Q rather than divided by Q: the product is off by a few parts in 2^53,
      // far inside the float step roundUp adds.
      for (size_t k = 0; k < K; ++k)
        b[k] = mine ? roundUp(double(mine[k]) * invQ) : -INFINITY;
    }
    if (t < 0)
      return true;
    auto takes = [&](const Candidate &cd) {
      return cd.pred == None ? lowest == 0 : cd.pred >= lowest;
    };
    size_t takers = 0;
    const Candidate *only = nullptr;
    for (const Candidate &cd : kept)
      if (takes(cd)) {
        ++takers;
        only = &cd;
      }
    if (takers == 1 && only->pred != None && slotOf(only->pred) < 0) {
      // The usual case along a chain: the one taker has no tail yet and takes this
      // slot over, shifted by its cost.
      int64_t *l = &pool.lanes[size_t(t) * W];
      const int64_t ca = only->c.a * Q, cb = only->c.b;
      for (size_t k = 0; k < Kp; ++k) {
        l[k] += ca + cb * Pp[k];
        l[Kp + k] += cb;
      }
      pool.owner[size_t(t)] = only->pred;
      slotOf(only->pred) = t;
      return true;
    }
    for (const Candidate &cd : kept)
      if (takes(cd))
        raiseInto(pool, slotOf, cd.pred, t, cd.c);
    pool.owner[size_t(t)] = None;
    pool.free.push_back(static_cast<uint32_t>(t));
    return true;
  };
  TailPool pool;
  if (pruning) {
    ++sweeps_;
    // Bl_[e] is e's slot (or -1) until the forward pass, which writes it before it
    // reads it.
    std::fill(Bl_.begin(), Bl_.end(), -1);
    auto inBl = [&](uint32_t x) -> int64_t & { return Bl_[x]; };
    bounds.reserve(messages_ / chunks * K);   // about one merge per message
    reserveHugePages(keptMask, E);
    keptMask.resize(E);
    forEachSink(count);
    pathBound = most;
    most = 0;
    pruning = pathBound < boundLimit;
    if (pruning)
      forEachSink([&](uint32_t pr, Line c) { raiseInto(pool, inBl, pr, -1, c); });
    for (size_t i = E; pruning && i-- > 0;) {
      if (chunks > 1 && i >= chunkLen && (i + 1 == E || (i + 1) % chunkLen == 0)) {
        // The top of chunk i / chunkLen: what its elements have from above.
        Checkpoint &cp = checkpoints[i / chunkLen];
        const size_t from = i / chunkLen * chunkLen;
        for (size_t t = 0; t < pool.owner.size(); ++t)
          if (pool.owner[t] != None && pool.owner[t] >= from && pool.owner[t] <= i) {
            cp.owners.push_back(pool.owner[t]);
            cp.lanes.insert(cp.lanes.end(), &pool.lanes[t * W], &pool.lanes[t * W] + W);
          }
      }
      if (i >= 8) {   // the slots an element a few steps on raises: far back, at random
        const size_t j = i - 8;
        for (uint32_t x : {cpuPrev_[j], nicPrev_[j], aux_[j]})
          if (x != None)
            __builtin_prefetch(&Bl_[x]);
      }
      pruning = backStep(static_cast<uint32_t>(i), pool, inBl, 0, i < chunkLen);
    }
    pool = TailPool{};
    if (!pruning) {   // the paths may be too long for 64 bits: the curve without pruning
      keptMask = {};
      bounds = {};
      checkpoints.assign(1, Checkpoint{});
      uses.assign(E, 0);
    }
    masked = pruning;
    pruning = pruning && std::all_of(Tv.begin(), Tv.begin() + ptrdiff_t(K), [](int64_t x) { return x > INT64_MIN; });
    if (pruning && Tv[Kp] == Tv[Kp + K - 1]) {
      // The same critical slope at both ends: T, convex, is that one line over the
      // range, and the forward pass has nothing to find.
      const Int128 AQ = Int128(Tv[0]) - Int128(Tv[Kp]) * P[0];
      assert(AQ % Q == 0 && "a path line has an integer intercept");
      envStats_.pruned = true;
      envStats_.samples = static_cast<uint32_t>(K);
      envStats_.chunks = chunks;
      return {PathLine{AQ / Q, Tv[Kp]}};
    }
    for (size_t k = 0; k < K; ++k) {
      px[k] = double(P[k]) / double(Q);
      T0[k] = double(Tv[k]) / double(Q);
      Tslope[k] = double(Tv[Kp + k]);
    }
    auto kink = [&](double x, uint32_t k) {
      kinks.push_back({x, lowerT(k, x), std::clamp((x - px[k]) / (px[k + 1] - px[k]), 0.0, 1.0), k});
    };
    for (uint32_t k = 0; pruning && k + 1 < K; ++k) {
      kink(px[k], k);
      const int64_t s0 = Tv[Kp + k], s1 = Tv[Kp + k + 1];
      if (s0 != s1) {   // where the two tangents cross, exactly, then rounded
        const Int128 num = Int128(Tv[k + 1]) - Tv[k] + Int128(s0) * P[k] - Int128(s1) * P[k + 1];
        const Int128 den = Int128(Q) * (Int128(s0) - s1);
        kink(std::clamp(double(num) / double(den), px[k], px[k + 1]), k);
      }
    }
    if (pruning) {
      kink(px[K - 1], static_cast<uint32_t>(K - 2));
      envStats_.samples = static_cast<uint32_t>(K);
      envStats_.chunks = chunks;
      if (chunks > 1)
        sweeps_ += 1;   // the chunks' second pass, in all
    }
  }
  if (!masked) {
    for (size_t e = 0; e < E; ++e)
      forEachCandidate(static_cast<uint32_t>(e), count);
    forEachSink(count);
  }
  // The forward pass's chunk: run the backward pass again over it from its checkpoint.
  std::vector<int64_t> local;
  auto boundChunk = [&](size_t c) {
    const size_t from = c * chunkLen, to = std::min(E, from + chunkLen);
    bounds.clear();
    local.assign(to - from, -1);
    auto inLocal = [&](uint32_t x) -> int64_t & { return local[x - from]; };
    Checkpoint &cp = checkpoints[c];
    for (size_t j = 0; j < cp.owners.size(); ++j) {
      const uint32_t t = takeTail(pool, cp.owners[j]);
      std::copy_n(&cp.lanes[j * W], W, &pool.lanes[size_t(t) * W]);
      local[cp.owners[j] - from] = t;
    }
    cp = Checkpoint{};
    for (size_t i = to; i-- > from;)
      backStep(static_cast<uint32_t>(i), pool, inLocal, static_cast<uint32_t>(from), true);
    envStats_.boundBytes = std::max<uint64_t>(envStats_.boundBytes, bounds.size() * sizeof(float));
  };
  envStats_.boundBytes = bounds.size() * sizeof(float);
  envStats_.pruned = pruning;
  // Drops the lines of a merged envelope (hull) that are nowhere relevant, given the
  // merge's tail bounds u. Each line is judged on the interval where it is the
  // maximum: dropping it changes the envelope there only, and its neighbours are below
  // it there. (Line + tail chord - T's bound) is linear between kinks, so checking the
  // interval's ends and the kinks inside it covers it. The margin is far above the
  // rounding of these double evaluations (keeping a line is always safe).
  auto pruneHull = [&](std::vector<Line> &h, const float *u) {
    size_t w = 0;
    if (u[0] > -INFINITY) {   // else no path from the element reaches the end
      size_t k = 0, q = 0;    // the sample interval of x, the first kink at or after it
      auto relevantAt = [&](const Line &l, double x, double wx, double t, size_t kk) {
        const double U = double(u[kk]) + (double(u[kk + 1]) - double(u[kk])) * t;
        const double val = double(l.a) + double(l.b) * x + U;
        return val >= wx - 1e-9 * (std::abs(wx) + std::abs(val)) - 1e-3;
      };
      auto relevantAtX = [&](const Line &l, double x) {
        while (k + 2 < K && x > px[k + 1])
          ++k;
        const double t = std::clamp((x - px[k]) / (px[k + 1] - px[k]), 0.0, 1.0);
        return relevantAt(l, x, lowerT(k, x), t, k);
      };
      double xl = px[0];
      for (size_t i = 0; i < h.size(); ++i) {
        const Line &l = h[i];
        double xr = px[K - 1];
        if (i + 1 < h.size())
          xr = std::clamp(double(h[i + 1].a - l.a) / double(l.b - h[i + 1].b), xl, px[K - 1]);
        bool keep = relevantAtX(l, xl);
        while (q < kinks.size() && kinks[q].x < xl)
          ++q;
        for (size_t j = q; !keep && j < kinks.size() && kinks[j].x <= xr; ++j)
          keep = relevantAt(l, kinks[j].x, kinks[j].w, kinks[j].t, kinks[j].k);
        keep = keep || relevantAtX(l, xr);
        if (keep)
          h[w++] = l;
        xl = xr;
      }
    }
    envStats_.linesPruned += h.size() - w;
    h.resize(w);
  };
  ++sweeps_;   // the forward pass
  size_t boundAt = bounds.size();   // the forward pass reads the merges' bounds from the end

  for (size_t i = 0; i < E; ++i) {
    const uint32_t e = static_cast<uint32_t>(i);
    if (pruning && i > 0 && i % chunkLen == 0) {
      boundChunk(i / chunkLen);
      boundAt = bounds.size();
    }
    collect(e);
    const float *tail = nullptr;
    if (pruning && kept.size() >= 2) {
      boundAt -= K;
      tail = &bounds[boundAt];
    }
    if (kept.size() == 1 && kept[0].pred != None) {
      const uint32_t pr = kept[0].pred;
      A_[e] = A_[pr] + kept[0].c.a;
      Br_[e] = Br_[pr] + kept[0].c.b;
      Bl_[e] = Bl_[pr];
      refs[static_cast<size_t>(Bl_[e])] += uses[e];
    } else if (uses[e]) {
      combine();
      if (tail)
        pruneHull(hull, tail);
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
  assert(!hull.empty() && "T's critical lines survive pruning");
  if (hull.empty() && pruning)   // cannot happen (see above); the unpruned pass is the truth
    return envelope(lo, hi, false);
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
