// Message counts and bytes per rank of each algorithm against closed-form
// expressions, the NCCL options (channels, protocols, reduction calcs), and simulated
// times of small lowered collectives against LogGOPS formulas worked out by hand.
#include "tests/collectives/CollTestUtil.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <bit>

using namespace infracc;
using namespace infracc::test;

namespace {

using K = CollectiveKind;
using A = CollAlgorithm;

Traffic lowerTraffic(CollCase c) {
  Lowered l = lowerAndCheck(c);
  EXPECT_TRUE(l.schedule) << l.diags;
  EXPECT_TRUE(l.check.ok()) << c.name() << "\n" << l.checkText();
  return l.schedule ? traffic(*l.schedule) : Traffic{};
}

CollCase make(K k, A a, uint32_t P, uint64_t N) {
  CollCase c;
  c.kind = k;
  c.algo = a;
  c.members = P;
  c.bytes = N;
  return c;
}

uint64_t log2ceil(uint64_t x) { return x <= 1 ? 0 : 64 - std::countl_zero(x - 1); }

TEST(Traffic, RingCollectives) {
  for (uint32_t P : {2u, 3u, 5u, 8u, 12u}) {
    uint64_t N = 120 * P;
    Traffic t = lowerTraffic(make(K::Allreduce, A::Ring, P, N));
    for (uint32_t r = 0; r < P; ++r) {
      EXPECT_EQ(t.sends[r], 2 * (P - 1));
      EXPECT_EQ(t.sendBytes[r], 2 * (P - 1) * N / P);
      EXPECT_EQ(t.recvBytes[r], 2 * (P - 1) * N / P);
    }
    for (K k : {K::Allgather, K::Reducescatter}) {
      t = lowerTraffic(make(k, A::Ring, P, N));
      for (uint32_t r = 0; r < P; ++r) {
        EXPECT_EQ(t.sends[r], P - 1);
        EXPECT_EQ(t.sendBytes[r], (P - 1) * N);
      }
    }
    // The chain: everyone but the last sends the whole buffer once.
    t = lowerTraffic(make(K::Bcast, A::Ring, P, N));
    uint64_t senders = 0;
    for (uint32_t r = 0; r < P; ++r)
      senders += t.sends[r];
    EXPECT_EQ(senders, P - 1);
  }
}

TEST(Traffic, RecursiveDoublingAndHalving) {
  for (uint32_t P : {2u, 4u, 8u, 16u}) {
    uint64_t N = 64 * P, k = log2ceil(P);
    Traffic t = lowerTraffic(make(K::Allreduce, A::RecDoub, P, N));
    Traffic h = lowerTraffic(make(K::Allreduce, A::Rabenseifner, P, N));
    Traffic g = lowerTraffic(make(K::Allgather, A::RecDoub, P, N));
    for (uint32_t r = 0; r < P; ++r) {
      EXPECT_EQ(t.sends[r], k);
      EXPECT_EQ(t.sendBytes[r], k * N);
      EXPECT_EQ(h.sends[r], 2 * k);
      EXPECT_EQ(h.sendBytes[r], 2 * N * (P - 1) / P);
      EXPECT_EQ(g.sendBytes[r], (P - 1) * N);
    }
  }
  // 6 ranks: pof2 4, rem 2. Ranks 0 and 2 fold into 1 and 3 (one send each, one recv
  // of the result); 1 and 3 take part in 2 exchanges and send the result back.
  Traffic t = lowerTraffic(make(K::Allreduce, A::RecDoub, 6, 600));
  EXPECT_EQ(t.sends, (std::vector<uint64_t>{1, 3, 1, 3, 2, 2}));
  EXPECT_EQ(t.recvs, (std::vector<uint64_t>{1, 3, 1, 3, 2, 2}));
  EXPECT_EQ(t.sendBytes, (std::vector<uint64_t>{600, 1800, 600, 1800, 1200, 1200}));
}

TEST(Traffic, TreesDisseminationBruckLinearDirect) {
  for (uint32_t P : {2u, 5u, 8u, 13u}) {
    uint64_t N = 1000, total = 0, k = log2ceil(P);
    for (K kind : {K::Bcast, K::Reduce})
      for (A a : {A::Binomial, A::Binary, A::Linear}) {
        Traffic t = lowerTraffic(make(kind, a, P, N));
        total = 0;
        for (uint32_t r = 0; r < P; ++r)
          total += t.sendBytes[r];
        EXPECT_EQ(total, (P - 1) * N);   // a spanning tree: P-1 messages of N
      }
    Traffic d = lowerTraffic(make(K::Barrier, A::Dissemination, P, 0));
    Traffic b = lowerTraffic(make(K::Allgather, A::Bruck, P, N));
    Traffic a = lowerTraffic(make(K::Alltoall, A::Bruck, P, N));
    Traffic l = lowerTraffic(make(K::Alltoall, A::Linear, P, N));
    Traffic x = lowerTraffic(make(K::Allreduce, A::Direct, P, N * P));
    uint64_t bruckBlocks = 0;   // blocks moved per round: indices 1..P-1 with bit k set
    for (uint64_t i = 1; i < P; ++i)
      bruckBlocks += std::popcount(i);
    for (uint32_t r = 0; r < P; ++r) {
      EXPECT_EQ(d.sends[r], k);
      EXPECT_EQ(d.sendBytes[r], k);
      EXPECT_EQ(b.sends[r], k);
      EXPECT_EQ(b.sendBytes[r], (P - 1) * N);
      EXPECT_EQ(a.sends[r], k);
      EXPECT_EQ(a.sendBytes[r], bruckBlocks * N);
      EXPECT_EQ(l.sends[r], P - 1);
      EXPECT_EQ(l.sendBytes[r], (P - 1) * N);
      EXPECT_EQ(x.sends[r], 2 * (P - 1));
      EXPECT_EQ(x.sendBytes[r], 2 * (P - 1) * N);
    }
  }
}

TEST(Traffic, ChannelsProtocolsAndReductionCalcs) {
  CollCase c = make(K::Allreduce, A::Ring, 4, 4096);
  c.channels = 2;
  Lowered l = lowerAndCheck(c);
  ASSERT_TRUE(l.check.ok()) << l.checkText();
  Traffic t = traffic(*l.schedule);
  EXPECT_EQ(t.sends[0], 2 * 6u);             // 6 steps per channel
  EXPECT_EQ(t.sendBytes[0], 6u * 1024);      // the same bytes, split
  EXPECT_EQ(l.schedule->maxCpu(), 1u);       // channel 1 on cpu 1

  c.channels = 1;
  c.protocol = CollProtocol::LL;           // 1024-byte blocks: 128 lines of 16 bytes
  t = traffic(*lowerAndCheck(c).schedule);
  EXPECT_EQ(t.sendBytes[0], 6u * 2048);
  c.protocol = CollProtocol::LL128;        // ceil(1024 / 120) = 9 lines of 128 bytes
  t = traffic(*lowerAndCheck(c).schedule);
  EXPECT_EQ(t.sendBytes[0], 6u * 1152);

  c.protocol = CollProtocol::Simple;
  c.bytes = 4000;
  c.reduceNsPerByte = 0.5;                   // 3 reducing recvs of 1000 bytes: 500 ns each
  l = lowerAndCheck(c);
  ASSERT_TRUE(l.check.ok()) << l.checkText();
  const Schedule &s = *l.schedule;
  std::vector<uint64_t> calcs;
  for (uint32_t g = s.rankBegin(0); g < s.rankBegin(0) + s.numOps(0); ++g)
    if (s.kind(g) == OpKind::Calc)
      calcs.push_back(s.size(g));
  EXPECT_EQ(calcs, (std::vector<uint64_t>{500, 500, 500}));

  // Pipelining: 2 loops of 4 blocks for 8000 bytes with 1000-byte chunks.
  c = make(K::Allreduce, A::Ring, 4, 8000);
  c.chunk = 1000;
  t = traffic(*lowerAndCheck(c).schedule);
  EXPECT_EQ(t.sends[0], 2 * 6u);
  EXPECT_EQ(t.sendBytes[0], 6u * 2000);
}

// LogGOPSim's rules (docs/goal-loggopsim notes §3.3) with its defaults L=2500,
// o=1500, g=1000, G=6: a message sent at t arrives at t+o+L and costs the receiver
// o+(s-1)G from then on.
uint64_t simHost(const std::string &stmt, uint32_t P, uint32_t host,
                 const std::vector<std::string> &extra = {}) {
  std::string dir = makeTempDir("coll-sim");
  std::string text = "num_ranks " + std::to_string(P) + "\n";
  for (uint32_t r = 0; r < P; ++r)
    text += "rank " + std::to_string(r) + " {\nl1: " + stmt + "\n}\n";
  writeFile(dir + "/w.goal", text);
  std::vector<std::string> args{dir + "/w.goal", "-passes=lower-collectives", "-emit=sim"};
  args.insert(args.end(), extra.begin(), extra.end());
  RunResult r = runInfracc(args);
  EXPECT_EQ(r.status, 0) << r.err;
  std::string key = "Host " + std::to_string(host) + ": ";
  size_t at = r.out.find(key);
  if (at == std::string::npos)
    return 0;
  return std::stoull(r.out.substr(at + key.size()));
}

TEST(Traffic, SimulatedTimesFollowLogGOPS) {
  const uint64_t L = 2500, o = 1500, G = 6;
  // Dissemination: each of ceil(log2 P) rounds is send (o), flight (L), receive (o).
  for (uint32_t P : {2u, 4u, 5u, 8u, 16u})
    EXPECT_EQ(simHost("barrier algo dissemination", P, P - 1), log2ceil(P) * (2 * o + L)) << P;
  // Binomial bcast to one other rank: o + L + o + (s-1)G at the receiver.
  EXPECT_EQ(simHost("bcast 1024b algo binomial", 2, 1), 2 * o + L + 1023 * G);
  EXPECT_EQ(simHost("bcast 1024b algo binomial", 2, 0), o);
  // Ring allreduce on 2 ranks: two steps of N/2 bytes, the second sent when the first
  // has been received: 2 (2o + L + (N/2 - 1) G).
  EXPECT_EQ(simHost("allreduce 1024b algo ring", 2, 0), 2 * (2 * o + L + 511 * G));
  // The same with reduction calcs of 0.5 ns/byte: 256 ns after the first recv.
  EXPECT_EQ(simHost("allreduce 1024b algo ring", 2, 0, {"-reduce-ns-per-byte=0.5"}),
            2 * (2 * o + L + 511 * G) + 256);
  // LL doubles the wire bytes: 1024 on the wire per step.
  EXPECT_EQ(simHost("allreduce 1024b algo ring", 2, 0, {"-coll-protocol=ll"}),
            2 * (2 * o + L + 1023 * G));
}

} // namespace
