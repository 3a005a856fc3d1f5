// Reports of the simulator: LogGOPSim's text format, the critical path and its
// breakdown, the timeline trace, per-pair costs, and the diagnostics of stuck runs.
// Expected values are derived by hand (derivations in the comments); the text layout
// is LogGOPSim's (checked against its output on the same schedules).
#include "tests/sim/SchedgenPatterns.h"
#include "tests/sim/SimTestUtil.h"
#include "tests/support/TestSchedules.h"

#include "support/Diagnostics.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace infracc;
using namespace infracc::test;
namespace sg = infracc::test::schedgen;
using sim::Category;

namespace {

Schedule ping(uint64_t bytes) {
  ScheduleBuilder b(2);
  b.beginRank(0);
  b.addSend(bytes, 1);
  b.endRank();
  b.beginRank(1);
  b.addRecv(bytes, 0);
  b.endRank();
  return b.finish();
}

int64_t cat(const sim::CriticalPath &p, Category c) { return p.total[unsigned(c)]; }
int64_t cat(const sim::PathStep &s, Category c) { return s.amount[unsigned(c)]; }

std::string stuckText(const sim::SimResult &r, const Schedule &s, unsigned max = 50) {
  std::string err;
  llvm::raw_string_ostream os(err);
  DiagEngine diags(os);
  sim::reportStuck(diags, "w.goal", r, s, max);
  return os.str();
}

} // namespace

TEST(SimText, LogGOPSimLayoutForFewHosts) {
  // LogGOPSim: no comma between o and g, `Times: ` with a trailing blank.
  sim::SimResult r = runLgs(ping(1));
  EXPECT_EQ(textWithoutPerformance(r, params("")),
            "LogGP network backend; size: 2 (1 CPUs, 1 NICs); L=2500, o=1500 g=1000, G=6, O=0, "
            "P=2, S=65535\n"
            "Times: \n"
            "Host 0: 1500\n"
            "Host 1: 5500\n");
}

TEST(SimText, PerformanceLineHasLogGOPSimsSeparators) {
  sim::SimResult r = runLgs(ping(1));
  std::string out;
  llvm::raw_string_ostream os(out);
  sim::printLgsText(os, r, params(""), {});
  os.flush();
  // Whole seconds and a float speed ("inf" when under a second), as LogGOPSim prints.
  size_t from = out.find("PERFORMANCE");
  std::string line = out.substr(from, out.find("Times") - from);
  EXPECT_TRUE(llvm::StringRef(line).starts_with("PERFORMANCE: Processes: 2 \t Events: 3 \t Time: "))
      << line;
  EXPECT_TRUE(llvm::StringRef(line).contains(" s \t Speed: ")) << line;
  EXPECT_TRUE(llvm::StringRef(line).ends_with(" ev/s\n")) << line;
}

TEST(SimText, MaximumLineForMoreThan16HostsOrBatch) {
  // 17-rank dissemination of 1 byte: 5 rounds of 5500 = 27500 everywhere (ceil(log2 17)
  // = 5 rounds); the lowest host with the maximum is printed; T/1e9 in %g.
  sim::SimResult r = runLgs(sg::dissemination(17, 1));
  EXPECT_EQ(textWithoutPerformance(r, params("")),
            "LogGP network backend; size: 17 (1 CPUs, 1 NICs); L=2500, o=1500 g=1000, G=6, "
            "O=0, P=17, S=65535\n"
            "Maximum finishing time at host 0: 27500 (2.75e-05 s)\n");
  std::string out;
  llvm::raw_string_ostream os(out);
  sim::TextOptions batch;
  batch.batch = true;
  sim::printLgsText(os, runLgs(ping(1)), params(""), batch);
  EXPECT_TRUE(llvm::StringRef(os.str()).ends_with(
      "Maximum finishing time at host 1: 5500 (5.5e-06 s)\n"));
}

TEST(SimText, FractionalParametersArePrintedAsGiven) {
  // G = 0.5: (s-1)*G = trunc(1023*0.5) = 511 at the receiver: 4000+1500+511 = 6011.
  sim::SimResult r = runLgs(ping(1024), "-G 0.5 -O 0.25 -S 100000");
  EXPECT_EQ(textWithoutPerformance(r, params("-G 0.5 -O 0.25 -S 100000")),
            "LogGP network backend; size: 2 (1 CPUs, 1 NICs); L=2500, o=1500 g=1000, G=0.5, "
            "O=0.25, P=2, S=100000\n"
            "Times: \n"
            "Host 0: 1755\n"
            "Host 1: 6011\n");
  // Sender: o + trunc(1023*0.25) = 1500+255 = 1755. Receiver: max(255, 511) = 511.
}

TEST(SimText, AnEmptyScheduleFinishesAtZero) {
  // LogGOPSim crashes on a schedule without operations (aq.top() on an empty queue).
  ScheduleBuilder b(3);
  sim::SimResult r = runLgs(b.finish());
  ASSERT_TRUE(r.finished());
  EXPECT_EQ(r.hostFinish, (std::vector<uint64_t>{0, 0, 0}));
  EXPECT_EQ(r.events, 0u);
  EXPECT_TRUE(r.criticalPath.steps.empty());
}

TEST(SimCriticalPath, Nbp2pIsComputationOverheadAndLatency) {
  // Rank 1 finishes last (5504): l4 (cpu) <- the message (o charged 4001..5501, via its
  // arrival) <- rank 0's send (o 1..1501, then L to 4001; via cpu) <- l1 (0..1).
  Schedule s = nbp2p();
  sim::SimResult r = runLgs(s, "", nullptr, true);
  const sim::CriticalPath &p = r.criticalPath;
  ASSERT_TRUE(p.valid);
  ASSERT_EQ(p.steps.size(), 4u);
  EXPECT_EQ(p.steps[0].kind, sim::StepKind::Calc);
  EXPECT_EQ(p.steps[0].via, sim::Via::Start);
  EXPECT_EQ(p.steps[0].end, 1u);
  EXPECT_EQ(p.steps[1].kind, sim::StepKind::Send);
  EXPECT_EQ(p.steps[1].via, sim::Via::Cpu);
  EXPECT_EQ(cat(p.steps[1], Category::Overhead), 1500);
  EXPECT_EQ(cat(p.steps[1], Category::Latency), 2500);
  EXPECT_EQ(p.steps[2].kind, sim::StepKind::Message);
  EXPECT_EQ(p.steps[2].via, sim::Via::Arrival);
  EXPECT_EQ(p.steps[2].rank, 1u);
  EXPECT_EQ(p.steps[2].start, 4001u);
  EXPECT_EQ(p.steps[2].end, 5501u);
  EXPECT_EQ(p.steps[3].op, s.globalIndex(1, 3));
  EXPECT_EQ(cat(p, Category::Computation), 4);
  EXPECT_EQ(cat(p, Category::Overhead), 3000);
  EXPECT_EQ(cat(p, Category::Latency), 2500);
  EXPECT_EQ(cat(p, Category::Gap) + cat(p, Category::Bandwidth) + cat(p, Category::Wait), 0);
}

TEST(SimCriticalPath, SenderBoundPathGoesThroughTheNicGap) {
  // Rank 0 sends 1024 B to ranks 1, 2, 3 back to back: each send waits for the
  // previous one's gap g + 1023*G = 7138; the third starts at 14276, arrives 18276,
  // rank 3 finishes at 18276 + 1500 + 6138 = 25914.
  // Path: send (gap 1000 + bandwidth 6138) x2, send (o 1500 + L 2500), message
  // (o 1500 + bandwidth 6138).
  ScheduleBuilder b(4);
  b.beginRank(0);
  for (uint32_t d = 1; d <= 3; ++d)
    b.addSend(1024, d);
  b.endRank();
  for (uint32_t d = 1; d <= 3; ++d) {
    b.beginRank(d);
    b.addRecv(1024, 0);
    b.endRank();
  }
  sim::SimResult r = runLgs(b.finish(), "", nullptr, true);
  EXPECT_EQ(r.makespan, 25914u);
  EXPECT_EQ(r.makespanRank, 3u);
  const sim::CriticalPath &p = r.criticalPath;
  ASSERT_EQ(p.steps.size(), 4u);
  EXPECT_EQ(p.steps[1].via, sim::Via::Nic);
  EXPECT_EQ(p.steps[2].via, sim::Via::Nic);
  EXPECT_EQ(p.steps[3].via, sim::Via::Arrival);
  EXPECT_EQ(cat(p, Category::Gap), 2000);
  EXPECT_EQ(cat(p, Category::Bandwidth), 3 * 6138);
  EXPECT_EQ(cat(p, Category::Overhead), 3000);
  EXPECT_EQ(cat(p, Category::Latency), 2500);
  EXPECT_EQ(cat(p, Category::Computation) + cat(p, Category::Wait), 0);
}

TEST(SimCriticalPath, AMessageWaitingForABusyCpuFollowsTheCpu) {
  // The rendezvous message arrives at 4000 while rank 1 computes until 20000; it is
  // charged from 20000: 1500 + 99999*6 = 621494. Path: calc (20000) -> message via cpu.
  ScheduleBuilder b(2);
  b.beginRank(0);
  b.addSend(100000, 1);
  b.endRank();
  b.beginRank(1);
  auto w = b.addCalc(20000);
  auto rr = b.addRecv(100000, 0);
  b.addDependency(rr, w, DepKind::Requires);
  b.endRank();
  sim::SimResult r = runLgs(b.finish(), "", nullptr, true);
  const sim::CriticalPath &p = r.criticalPath;
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[1].kind, sim::StepKind::Message);
  EXPECT_EQ(p.steps[1].via, sim::Via::Cpu);
  EXPECT_EQ(cat(p, Category::Computation), 20000);
  EXPECT_EQ(cat(p, Category::Overhead), 1500);
  EXPECT_EQ(cat(p, Category::Bandwidth), 599994);
}

TEST(SimCriticalPath, AtlahsChargesBandwidthInFlightAndGapAtTheReceiver) {
  // atlahs, 1024 B: send o 1500, L 2500, 1023*6 = 6138 in flight; at the receiver
  // g 1000 then o 1500: 12638.
  sim::SimResult r = runAtlahs(ping(1024), "", nullptr, true);
  const sim::CriticalPath &p = r.criticalPath;
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(cat(p, Category::Overhead), 3000);
  EXPECT_EQ(cat(p, Category::Latency), 2500);
  EXPECT_EQ(cat(p, Category::Bandwidth), 6138);
  EXPECT_EQ(cat(p, Category::Gap), 1000);
  EXPECT_EQ(r.makespan, 12638u);
}

TEST(SimCriticalPath, BreakdownAddsUpToTheMakespanOnSchedgenPatterns) {
  for (const auto &[name, s] : std::vector<std::pair<const char *, Schedule>>{
           {"recdoub", sg::allreduceRecDoub(64, 1 << 20)},
           {"ring", sg::allreduceRing(8, 80000)},
           {"a2a", sg::linearAlltoall(16, 70000)},
           {"nway", sg::nwayDissemination(27, 2, 64)},
           {"bcast0", sg::binomialTreeBcast(33, 0)}}) {
    for (bool atlahs : {false, true}) {
      SCOPED_TRACE(std::string(name) + (atlahs ? " atlahs" : " lgs"));
      sim::SimResult r = atlahs ? runAtlahs(s, "-S 1000", nullptr, true)
                                : runLgs(s, "-S 1000", nullptr, true);
      if (!r.finished())
        continue;   // the atlahs engine's own deadlocks (see SimAtlahsTest)
      int64_t sum = 0;
      for (unsigned c = 0; c < sim::NumCategories; ++c)
        sum += r.criticalPath.total[c];
      EXPECT_EQ(sum, int64_t(r.makespan));
      ASSERT_FALSE(r.criticalPath.steps.empty());
      EXPECT_EQ(r.criticalPath.steps.front().start, 0u);
      // The last step may run on another rank: a rendezvous completion at the receiver
      // sets the sender's clock.
      EXPECT_EQ(r.criticalPath.steps.back().end, r.makespan);
      for (size_t i = 1; i < r.criticalPath.steps.size(); ++i)
        EXPECT_EQ(r.criticalPath.steps[i].start, r.criticalPath.steps[i - 1].end);
    }
  }
}

TEST(SimTrace, RecordsBusyIntervalsAndMessages) {
  // ping 1024 B: send o [0,1500) on cpu 0, send gap [0,7138) on nic 0; the receiver's
  // o [4000,11638) and recv gap [4000,11138); the message completes at 11638.
  Schedule s = ping(1024);
  sim::SimTrace t;
  runLgs(s, "", &t);
  ASSERT_EQ(t.intervals.size(), 4u);
  auto check = [&](size_t i, sim::Resource res, sim::IntervalKind k, uint32_t rank, uint64_t a,
                   uint64_t e) {
    SCOPED_TRACE(i);
    EXPECT_EQ(t.intervals[i].resource, res);
    EXPECT_EQ(t.intervals[i].kind, k);
    EXPECT_EQ(t.intervals[i].rank, rank);
    EXPECT_EQ(t.intervals[i].start, a);
    EXPECT_EQ(t.intervals[i].end, e);
  };
  check(0, sim::Resource::Cpu, sim::IntervalKind::SendOverhead, 0, 0, 1500);
  check(1, sim::Resource::NicSend, sim::IntervalKind::SendGap, 0, 0, 7138);
  check(2, sim::Resource::Cpu, sim::IntervalKind::RecvOverhead, 1, 4000, 11638);
  check(3, sim::Resource::NicRecv, sim::IntervalKind::RecvGap, 1, 4000, 11138);
  ASSERT_EQ(t.messages.size(), 1u);
  const sim::TraceMessage &m = t.messages[0];
  EXPECT_EQ(m.sendOp, 0u);
  EXPECT_EQ(m.recvOp, 1u);
  EXPECT_EQ(m.src, 0u);
  EXPECT_EQ(m.dst, 1u);
  EXPECT_EQ(m.bytes, 1024u);
  EXPECT_EQ(m.sendStart, 0u);
  EXPECT_EQ(m.arrival, 4000u);
  EXPECT_EQ(m.received, 4000u);
  EXPECT_EQ(m.completed, 11638u);
  EXPECT_FALSE(m.rendezvous);
}

TEST(SimTrace, RecordingChangesNoResult) {
  Schedule s = sg::allreduceRecDoub(16, 4096);
  sim::SimTrace t;
  sim::SimResult plain = runLgs(s), traced = runLgs(s, "", &t, true);
  EXPECT_EQ(plain.hostFinish, traced.hostFinish);
  EXPECT_EQ(plain.events, traced.events);
  EXPECT_EQ(t.messages.size(), plain.messages);
}

namespace {
// L = 100 and G = 1 between ranks 0 and 1, the defaults otherwise.
class NearPair : public sim::LinkCostModel {
public:
  sim::PairCost cost(uint32_t src, uint32_t dst) const override {
    if ((src == 0 && dst == 1) || (src == 1 && dst == 0))
      return {100, sim::PerByte(1)};
    return {2500, sim::PerByte(6)};
  }
};
} // namespace

TEST(SimLinkCostModel, SuppliesLAndGPerPair) {
  // 0 -> 1: arrival 1500 + 100; receiver o + 1023*1: 1600 + 1500 + 1023 = 4123.
  // 0 -> 2 (second send, after the first's gap 1000 + 1023*1 = 2023 and o = 1500):
  // start 2023, arrival 2023 + 1500 + 2500 = 6023, receiver 6023 + 1500 + 6138 = 13661.
  ScheduleBuilder b(3);
  b.beginRank(0);
  b.addSend(1024, 1);
  b.addSend(1024, 2);
  b.endRank();
  b.beginRank(1);
  b.addRecv(1024, 0);
  b.endRank();
  b.beginRank(2);
  b.addRecv(1024, 0);
  b.endRank();
  NearPair model;
  sim::SimOptions o;
  o.costs = &model;
  sim::SimResult r = sim::simulate(b.finish(), o);
  EXPECT_EQ(r.hostFinish, (std::vector<uint64_t>{3523, 4123, 13661}));
}

TEST(SimStuck, AReceiveThatNeverMatchesIsListedWithItsRankAndLabelOrIndex) {
  ScheduleBuilder b(2, /*keepLabels=*/true);
  b.beginRank(0);
  b.addOp(OpKind::Send, 1, 8, 1, 0, 0, "s");
  b.endRank();
  b.beginRank(1);
  auto r1 = b.addOp(OpKind::Recv, 0, 8, 2, 0, 0, "r");
  auto c = b.addOp(OpKind::Calc, 0, 10, 0, 0, 0, "c");
  b.addDependency(c, r1, DepKind::Requires);
  b.endRank();
  Schedule s = b.finish();
  sim::SimResult r = runLgs(s);
  ASSERT_FALSE(r.finished());
  EXPECT_EQ(stuckText(r, s),
            "w.goal: error: the schedule cannot finish: 2 operations never completed and 1 message "
            "was never received (1 rank affected; simulated time reached 5542 ns)\n"
            "w.goal: note: rank 1: r (op 0): recv 8b from 0 tag 2: posted at 0 ns, no matching "
            "message arrived\n"
            "w.goal: note: rank 1: c (op 1): calc 10: never started: its dependency was never "
            "satisfied\n"
            "w.goal: note: rank 1: message from rank 0 (s (op 0): send 8b to 1 tag 1) arrived at "
            "4000 ns, no recv matched it\n");
}

TEST(SimStuck, ARendezvousSendWhoseRecvNeverComes) {
  // rank 1 posts nothing; the 100000-byte send stays open, its successor never runs.
  ScheduleBuilder b(2);
  b.beginRank(0);
  auto s0 = b.addSend(100000, 1, 4, 1, 1);
  auto c = b.addCalc(5);
  b.addDependency(c, s0, DepKind::Requires);
  b.endRank();
  b.beginRank(1);
  b.endRank();
  Schedule s = b.finish();
  sim::SimResult r = runLgs(s);
  EXPECT_EQ(stuckText(r, s),
            "w.goal: error: the schedule cannot finish: 2 operations never completed and 1 message "
            "was never received (2 ranks affected; simulated time reached 605494 ns)\n"
            "w.goal: note: rank 0: op 0: send 100000b to 1 tag 4 cpu 1 nic 1: rendezvous send "
            "(100000 bytes > S) never completed: rank 1 never posted a matching recv\n"
            "w.goal: note: rank 0: op 1: calc 5: never started: its dependency was never "
            "satisfied\n"
            "w.goal: note: rank 1: message from rank 0 (op 0: send 100000b to 1 tag 4 cpu 1 nic "
            "1) arrived at 4000 ns, no recv matched it\n");
}

TEST(SimStuck, ACycleThroughMessagesAcrossRanks) {
  // Each rank receives before it sends to the other: both recvs wait forever.
  ScheduleBuilder b(2);
  for (uint32_t r = 0; r < 2; ++r) {
    b.beginRank(r);
    auto rv = b.addRecv(8, 1 - r);
    auto sd = b.addSend(8, 1 - r);
    b.addDependency(sd, rv, DepKind::Requires);
    b.endRank();
  }
  Schedule s = b.finish();
  sim::SimResult r = runLgs(s);
  ASSERT_EQ(r.stuck.size(), 4u);
  EXPECT_EQ(stuckText(r, s, 2),
            "w.goal: error: the schedule cannot finish: 4 operations never completed (2 ranks "
            "affected; simulated time reached 0 ns)\n"
            "w.goal: note: rank 0: op 0: recv 8b from 1 tag 0: posted at 0 ns, no matching message "
            "arrived\n"
            "w.goal: note: rank 0: op 1: send 8b to 1 tag 0: never started: its dependency was "
            "never satisfied\n"
            "w.goal: note: ... and 2 more (list them all with -sim-max-stuck=0)\n");
}

TEST(SimStuck, ASendTakenByARecvOfAtMostSBytesNeverCompletes) {
  // LogGOPSim decides eager/rendezvous by the RECV's size in the unexpected-queue
  // path: a 100000-byte send matched late by a 10-byte recv is never completed, and
  // LogGOPSim prints times as if nothing happened (measured: Host 0: 1500, Host 1:
  // 621494). We say which send is stuck.
  ScheduleBuilder b(2);
  b.beginRank(0);
  auto s0 = b.addSend(100000, 1);
  auto c = b.addCalc(10);
  b.addDependency(c, s0, DepKind::Requires);
  b.endRank();
  b.beginRank(1);
  auto w = b.addCalc(20000);
  auto rv = b.addRecv(10, 0);
  b.addDependency(rv, w, DepKind::Requires);
  b.endRank();
  Schedule s = b.finish();
  sim::SimResult r = runLgs(s);
  EXPECT_EQ(r.hostFinish, (std::vector<uint64_t>{1500, 621494}));
  ASSERT_EQ(r.stuck.size(), 2u);
  EXPECT_EQ(r.stuck[0].why, sim::StuckItem::RendezvousUnmatched);
  EXPECT_NE(stuckText(r, s).find("its message was taken by a recv of at most S bytes"),
            std::string::npos);
}

TEST(SimChecks, RejectsUnloweredOpsAndPeersOutOfRange) {
  ScheduleBuilder b(2);
  b.beginRank(0);
  b.addSend(8, 1);
  b.addOp(OpKind::Collective, 0, 0);
  b.endRank();
  llvm::Error e = sim::checkSimulatable(b.finish());
  EXPECT_EQ(llvm::toString(std::move(e)),
            "rank 0, op 1: 'collective' is not lowered; the simulator runs send, recv and calc "
            "only (add lower-collectives to -passes)");
  ScheduleBuilder c(2);
  c.beginRank(1);
  c.addRecv(8, 5);
  c.endRank();
  e = sim::checkSimulatable(c.finish());
  EXPECT_EQ(llvm::toString(std::move(e)),
            "rank 1, op 0: recv from rank 5, but the schedule has 2 ranks (0..1)");
}
