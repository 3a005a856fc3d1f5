// The analysis against the simulator: T(p) from the parametric longest path equals
// -emit=sim's maximum finishing time, to the nanosecond, at every value where the
// analysis finds no contention, on generated schedules (blocking and nonblocking,
// eager and rendezvous; one cpu and nic), for L, o and G; the curve's segments
// agree with direct evaluations; and the LLAMP paper's running example.
#include "backends/sensitivity/Curve.h"
#include "ir/Schedule.h"
#include "tests/sim/SimTestUtil.h"

#include <gtest/gtest.h>

#include <random>

using namespace infracc;
using namespace infracc::sens;

namespace {

/// LLAMP's Fig. 4c: c0 = 0.1 us before the send, c1 = 1 us after it; c2 = 0.5 us
/// before the recv, c3 = 1 us after it; one 4-byte message.
Schedule runningExample() {
  ScheduleBuilder b(2);
  b.beginRank(0);
  uint32_t c0 = b.addCalc(100), s = b.addSend(4, 1), c1 = b.addCalc(1000);
  b.addDependency(s, c0, DepKind::Requires);
  b.addDependency(c1, s, DepKind::Requires);
  b.endRank();
  b.beginRank(1);
  uint32_t c2 = b.addCalc(500), r = b.addRecv(4, 0), c3 = b.addCalc(1000);
  b.addDependency(r, c2, DepKind::Requires);
  b.addDependency(c3, r, DepKind::Requires);
  b.endRank();
  return b.finish();
}

std::unique_ptr<Model> build(const Schedule &s, const sim::LogGPParams &p, ParamKind k) {
  ModelOptions o;
  o.params = p;
  o.param = k;
  auto m = Model::build(s, o);
  EXPECT_TRUE(bool(m)) << (m ? "" : llvm::toString(m.takeError()));
  return m ? std::move(*m) : nullptr;
}

uint64_t simulateAt(const Schedule &s, sim::LogGPParams p, ParamKind k, int64_t v) {
  if (k == ParamKind::L)
    p.L = static_cast<uint64_t>(v);
  else if (k == ParamKind::o)
    p.o = static_cast<uint64_t>(v);
  else
    p.G = sim::PerByte(static_cast<double>(v));
  sim::SimOptions so;
  so.params = p;
  sim::SimResult r = sim::simulate(s, so);
  EXPECT_TRUE(r.finished());
  return r.makespan;
}

TEST(SensitivityModel, RunningExampleOfTheLlampPaper) {
  Schedule s = runningExample();
  sim::LogGPParams p = test::params("-o 0 -g 0 -G 5");
  auto m = build(s, p, ParamKind::L);
  ASSERT_TRUE(m);
  Curve c = traceCurve(*m, Rational(0), Rational(1000), true);
  ASSERT_EQ(c.segments.size(), 2u);
  // LogGOPSim charges the 15 ns of (s-1)G on the receiver's cpu once c2 has finished:
  // T = max(1515, L + 1115), so the critical latency is 400 ns (the paper, charging
  // it during c2, has max(1500, L + 1115) and 385 ns).
  EXPECT_EQ(c.breakpoints(), std::vector<Rational>{Rational(400)});
  EXPECT_EQ(c.valueAt(Rational(0)), Rational(1515));
  EXPECT_EQ(c.slopeAt(Rational(0)), 0);
  EXPECT_EQ(c.valueAt(Rational(500)), Rational(1615));
  EXPECT_EQ(c.slopeAt(Rational(500)), 1);
  Tolerance t = toleranceFor(c, Rational(2000));
  ASSERT_TRUE(t.value);
  EXPECT_EQ(*t.value, Rational(885));
  EXPECT_FALSE(t.beyondRange);
  EXPECT_FALSE(c.contention);
  for (int64_t L : {0, 385, 399, 400, 401, 500, 885, 1000})
    EXPECT_EQ(c.valueAt(Rational(L)), Rational(simulateAt(s, p, ParamKind::L, L))) << L;
}

/// A random schedule that can always finish: a global sequence of messages (each a
/// send on its source and a recv on its destination, appended to their programs),
/// calcs in between, each op requiring its rank's previous one (blocking MPI); with
/// `nonblocking`, some sends and recvs are only irequired by the next op and waited
/// for by a later calc 0 (MPI_Isend/Irecv + MPI_Wait). `cpus`/`nics` > 1 spread each
/// rank's ops over streams.
Schedule randomSchedule(std::mt19937_64 &rng, uint32_t ranks, uint32_t messages, bool nonblocking,
                        uint32_t cpus, uint32_t nics, uint64_t maxBytes) {
  struct Op {
    OpKind kind;
    uint32_t peer;
    uint64_t size;
    uint32_t cpu, nic;
  };
  std::vector<std::vector<Op>> prog(ranks);
  auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
  auto calc = [&](uint32_t r) {
    if (pick(2))
      prog[r].push_back({OpKind::Calc, 0, pick(3000), uint32_t(pick(cpus)), 0});
  };
  for (uint32_t i = 0; i < messages; ++i) {
    uint32_t src = uint32_t(pick(ranks)), dst = uint32_t((src + 1 + pick(ranks - 1)) % ranks);
    uint64_t bytes = pick(4) == 0 ? 0 : pick(maxBytes);
    calc(src);
    calc(dst);
    prog[src].push_back({OpKind::Send, dst, bytes, uint32_t(pick(cpus)), uint32_t(pick(nics))});
    prog[dst].push_back({OpKind::Recv, src, bytes, uint32_t(pick(cpus)), uint32_t(pick(nics))});
  }
  ScheduleBuilder b(ranks);
  for (uint32_t r = 0; r < ranks; ++r) {
    b.beginRank(r);
    std::vector<uint32_t> open;   // nonblocking ops not waited for yet
    uint32_t prev = ~0u;
    for (const Op &op : prog[r]) {
      uint32_t id = b.addOp(op.kind, op.peer, op.size, 0, op.cpu, op.nic);
      if (prev != ~0u)
        b.addDependency(id, prev, DepKind::Requires);
      prev = id;
      if (nonblocking && op.kind != OpKind::Calc && pick(3) == 0) {
        // The next op only irequires this one; a wait (calc 0) later requires it.
        uint32_t next = b.addCalc(pick(2000), op.cpu);
        b.addDependency(next, id, DepKind::IRequires);
        open.push_back(id);
        prev = next;
        if (open.size() >= 2 || pick(2)) {
          uint32_t wait = b.addCalc(0, op.cpu);
          b.addDependency(wait, prev, DepKind::Requires);
          for (uint32_t o : open)
            b.addDependency(wait, o, DepKind::Requires);
          open.clear();
          prev = wait;
        }
      }
    }
    if (!open.empty()) {
      uint32_t wait = b.addCalc(0);
      if (prev != ~0u)
        b.addDependency(wait, prev, DepKind::Requires);
      for (uint32_t o : open)
        b.addDependency(wait, o, DepKind::Requires);
    }
    b.endRank();
  }
  return b.finish();
}

struct Family {
  const char *name;
  bool nonblocking;
  uint32_t cpus, nics;
  uint64_t maxBytes;
};

/// For every schedule: the curve over [0, hi], then T at many integer values of the
/// parameter (random ones, the breakpoints and their neighbours): the curve equals a
/// direct evaluation everywhere, and the simulator wherever no contention is found.
void compareWithSimulator(const Family &f, ParamKind k, const char *flags, int64_t hi,
                          unsigned schedules, unsigned minExact, int64_t lo = 0) {
  std::mt19937_64 rng(0x5e75 + unsigned(k) * 7 + f.cpus * 131 + f.nics * 17 + f.nonblocking);
  uint64_t exact = 0, points = 0, breakpoints = 0;
  for (unsigned n = 0; n < schedules; ++n) {
    const uint32_t ranks = 2 + uint32_t(rng() % 6);
    Schedule s = randomSchedule(rng, ranks, 4 + uint32_t(rng() % 30), f.nonblocking, f.cpus,
                                f.nics, f.maxBytes);
    sim::LogGPParams p = test::params(flags);
    auto m = build(s, p, k);
    ASSERT_TRUE(m);
    Curve c = traceCurve(*m, Rational(0), Rational(hi), false);
    breakpoints += c.breakpoints().size();
    // The curve is T's own: at every breakpoint a direct evaluation has the segment
    // on the left as its left tangent and the one on the right as its right tangent
    // (so no breakpoint is missing or spurious), and so at both ends.
    for (size_t i = 0; i < c.segments.size(); ++i) {
      const Segment &sg = c.segments[i];
      Evaluation a = m->evaluate(sg.start), b = m->evaluate(sg.end);
      ASSERT_EQ(a.right.A, sg.line.A) << f.name << " schedule " << n << " segment " << i;
      ASSERT_EQ(a.right.B, sg.line.B) << f.name << " schedule " << n << " segment " << i;
      ASSERT_EQ(b.left.A, sg.line.A) << f.name << " schedule " << n << " segment " << i;
      ASSERT_EQ(b.left.B, sg.line.B) << f.name << " schedule " << n << " segment " << i;
      ASSERT_LT(sg.start, sg.end);
    }
    std::vector<int64_t> at;
    for (int i = 0; i < 24; ++i)
      at.push_back(lo + int64_t(rng() % uint64_t(hi - lo + 1)));
    for (const Rational &b : c.breakpoints())
      for (Int128 v : {b.floor() - 1, b.floor(), b.ceil(), b.ceil() + 1})
        if (v >= lo && v <= hi)
          at.push_back(int64_t(v));
    for (int64_t v : at) {
      Evaluation e = m->evaluate(Rational(v), true);
      ASSERT_EQ(e.value, c.valueAt(Rational(v))) << f.name << " schedule " << n << " at " << v;
      ++points;
      if (e.contention)
        continue;
      ++exact;
      ASSERT_EQ(e.value, Rational(simulateAt(s, p, k, v)))
          << f.name << " schedule " << n << " (" << ranks << " ranks) at " << v;
    }
  }
  // Enough points are contention-free for the comparison to mean something (the
  // random schedules are mostly contended: 2-20 % of the points are exact).
  EXPECT_GE(exact, minExact) << exact << " of " << points;
  EXPECT_GT(breakpoints, 0u);
}

const Family Blocking{"blocking", false, 1, 1, 256};
const Family Rendezvous{"rendezvous", false, 1, 1, 200000};
const Family Nonblocking{"nonblocking", true, 1, 1, 100000};

TEST(SensitivityModel, LatencyMatchesSimulatorBlocking) {
  compareWithSimulator(Blocking, ParamKind::L, "-o 200 -g 50 -G 2", 20000, 40, 100);
}
TEST(SensitivityModel, LatencyMatchesSimulatorRendezvous) {
  compareWithSimulator(Rendezvous, ParamKind::L, "-o 150 -g 80 -G 1 -O 1 -S 50000", 20000, 40, 100);
}
TEST(SensitivityModel, LatencyMatchesSimulatorNonblocking) {
  compareWithSimulator(Nonblocking, ParamKind::L, "-o 300 -g 100 -G 1", 20000, 40, 20);
}
TEST(SensitivityModel, OverheadMatchesSimulator) {
  compareWithSimulator(Blocking, ParamKind::o, "-L 1000 -g 50 -G 2", 5000, 40, 25);
}
TEST(SensitivityModel, GapPerByteMatchesSimulator) {
  compareWithSimulator(Blocking, ParamKind::G, "-L 1000 -o 100 -g 50", 40, 40, 200);
}
// With O > 0 a 0-byte message costs the receiver max((s-1)O, (s-1)G) in LogGOPSim's
// unsigned arithmetic: -min(O, G) for G >= 1, but -O when G truncates to 0 (then (s-1)G
// is 0, not negative, and the wrapped (s-1)O is the larger). The analysis draws the
// line -min(O, G), so below G = 1 it differs from the simulator by O per such message on
// the critical path, and says by how much (docs/sensitivity.md); compared from G = 1.
TEST(SensitivityModel, GapPerByteMatchesSimulatorRendezvous) {
  compareWithSimulator(Rendezvous, ParamKind::G, "-L 1000 -o 100 -g 50 -O 2 -S 50000", 40, 40,
                       100, /*lo=*/1);
}

// Petabyte messages: slopes (bytes on the critical path) near 10^15 and times near 10^16
// ns, so the envelope's hull tests overflow 64 bits and take their 128-bit path.
TEST(SensitivityModel, GapPerByteWithPetabyteMessages) {
  const Family Huge{"petabyte", false, 1, 1, uint64_t(1) << 50};
  compareWithSimulator(Huge, ParamKind::G, "-L 1000 -o 100 -g 50", 40, 20, 20);
}

// A range that does not start at 0, with fractional ends, is the same curve cut there;
// a range of one point is one segment, the right tangent there.
TEST(SensitivityModel, SubrangeIsTheCurveCut) {
  std::mt19937_64 rng(0x5ab);
  const sim::LogGPParams p = test::params("-o 200 -g 50 -G 2");
  uint64_t cut = 0;
  for (unsigned n = 0; n < 30; ++n) {
    Schedule s = randomSchedule(rng, 2 + uint32_t(rng() % 6), 4 + uint32_t(rng() % 30), n % 2,
                                1, 1, 100000);
    auto m = build(s, p, ParamKind::L);
    ASSERT_TRUE(m);
    const Curve whole = traceCurve(*m, Rational(0), Rational(20000), false);
    const Rational lo(int64_t(rng() % 9000) * 3 + 1, 3), hi(int64_t(10000 + rng() % 9000) * 7 + 2, 7);
    const Curve part = traceCurve(*m, lo, hi, false);
    ASSERT_EQ(part.segments.front().start, lo);
    ASSERT_EQ(part.segments.back().end, hi);
    auto segmentOf = [&](const Rational &x) -> const Segment & {
      for (const Segment &w : whole.segments)
        if (x < w.end)
          return w;
      return whole.segments.back();
    };
    size_t inside = 0;
    for (const Rational &b : whole.breakpoints())
      inside += lo < b && b < hi;
    cut += inside;
    ASSERT_EQ(part.breakpoints().size(), inside) << "schedule " << n;
    for (const Segment &sg : part.segments) {
      // Each piece lies on one segment of the whole curve, with the same line.
      const Segment &w = segmentOf((sg.start + sg.end) / Rational(2));
      ASSERT_EQ(sg.line.A, w.line.A) << "schedule " << n;
      ASSERT_EQ(sg.line.B, w.line.B) << "schedule " << n;
    }
    const Curve at = traceCurve(*m, lo, lo, false);
    ASSERT_EQ(at.segments.size(), 1u);
    const Evaluation e = m->evaluate(lo);
    EXPECT_EQ(at.segments[0].line.A, e.right.A);
    EXPECT_EQ(at.segments[0].line.B, e.right.B);
  }
  EXPECT_GT(cut, 0u);
}


// Relevance pruning (Model::envelope) leaves the curve as it is: on random schedules of
// every family, for L, o and G, over whole ranges and over fractional subranges, the
// segments with and without it are identical, and it does drop lines.
TEST(SensitivityModel, PruningKeepsTheCurve) {
  struct Case {
    Family f;
    ParamKind k;
    const char *flags;
    int64_t hi;
  };
  const Family Huge{"petabyte", false, 1, 1, uint64_t(1) << 50};
  const Family Streams{"streams", true, 2, 2, 100000};
  const Case cases[] = {
      {Blocking, ParamKind::L, "-o 200 -g 50 -G 2", 20000},
      {Rendezvous, ParamKind::L, "-o 150 -g 80 -G 1 -O 1 -S 50000", 20000},
      {Nonblocking, ParamKind::L, "-o 300 -g 100 -G 1", 20000},
      {Streams, ParamKind::L, "-o 300 -g 100 -G 1", 20000},
      {Blocking, ParamKind::o, "-L 1000 -g 50 -G 2", 5000},
      {Blocking, ParamKind::G, "-L 1000 -o 100 -g 50", 40},
      {Rendezvous, ParamKind::G, "-L 1000 -o 100 -g 50 -O 2 -S 50000", 40},
      {Huge, ParamKind::G, "-L 1000 -o 100 -g 50", 40},
  };
  std::mt19937_64 rng(0x9e11);
  uint64_t dropped = 0, pruned = 0;
  for (const Case &cs : cases) {
    const sim::LogGPParams p = test::params(cs.flags);
    for (unsigned n = 0; n < 25; ++n) {
      Schedule s = randomSchedule(rng, 2 + uint32_t(rng() % 7), 4 + uint32_t(rng() % 40),
                                  cs.f.nonblocking, cs.f.cpus, cs.f.nics, cs.f.maxBytes);
      auto m = build(s, p, cs.k);
      ASSERT_TRUE(m);
      std::vector<std::pair<Rational, Rational>> ranges = {{Rational(0), Rational(cs.hi)}};
      const int64_t a = int64_t(rng() % uint64_t(cs.hi)), b = int64_t(rng() % uint64_t(cs.hi));
      ranges.push_back({Rational(std::min(a, b) * 3 + 1, 3), Rational(std::max(a, b) * 7 + 9, 7)});
      for (const auto &[lo, hi] : ranges) {
        const Curve with = traceCurve(*m, lo, hi, false, true);
        const Curve without = traceCurve(*m, lo, hi, false, false);
        // Petabyte messages on a fine sample grid could overflow the backward pass's
        // 64-bit values: then it is left out, and says so.
        ASSERT_EQ(with.envelope.pruned, cs.f.maxBytes < (uint64_t(1) << 40)) << cs.f.name;
        ASSERT_FALSE(without.envelope.pruned);
        if (!with.envelope.pruned) {   // also when the backward pass stopped part way
          ASSERT_EQ(with.envelope.samples, 0u) << cs.f.name;
          ASSERT_EQ(with.envelope.chunks, 0u) << cs.f.name;
        }
        ASSERT_EQ(with.segments.size(), without.segments.size()) << cs.f.name << " " << n;
        for (size_t i = 0; i < with.segments.size(); ++i) {
          ASSERT_EQ(with.segments[i].start, without.segments[i].start) << cs.f.name << " " << n;
          ASSERT_EQ(with.segments[i].end, without.segments[i].end) << cs.f.name << " " << n;
          ASSERT_EQ(with.segments[i].line.A, without.segments[i].line.A) << cs.f.name << " " << n;
          ASSERT_EQ(with.segments[i].line.B, without.segments[i].line.B) << cs.f.name << " " << n;
        }
        dropped += with.envelope.linesPruned;
        pruned += with.envelope.linesPruned > 0;
      }
    }
  }
  EXPECT_GT(pruned, 50u) << dropped;
}

// On a barrier-heavy schedule, where every rank's envelope carries most of the
// breakpoints so far, pruning leaves the merges a small fraction of the lines to read
// (the point of it: docs/sensitivity.md); a range of one point is not pruned.
TEST(SensitivityModel, PruningLeavesFewLinesOnBarriers) {
  const uint32_t n = 64;
  std::mt19937_64 rng(0xba77);
  ScheduleBuilder b(n);
  for (uint32_t r = 0; r < n; ++r) {
    b.beginRank(r);
    int64_t last = -1;
    for (unsigned it = 0; it < 12; ++it) {
      const uint32_t c = b.addCalc(1000 + rng() % 19000);
      if (last >= 0)
        b.addDependency(c, uint32_t(last), DepKind::Requires);
      last = c;
      for (uint32_t d = 1; d < n; d *= 2) {   // a dissemination barrier
        const uint32_t snd = b.addSend(1, (r + d) % n, it);
        b.addDependency(snd, uint32_t(last), DepKind::Requires);
        const uint32_t rcv = b.addRecv(1, (r + n - d) % n, it);
        b.addDependency(rcv, snd, DepKind::IRequires);
        last = rcv;
      }
    }
    b.endRank();
  }
  Schedule s = b.finish();
  auto m = build(s, test::params(""), ParamKind::L);
  ASSERT_TRUE(m);
  const Curve with = traceCurve(*m, Rational(0), Rational(100000), false, true);
  const Curve without = traceCurve(*m, Rational(0), Rational(100000), false, false);
  ASSERT_EQ(with.segments.size(), without.segments.size());
  for (size_t i = 0; i < with.segments.size(); ++i) {
    EXPECT_EQ(with.segments[i].line.A, without.segments[i].line.A);
    EXPECT_EQ(with.segments[i].line.B, without.segments[i].line.B);
  }
  EXPECT_GT(with.breakpoints().size(), 10u);
  EXPECT_EQ(with.envelope.samples, 34u);
  EXPECT_EQ(with.sweeps, 2u);
  EXPECT_EQ(without.sweeps, 1u);
  EXPECT_LT(with.envelope.linesMerged * 5, without.envelope.linesMerged)
      << with.envelope.linesMerged << " against " << without.envelope.linesMerged;
  EXPECT_EQ(with.envelope.chunks, 1u);
  // With room for the bounds of a few merges only, they are made chunk by chunk, the
  // backward pass running again over each but the lowest: the same curve.
  m->setPruningBudget(16 << 10);
  const Curve chunked = traceCurve(*m, Rational(0), Rational(100000), false, true);
  EXPECT_GT(chunked.envelope.chunks, 10u);
  EXPECT_LE(chunked.envelope.boundBytes, 20u << 10);
  EXPECT_EQ(chunked.sweeps, 3u);
  EXPECT_EQ(chunked.envelope.linesMerged, with.envelope.linesMerged);
  ASSERT_EQ(chunked.segments.size(), without.segments.size());
  for (size_t i = 0; i < chunked.segments.size(); ++i) {
    EXPECT_EQ(chunked.segments[i].line.A, without.segments[i].line.A);
    EXPECT_EQ(chunked.segments[i].line.B, without.segments[i].line.B);
  }
  const Curve point = traceCurve(*m, Rational(500), Rational(500), false, true);
  EXPECT_FALSE(point.envelope.pruned);
}

} // namespace
