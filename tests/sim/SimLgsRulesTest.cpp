// The rules of LogGOPSim v1 (reference notes §3.3 and §8), one small schedule each.
// Expected values are derived by hand from the rules (the derivation is in the
// comment); each was also checked against the real LogGOPSim (spcl/LogGOPSim 76451de,
// -O2) on the same schedule written as GOAL and converted with its txt2bin.
// Defaults: L=2500 o=1500 g=1000 G=6 O=0 S=65535.
#include "tests/sim/SimTestUtil.h"
#include "tests/support/TestSchedules.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;
using sim::SimResult;

namespace {

std::vector<uint64_t> hosts(const SimResult &r) { return r.hostFinish; }

Schedule pingPong(uint64_t bytes) {
  ScheduleBuilder b(2);
  b.beginRank(0);
  b.addSend(bytes, 1);
  b.endRank();
  b.beginRank(1);
  b.addRecv(bytes, 0);
  b.endRank();
  return b.finish();
}

} // namespace

TEST(SimLgsRules, CalcsOnOneCpuRunInSequenceOtherCpusOverlap) {
  // a: calc 100; b: calc 200 requires a; c: calc 50 cpu 1.
  // cpu 0: a 0..100, b 100..300; cpu 1: c 0..50. Host = max over CPUs = 300.
  ScheduleBuilder b(1);
  b.beginRank(0);
  auto a = b.addCalc(100);
  auto bb = b.addCalc(200);
  b.addCalc(50, 1);
  b.addDependency(bb, a, DepKind::Requires);
  b.endRank();
  SimResult r = runLgs(b.finish());
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{300}));
  EXPECT_EQ(r.cpuFinish, (std::vector<uint64_t>{300, 50}));
  EXPECT_EQ(r.numCpus, 2u);
  EXPECT_EQ(r.events, 3u);   // three ops became executable, no messages
}

TEST(SimLgsRules, AnOpWithHundredsOfSuccessorsFreesThemAll) {
  // a: calc 10 on cpu 0; 300 calcs of 1 on cpu 0 require a; 300 calcs of 2 on cpu 1
  // irequire a (more successors than the engine's per-op count holds; it falls back
  // to the successor array). cpu 0: a 0..10, then 300 x 1 = 310; cpu 1: freed when a
  // starts, 300 x 2 = 600. LogGOPSim: Host 0: 600, Events: 601.
  ScheduleBuilder b(1);
  b.beginRank(0);
  auto a = b.addCalc(10);
  for (int i = 0; i < 300; ++i)
    b.addDependency(b.addCalc(1), a, DepKind::Requires);
  for (int i = 0; i < 300; ++i)
    b.addDependency(b.addCalc(2, 1), a, DepKind::IRequires);
  b.endRank();
  SimResult r = runLgs(b.finish());
  EXPECT_EQ(r.cpuFinish, (std::vector<uint64_t>{310, 600}));
  EXPECT_EQ(r.events, 601u);
  EXPECT_TRUE(r.finished());
}

TEST(SimLgsRules, EagerMessageCostsOverheadLatencyOverhead) {
  // Send at 0: sender o = 1500. Arrival 0+o+L = 4000, receiver o: 5500.
  SimResult r = runLgs(pingPong(1));
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{1500, 5500}));
  EXPECT_EQ(r.events, 3u);   // send, recv, one message
  EXPECT_EQ(r.messages, 1u);
  EXPECT_EQ(r.eager, 1u);
}

TEST(SimLgsRules, PerByteGapIsChargedAtTheReceiverOnly) {
  // 1024 B: arrival 4000 (no G), receiver 4000+1500+1023*6 = 11638. The sender's host
  // time ignores its NIC gap (nextgs = 1000+6138): 1500.
  SimResult r = runLgs(pingPong(1024));
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{1500, 11638}));
}

TEST(SimLgsRules, BackToBackSendsWaitForCpuAndNicGap) {
  // Two 1-byte sends: the second waits for max(nexto=1500, nextgs=1000) = 1500, ends
  // 3000, arrives 5500. Receiver: 4000 -> 5500, then 5500 -> 7000.
  ScheduleBuilder b(2);
  b.beginRank(0);
  b.addSend(1, 1);
  b.addSend(1, 1);
  b.endRank();
  b.beginRank(1);
  b.addRecv(1, 0);
  b.addRecv(1, 0);
  b.endRank();
  Schedule s = b.finish();
  EXPECT_EQ(hosts(runLgs(s)), (std::vector<uint64_t>{3000, 7000}));
  // g = 2000: the second send waits for the gap: 2000 -> 3500; arrives 6000; the
  // receiver is free at 5500 (o) and its recv gap at 6000: 6000 -> 7500.
  EXPECT_EQ(hosts(runLgs(s, "-g 2000")), (std::vector<uint64_t>{3500, 7500}));
}

TEST(SimLgsRules, PerByteGapDelaysTheNextSendOnTheSameNic) {
  // 1024 B: nextgs = 1000 + 1023*6 = 7138, so the second send starts at 7138 -> 8638.
  // Receiver: first 4000 -> 11638 (recv gap 11138); second arrives 11138, waits for
  // the CPU until 11638 -> 11638+1500+6138 = 19276.
  ScheduleBuilder b(2);
  b.beginRank(0);
  b.addSend(1024, 1);
  b.addSend(1024, 1);
  b.endRank();
  b.beginRank(1);
  b.addRecv(1024, 0);
  b.addRecv(1024, 0);
  b.endRank();
  EXPECT_EQ(hosts(runLgs(b.finish())), (std::vector<uint64_t>{8638, 19276}));
}

TEST(SimLgsRules, EachNicHasItsOwnGap) {
  // Same sends on nic 0 and nic 1: the second only waits for the CPU (1500) -> 3000,
  // arrives at rank 2 at 5500 -> 5500+1500+6138 = 13138.
  ScheduleBuilder b(3);
  b.beginRank(0);
  b.addSend(1024, 1, 0, 0, 0);
  b.addSend(1024, 2, 0, 0, 1);
  b.endRank();
  b.beginRank(1);
  b.addRecv(1024, 0);
  b.endRank();
  b.beginRank(2);
  b.addRecv(1024, 0);
  b.endRank();
  SimResult r = runLgs(b.finish());
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{3000, 11638, 13138}));
  EXPECT_EQ(r.numNics, 2u);
}

namespace {
// rank 0: s: send 100000b to 1; c: calc 10 requires s.
// rank 1: [w: calc 20000;] r: recv 100000b from 0 [requires w].
Schedule rendezvous(bool lateRecv) {
  ScheduleBuilder b(2);
  b.beginRank(0);
  auto s = b.addSend(100000, 1);
  auto c = b.addCalc(10);
  b.addDependency(c, s, DepKind::Requires);
  b.endRank();
  b.beginRank(1);
  if (lateRecv) {
    auto w = b.addCalc(20000);
    auto r = b.addRecv(100000, 0);
    b.addDependency(r, w, DepKind::Requires);
  } else {
    b.addRecv(100000, 0);
  }
  b.endRank();
  return b.finish();
}
} // namespace

TEST(SimLgsRules, RendezvousCompletesWhenTheReceiverMatchesTheMessage) {
  // Recv posted at 0 (RQ). The message arrives at 4000: receiver 4000+1500+99999*6 =
  // 605494; it matches, so the send completes at 4000 and the sender's clock jumps
  // from 1500 to 4000 (no ack latency): c runs 4000..4010.
  SimResult r = runLgs(rendezvous(false));
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{4010, 605494}));
  EXPECT_EQ(r.rendezvous, 1u);
  // Eager at S = 100000 (size <= S): c runs right after the send's o: 1500..1510.
  EXPECT_EQ(hosts(runLgs(rendezvous(false), "-S 100000")), (std::vector<uint64_t>{1510, 605494}));
}

TEST(SimLgsRules, RendezvousMatchedFromTheUnexpectedQueueCompletesAtPosting) {
  // The message arrives at 4000 while w keeps rank 1's CPU busy until 20000; it is
  // charged at 20000 (-> 621494) and queued as unexpected. The recv is posted at
  // 20000, finds it, completes the send at 20000: c runs 20000..20010.
  SimResult r = runLgs(rendezvous(true));
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{20010, 621494}));
  EXPECT_EQ(r.reinsertions, 1u);
}

TEST(SimLgsRules, EagerLimitIsInclusiveAndRendezvousUsesTheRecvSize) {
  // rank 0: s1 send 1b tag 1; c1 calc 10 requires s1; s2 send 2b tag 2 requires c1;
  //         c2 calc 10 requires s2.
  // rank 1: w calc 20000; r1 recv 1b tag 1, r2 recv 2b tag 2, both require w.
  // Default S: everything eager: c1 1500..1510, s2 1510 -> 3010, c2 -> 3020. Rank 1
  // takes message 1 at 20000 (-> 21500, unexpected), r1 matches it, r2 is posted
  // before message 2 is charged (21500 -> 23006).
  ScheduleBuilder b(2);
  b.beginRank(0);
  auto s1 = b.addSend(1, 1, 1);
  auto c1 = b.addCalc(10);
  auto s2 = b.addSend(2, 1, 2);
  auto c2 = b.addCalc(10);
  b.addDependency(c1, s1, DepKind::Requires);
  b.addDependency(s2, c1, DepKind::Requires);
  b.addDependency(c2, s2, DepKind::Requires);
  b.endRank();
  b.beginRank(1);
  auto w = b.addCalc(20000);
  auto r1 = b.addRecv(1, 0, 1);
  auto r2 = b.addRecv(2, 0, 2);
  b.addDependency(r1, w, DepKind::Requires);
  b.addDependency(r2, w, DepKind::Requires);
  b.endRank();
  Schedule s = b.finish();
  EXPECT_EQ(hosts(runLgs(s)), (std::vector<uint64_t>{3020, 23006}));
  // S = 1: the 1-byte message stays eager (1 <= S), the 2-byte one is rendezvous and
  // completes when r2 (already posted) matches it at 21500: c2 21500..21510.
  SimResult r = runLgs(s, "-S 1");
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{21510, 23006}));
  EXPECT_EQ(r.eager, 1u);
  EXPECT_EQ(r.rendezvous, 1u);
}

TEST(SimLgsRules, ZeroByteMessagesWrapTheUnsignedPerByteTerms) {
  // (0-1)*G wraps to -6: the receiver's o clock becomes 4000+1500-6 = 5494
  // (max((0-1)*O, (0-1)*G) = max(0, 2^64-6)).
  EXPECT_EQ(hosts(runLgs(pingPong(0))), (std::vector<uint64_t>{1500, 5494}));
  // With O = 1, (0-1)*O = 2^64-1 acts as -1 on both sides: 1499 and 5499.
  EXPECT_EQ(hosts(runLgs(pingPong(0), "-O 1")), (std::vector<uint64_t>{1499, 5499}));
}

TEST(SimLgsRules, PostingARecvIsFreeButMessagesWaitForTheCpu) {
  // rank 1: c calc 10000 and r recv are roots; the recv sorts first and is posted at
  // 0. The message arrives at 4000 but the CPU is busy until 10000: 10000 -> 11500.
  ScheduleBuilder b(2);
  b.beginRank(0);
  b.addSend(1, 1);
  b.endRank();
  b.beginRank(1);
  b.addCalc(10000);
  b.addRecv(1, 0);
  b.endRank();
  SimResult r = runLgs(b.finish());
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{1500, 11500}));
  EXPECT_EQ(r.reinsertions, 1u);
}

TEST(SimLgsRules, AMessageIsChargedOnTheSendersCpuIndexAtTheReceiver) {
  // The send uses cpu 1, so the receiver's cpu 1 pays o although its recv is on cpu 0.
  // rank 1's cpu 1 runs a calc until 6000: the message (arrival 4000) waits: 7500.
  ScheduleBuilder b(2);
  b.beginRank(0);
  b.addSend(1, 1, 0, 1, 0);
  b.endRank();
  b.beginRank(1);
  b.addRecv(1, 0);
  b.addCalc(6000, 1);
  b.endRank();
  SimResult r = runLgs(b.finish());
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{1500, 7500}));
  EXPECT_EQ(r.cpuFinish, (std::vector<uint64_t>{0, 1500, 0, 7500}));
}

TEST(SimLgsRules, DependenciesAcrossCpusCarryNoTime) {
  // a: calc 50000; s: send 1b requires a; c: calc 1000 cpu 1 requires s.
  // s at 50000; c is freed then but starts at its own CPU's clock, 0: runs 0..1000.
  ScheduleBuilder b(2);
  b.beginRank(0);
  auto a = b.addCalc(50000);
  auto s = b.addSend(1, 1);
  auto c = b.addCalc(1000, 1);
  b.addDependency(s, a, DepKind::Requires);
  b.addDependency(c, s, DepKind::Requires);
  b.endRank();
  b.beginRank(1);
  b.addRecv(1, 0);
  b.endRank();
  sim::SimTrace trace;
  SimResult r = runLgs(b.finish(), "", &trace);
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{51500, 55500}));
  const sim::TraceInterval *calc = nullptr;
  for (const auto &iv : trace.intervals)
    if (iv.op == c)
      calc = &iv;
  ASSERT_NE(calc, nullptr);
  EXPECT_EQ(calc->start, 0u);
  EXPECT_EQ(calc->end, 1000u);
  EXPECT_EQ(calc->unit, 1u);
}

TEST(SimLgsRules, IRequiresReleasesAtStartAndTheNbp2pExampleGives1506And5504) {
  // test-nbp2p from LogGOPSim2: per rank l1 calc 1, l2 send/recv 1b, l3 calc 2,
  // l4 calc 3; l2 requires l1, l3 irequires l2, l4 requires l2 and l3.
  // Rank 0: l1 0..1, l2 at 1 (o until 1501, eager done), l3 released at the send's
  // start but runs at the CPU clock 1501..1503, l4 1503..1506.
  // Rank 1: l1 0..1, l2 posted at 1 (frees l3: 1..3), message at 1+1500+2500 = 4001,
  // o until 5501, l4 5501..5504.
  Schedule s = nbp2p();
  SimResult r = runLgs(s);
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{1506, 5504}));
  EXPECT_EQ(r.events, 9u);   // LogGOPSim prints Events: 9
}

TEST(SimLgsRules, MatchingTakesTheFirstQueuedEntryWithWildcardsOnEitherSide) {
  // rank 0 posts r1 (any, tag 7), r2 (from 2, any tag), r3 (any, any), r4 (from 3,
  // tag 7) at 0, then c requires all four. Messages: rank 1 tag 7 (arrives 4000),
  // rank 2 tag 7 (4000, later sequence number), rank 1 tag 1 (sent at 1500 after the
  // first, arrives 5500), rank 3 tag 7 (after calc 4000, arrives 8000).
  // Receiving 8 bytes costs o + 7*6 = 1542. 4000: 1/tag7 -> r1 (the first entry that
  // matches), CPU busy until 5542. 1/tag1 arrives at 5500 and 2/tag7 waits: both are
  // retried at 5542, 2/tag7 first (older sequence number): it matches r2 (r2 is
  // queued before r3) -> 7084. 1/tag1 then matches r3 -> 8626. 3/tag7 (arrival 8000)
  // waits until 8626, matches r4 -> 10168; c 10168..10178.
  ScheduleBuilder b(4);
  b.beginRank(0);
  auto r1 = b.addRecv(8, AnySource, 7);
  auto r2 = b.addRecv(8, 2, AnyTag);
  auto r3 = b.addRecv(8, AnySource, AnyTag);
  auto r4 = b.addRecv(8, 3, 7);
  auto c = b.addCalc(10);
  for (auto r : {r1, r2, r3, r4})
    b.addDependency(c, r, DepKind::Requires);
  b.endRank();
  b.beginRank(1);
  auto s7 = b.addSend(8, 0, 7);
  auto s1 = b.addSend(8, 0, 1);
  b.addDependency(s1, s7, DepKind::Requires);
  b.endRank();
  b.beginRank(2);
  b.addSend(8, 0, 7);
  b.endRank();
  b.beginRank(3);
  auto x = b.addCalc(4000);
  auto s3 = b.addSend(8, 0, 7);
  b.addDependency(s3, x, DepKind::Requires);
  b.endRank();
  Schedule s = b.finish();
  sim::SimTrace trace;
  SimResult r = runLgs(s, "", &trace);
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{10178, 3000, 1500, 5500}));
  auto recvOf = [&](uint32_t rank, uint32_t local) {
    return messageOf(trace, s.globalIndex(rank, local))->recvOp;
  };
  EXPECT_EQ(recvOf(1, s7), s.globalIndex(0, r1));
  EXPECT_EQ(recvOf(2, 0), s.globalIndex(0, r2));
  EXPECT_EQ(recvOf(1, s1), s.globalIndex(0, r3));
  EXPECT_EQ(recvOf(3, s3), s.globalIndex(0, r4));
}

TEST(SimLgsRules, AnUnexpectedMessageIsMatchedInArrivalOrder) {
  // Three messages from rank 1 (tags 5, 6, 5) arrive while rank 0 computes; then
  // rank 0 posts recv(any source, tag 5) twice and recv(1, any tag): the first takes
  // the oldest tag-5 message, the second the next tag-5 one, the wildcard-tag recv
  // what is left (tag 6).
  ScheduleBuilder b(2);
  b.beginRank(0);
  auto w = b.addCalc(100000);
  auto ra = b.addRecv(8, AnySource, 5);
  auto rb = b.addRecv(8, AnySource, 5);
  auto rc = b.addRecv(8, 1, AnyTag);
  for (auto r : {ra, rb, rc})
    b.addDependency(r, w, DepKind::Requires);
  b.endRank();
  b.beginRank(1);
  auto m1 = b.addSend(8, 0, 5);
  auto m2 = b.addSend(8, 0, 6);
  auto m3 = b.addSend(8, 0, 5);
  b.addDependency(m2, m1, DepKind::Requires);
  b.addDependency(m3, m2, DepKind::Requires);
  b.endRank();
  Schedule s = b.finish();
  sim::SimTrace trace;
  SimResult r = runLgs(s, "", &trace);
  ASSERT_TRUE(r.finished());
  EXPECT_EQ(messageOf(trace, s.globalIndex(1, m1))->recvOp, s.globalIndex(0, ra));
  EXPECT_EQ(messageOf(trace, s.globalIndex(1, m3))->recvOp, s.globalIndex(0, rb));
  EXPECT_EQ(messageOf(trace, s.globalIndex(1, m2))->recvOp, s.globalIndex(0, rc));
  // The three messages are charged back to back once the CPU is free at 100000:
  // 101500, 103000, 104500 (sizes 8: 7*6 = 42 each) -> 104542 + 42 + 42 = 104626.
  EXPECT_EQ(r.hostFinish[0], 104626u);
}

TEST(SimLgsRules, FreedOpsAreSortedWithLibstdcxxUnstableSort) {
  // 20 recvs, 3 sends and 2 calcs are roots on rank 0 (in that order, see below).
  // LogGOPSim std::sort's them by type; beyond 16 elements introsort permutes equal
  // types, which changes the posting order of the recvs and so the matching.
  // Measured with LogGOPSim (the same schedule written as GOAL): host times below.
  ScheduleBuilder b(4);
  b.beginRank(0);
  for (uint32_t i = 0; i < 20; ++i)
    b.addRecv(100 + i, 1 + i % 3, i % 5);
  b.addSend(100, 1, 0);
  b.addCalc(300);
  b.addSend(70000, 2, 1);
  b.addCalc(50, 1);
  b.addSend(10, 3, 2, 0, 1);
  b.endRank();
  for (uint32_t r = 1; r <= 3; ++r) {
    b.beginRank(r);
    for (uint32_t i = 0; i < 20; ++i)
      if (1 + i % 3 == r)
        b.addSend(100 + i, 0, i % 5);
    b.addRecv(r == 1 ? 100 : r == 2 ? 70000 : 10, 0, r - 1);
    b.endRank();
  }
  SimResult r = runLgs(b.finish());
  EXPECT_EQ(hosts(r), (std::vector<uint64_t>{438418, 428588, 432710, 11122}));
  EXPECT_EQ(r.events, 71u);
}

TEST(SimLgsRules, RingAllreduceOf9RanksDeadlocksLikeLogGOPSim) {
  // schedgen allreduce_ring: 1 send + 2(n-1) recvs are roots. For n >= 9 the unstable
  // sort posts a recv that frees no send first; a message is consumed without passing
  // the token on. LogGOPSim prints leftover queues instead of times (measured on
  // schedgen -p allreduce_ring -s 9 -d 1024: "receive queue on host i contains 14
  // elements!" for every host, Events: 180).
  ScheduleBuilder b(9);
  for (uint32_t rank = 0; rank < 9; ++rank) {
    b.beginRank(rank);
    int lastRecv = -1;
    for (int i = 0; i < 16; ++i) {
      auto s = b.addSend(113, (rank + 1) % 9);
      if (lastRecv >= 0)
        b.addDependency(s, uint32_t(lastRecv), DepKind::Requires);
      lastRecv = int(b.addRecv(113, (rank + 8) % 9));
    }
    b.endRank();
  }
  SimResult r = runLgs(b.finish());
  EXPECT_FALSE(r.finished());
  std::vector<uint32_t> posted(9, 0);
  for (const sim::StuckItem &it : r.stuck)
    if (it.why == sim::StuckItem::RecvUnmatched)
      ++posted[it.rank];
  EXPECT_EQ(posted, std::vector<uint32_t>(9, 14));
  EXPECT_EQ(r.events, 180u);
}
