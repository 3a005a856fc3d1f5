// intranode-calc: exact GOAL after the pass, costs from the fabric and the fallbacks,
// MPI-order pairing (where pairing by list position would close a cycle), acyclicity on
// ring and tree collectives with several GPUs per node, statistics, and every error.
#include "support/Units.h"
#include "tests/passes/PassTestUtil.h"

#include <gtest/gtest.h>

#include <functional>

using namespace infracc::test;

namespace {

// pairs4.goal after remap-gpus -gpus-per-node=2 (RemapGpusTest derives that text):
// node 0 holds three local messages: l2 (GPU 0 -> GPU 1, tag 21) matching l5,
// l6 (GPU 1 -> GPU 0, tag 22) matching l4; node 1 one: l4 (GPU 1 -> GPU 0, tag 2)
// matching l2. Without a fabric a transfer costs 0 ns + bytes / 300 GB/s:
// 1000 B -> 3.33 -> 3 ns, 500 B -> 1.67 -> 2 ns; each recv becomes `calc 0` on its own
// stream and requires the send's calc.
const char *Pairs4Local = R"(num_ranks 2

rank 0 {
l1: calc 100
l2: calc 3
l3: send 1000b to 1 tag 20
l4: calc 0
l5: calc 0 cpu 2
l6: calc 3 cpu 2
l7: send 2000b to 1 tag 31 cpu 2 nic 1
l2 requires l1
l3 requires l1
l5 requires l2
l6 requires l5
l4 requires l6
}

rank 1 {
l1: recv 1000b from 0 tag 20
l2: calc 0 cpu 1
l3: recv 2000b from 0 tag 31 cpu 2 nic 1
l4: calc 2 cpu 3
l2 requires l4
}
)";

std::string replace(std::string s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

/// GOAL text for `ranks` ranks whose ops `body(r)` returns.
std::string goal(int ranks, const std::function<std::string(int)> &body) {
  std::string s = "num_ranks " + std::to_string(ranks) + "\n";
  for (int r = 0; r < ranks; ++r)
    s += "\nrank " + std::to_string(r) + " {\n" + body(r) + "}\n";
  return s;
}

/// Ring allreduce over n ranks: 2(n-1) steps of send right / recv left, each step after
/// the previous recv.
std::string ringAllreduce(int n, int bytes) {
  return goal(n, [&](int r) {
    std::string s = "l1: calc 1000\n";
    int label = 1, prevRecv = 1;
    for (int step = 0; step < 2 * (n - 1); ++step) {
      int send = ++label, recv = ++label;
      s += "l" + std::to_string(send) + ": send " + std::to_string(bytes) + "b to " +
           std::to_string((r + 1) % n) + " tag 3\n";
      s += "l" + std::to_string(send) + " requires l" + std::to_string(prevRecv) + "\n";
      s += "l" + std::to_string(recv) + ": recv " + std::to_string(bytes) + "b from " +
           std::to_string((r + n - 1) % n) + " tag 3\n";
      s += "l" + std::to_string(recv) + " requires l" + std::to_string(prevRecv) + "\n";
      prevRecv = recv;
    }
    return s;
  });
}

/// Binomial-tree broadcast from rank 0, then a binomial-tree reduce back to it.
std::string treeBcastReduce(int n, int bytes) {
  return goal(n, [&](int r) {
    std::string s;
    int label = 0, last = 0;
    auto op = [&](const std::string &text) {
      s += "l" + std::to_string(++label) + ": " + text + "\n";
      if (last)
        s += "l" + std::to_string(label) + " requires l" + std::to_string(last) + "\n";
      last = label;
    };
    for (int k = 1; k < n; k <<= 1) {   // bcast: rank r < k sends to r + k
      if (r < k && r + k < n)
        op("send " + std::to_string(bytes) + "b to " + std::to_string(r + k) + " tag 1");
      else if (r >= k && r < 2 * k)
        op("recv " + std::to_string(bytes) + "b from " + std::to_string(r - k) + " tag 1");
    }
    op("calc 500");
    int top = 1;
    while (top < n)
      top <<= 1;
    for (int k = top >> 1; k >= 1; k >>= 1) {   // reduce: the mirror image
      if (r < k && r + k < n)
        op("recv " + std::to_string(bytes) + "b from " + std::to_string(r + k) + " tag 2");
      else if (r >= k && r < 2 * k)
        op("send " + std::to_string(bytes) + "b to " + std::to_string(r - k) + " tag 2");
    }
    return s;
  });
}

} // namespace

TEST(IntranodeCalc, ReplacesMessagesInsideANode) {
  PassDir d({"pairs4.goal"});
  RunResult r = d.run({"pairs4.goal", "-passes=remap-gpus,intranode-calc", "-gpus-per-node=2",
                       "-emit=goal", "-stats"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, Pairs4Local);
  EXPECT_NE(r.err.find("2500 intranode-calc - Bytes moved inside nodes\n"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("   3 intranode-calc - Messages inside a node replaced by calcs\n"),
            std::string::npos)
      << r.err;
}

TEST(IntranodeCalc, CostsComeFromTheHostsInternalPath) {
  // small_cluster.yaml: GPU 0 <-> GPU 1 of a host is xpu - nvsw - xpu: 100 + 50 + 100 =
  // 250 ns at 100 GB/s (100 B/ns): 1000 B -> 250 + 10 = 260 ns, 500 B -> 255 ns.
  PassDir d({"small_cluster.yaml", "pairs4.goal"});
  RunResult r = d.run({"small_cluster.yaml", "pairs4.goal",
                       "-passes=place,remap-gpus,intranode-calc", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  std::string expected = replace(replace(Pairs4Local, "calc 3", "calc 260"), "calc 2 cpu 3",
                                 "calc 255 cpu 3");
  EXPECT_EQ(r.out, expected);
  // -switch-latency does not override the annotation (50 ns on the NVSwitch).
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place,remap-gpus,intranode-calc",
             "-emit=goal", "-switch-latency=1000"});
  EXPECT_EQ(r.out, expected);
}

TEST(IntranodeCalc, FallbackCostsAndRecvCost) {
  PassDir d({"pairs4.goal"});
  // 100 GB/s and 50 ns: 1000 B -> 50 + 10 = 60 ns, 500 B -> 55 ns.
  RunResult r = d.run({"pairs4.goal", "-passes=remap-gpus,intranode-calc", "-gpus-per-node=2",
                       "-emit=goal", "-intranode-bandwidth=100GB/s", "-intranode-latency=50"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, replace(replace(Pairs4Local, "calc 3", "calc 60"), "calc 2 cpu 3",
                           "calc 55 cpu 3"));
  // A bare number is Gb/s: 800 Gb/s is 100 GB/s.
  RunResult same = d.run({"pairs4.goal", "-passes=remap-gpus,intranode-calc", "-gpus-per-node=2",
                          "-emit=goal", "-intranode-bandwidth=800", "-intranode-latency=50"});
  EXPECT_EQ(same.out, r.out);
  // copy: the recv's calc costs the transfer too.
  r = d.run({"pairs4.goal", "-passes=remap-gpus,intranode-calc", "-gpus-per-node=2",
             "-emit=goal", "-intranode-recv-cost=copy"});
  std::string copy = replace(Pairs4Local, "l4: calc 0\n", "l4: calc 3\n");
  copy = replace(copy, "l5: calc 0 cpu 2\n", "l5: calc 3 cpu 2\n");
  copy = replace(copy, "l2: calc 0 cpu 1\n", "l2: calc 2 cpu 1\n");
  EXPECT_EQ(r.out, copy);
}

TEST(IntranodeCalc, PairsInMpiOrderNotByListPosition) {
  // Node of 2 GPUs. GPU 0: send A (tag 1), then recv B (tag 2). GPU 1: recv A, then send
  // B, which needs A. Pairing the i-th local send with the i-th local recv (ATLAHS's
  // list positions) would make recv A wait for send B, which waits for recv A: a cycle.
  // Pairing per (source, destination, tag): A -> recv A, B -> recv B, no cycle.
  PassDir d;
  d.write("ab.goal", "num_ranks 1\n\nrank 0 {\nl1: send 64b to 0 tag 1\nl2: recv 64b from 0 tag "
                     "2\nl2 requires l1\nl3: recv 64b from 0 tag 1 cpu 1\nl4: send 64b to 0 tag 2 "
                     "cpu 1\nl4 requires l3\n}\n");
  RunResult r = d.run({"ab.goal", "-passes=intranode-calc", "-emit=goal", "-verify-each",
                       "-intranode-bandwidth=64GB/s"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "num_ranks 1\n\nrank 0 {\nl1: calc 1\nl2: calc 0\nl3: calc 0 cpu 1\n"
                   "l4: calc 1 cpu 1\nl2 requires l1\nl3 requires l1\nl4 requires l3\n"
                   "l2 requires l4\n}\n");
}

TEST(IntranodeCalc, RingAndTreeCollectivesStayAcyclic) {
  // Ring allreduce on 8 GPUs: 14 steps; the ring edges r -> r+1 inside a node are 6 of
  // 8 with 4 GPUs per node (all but 3 -> 4 and 7 -> 0), 4 of 8 with 2 per node.
  // Binomial bcast + reduce on 8 GPUs: edges 0-1, 0-2, 1-3, 0-4, 1-5, 2-6, 3-7 each
  // way; inside nodes of 4: 0-1, 0-2, 1-3 (3 each way = 6); of 2: 0-1 (2).
  PassDir d;
  d.write("ring.goal", ringAllreduce(8, 65536));
  d.write("tree.goal", treeBcastReduce(8, 4096));
  struct Case {
    const char *file, *gpus, *messages;
  } cases[] = {{"ring.goal", "4", "84"}, {"ring.goal", "2", "56"}, {"ring.goal", "8", "112"},
               {"tree.goal", "4", "6"},  {"tree.goal", "2", "2"},  {"tree.goal", "8", "14"}};
  for (const Case &c : cases) {
    RunResult r = d.run({c.file, "-passes=remap-gpus,intranode-calc,verify", "-verify-each",
                         std::string("-gpus-per-node=") + c.gpus, "-emit=goal", "-stats",
                         "-o", "out.goal"});
    EXPECT_EQ(r.status, 0) << c.file << c.gpus << r.err;
    EXPECT_NE(r.err.find(std::string(" ") + c.messages +
                         " intranode-calc - Messages inside a node replaced by calcs\n"),
              std::string::npos)
        << c.file << c.gpus << r.err;
    // No message to the own rank is left, and the result simulates to the end.
    std::string out = d.read("out.goal");
    EXPECT_EQ(out.find("is a message to its own rank"), std::string::npos);
    RunResult sim = d.run({"out.goal", "-sim-batch"});
    EXPECT_EQ(sim.status, 0) << c.file << c.gpus << sim.err;
    EXPECT_EQ(sim.err, "") << c.file << c.gpus;
  }
}

TEST(IntranodeCalcErrors, RanksSharingAHostNeedRemapFirst) {
  PassDir d({"small_cluster.yaml", "pairs4.goal"});
  RunResult r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place,intranode-calc",
                       "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "pairs4.goal: error: intranode-calc: ranks 0 and 1 are both on host 'host.0' "
                   "and exchange messages (rank 0 operation 'l2'); turning them into local "
                   "dependencies needs both in one rank: run remap-gpus first (e.g. "
                   "-passes=place,remap-gpus,intranode-calc)\n"
                   "pairs4.goal: error: intranode-calc: ranks 2 and 3 are both on host 'host.1' "
                   "and exchange messages (rank 3 operation 'l2'); turning them into local "
                   "dependencies needs both in one rank: run remap-gpus first (e.g. "
                   "-passes=place,remap-gpus,intranode-calc)\n");
}

TEST(IntranodeCalcErrors, WildcardsUnmatchedAndDeadlocks) {
  PassDir d;
  d.write("wild.goal", "num_ranks 2\n\nrank 0 {\nl1: send 8b to 0 tag 1\nl2: recv 8b from 0 tag "
                       "1\nl3: recv 8b from -1 tag 4\nl4: recv 8b from 0 tag -1\n}\n\nrank 1 {\n"
                       "l1: send 8b to 0 tag 4\nl2: send 8b to 0 tag 4\n}\n");
  RunResult r = d.run({"wild.goal", "-passes=intranode-calc", "-emit=goal", "-disable-verify"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "wild.goal: error: intranode-calc: rank 0 operation 'l3' is a recv from any "
                   "source with tag 4; it could take a message from inside the node or from "
                   "outside, so it cannot be paired with a send statically\n"
                   "wild.goal: error: intranode-calc: rank 0 operation 'l4' is a recv from rank 0 "
                   "with any tag; it could take a message from inside the node or from outside, "
                   "so it cannot be paired with a send statically\n");

  d.write("lonely.goal", "num_ranks 1\n\nrank 0 {\nl1: send 8b to 0 tag 1\nl2: recv 16b from 0 "
                         "tag 2\nl3: send 8b to 0 tag -1\n}\n");
  r = d.run({"lonely.goal", "-passes=intranode-calc", "-emit=goal", "-disable-verify"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "lonely.goal: error: intranode-calc: rank 0 operation 'l3' is a send to its "
                   "own rank with any tag (-1), which cannot be paired with a recv statically\n");
  d.write("lonely.goal", "num_ranks 1\n\nrank 0 {\nl1: send 8b to 0 tag 1\nl2: recv 16b from 0 "
                         "tag 2\n}\n");
  r = d.run({"lonely.goal", "-passes=intranode-calc", "-emit=goal", "-disable-verify"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "lonely.goal: error: intranode-calc: rank 0 operation 'l1' (send of 8 bytes "
                   "to its own rank, tag 1) has no matching recv\n"
                   "lonely.goal: error: intranode-calc: rank 0 operation 'l2' (recv of 16 bytes "
                   "from its own rank, tag 2) has no matching send\n");

  // GPU 0 waits for GPU 1's message before sending its own; GPU 1 the same: deadlock.
  d.write("dead.goal", "num_ranks 1\n\nrank 0 {\nl1: recv 8b from 0 tag 1\nl2: send 8b to 0 tag "
                       "2\nl2 requires l1\nl3: recv 8b from 0 tag 2 cpu 1\nl4: send 8b to 0 tag 1 "
                       "cpu 1\nl4 requires l3\n}\n");
  r = d.run({"dead.goal", "-passes=intranode-calc", "-emit=goal", "-disable-verify"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "dead.goal: error: intranode-calc: rank 0: making each local recv wait for "
                   "its send closes a dependency cycle ('l1' -> 'l2' -> 'l3' -> 'l4' -> 'l1'); "
                   "the schedule deadlocks there (a recv waits for a send that waits for it)\n");

  r = d.run({"dead.goal", "-passes=intranode-calc", "-emit=goal", "-intranode-bandwidth=fast"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.substr(r.err.rfind("infracc: error")),
            std::string("infracc: error: -intranode-bandwidth=fast: not a bandwidth above 0; ") +
                infracc::BandwidthSpellings + "\n");
  r = d.run({"dead.goal", "-passes=intranode-calc", "-emit=goal", "-intranode-latency=-5"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.substr(r.err.rfind("infracc: error")),
            std::string("infracc: error: -intranode-latency=-5: not a latency of 0 or more; ") +
                infracc::DurationSpellings + "\n");
}

// GPU 0 to GPU 1 of one DGX H100, 60001 bytes: over an NVSwitch edge of 4.5 NVLink 4
// links (900 Gb/s) the calc costs 60001 * 8 / 900 = 533.3 ns; without the figures the
// fallback 300 GB/s gives 200 ns, and the pass says which link had no bandwidth.
TEST(IntranodeCalc, BlueprintHostsAndLinksWithoutBandwidth) {
  PassDir d;
  d.write("p.goal", "num_ranks 2\nrank 0 {\nl1: send 60001b to 1 tag 0\n}\n"
                    "rank 1 {\nl1: recv 60001b from 0 tag 0\n}\n");
  RunResult r = d.run({"-fabric=single_tier:hosts=1,host=dgx_h100", "p.goal",
                       "-passes=place,remap-gpus,intranode-calc", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("l1: calc 533\n"), std::string::npos) << r.out;
  r = d.run({"-fabric=single_tier:hosts=1,host=dgx_h100(specs=none)", "p.goal",
             "-passes=place,remap-gpus,intranode-calc", "-emit=goal"});
  EXPECT_NE(r.out.find("l1: calc 200\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "-fabric=single_tier:hosts=1,host=dgx_h100(specs=none): warning: link "
                   "'xpu_fabric' of device 'dgx_h100' has no bandwidth, nor has any other link "
                   "on the path from 'dgx_h100.0.xpu.0' to 'dgx_h100.0.xpu.1': intranode-calc "
                   "used -intranode-bandwidth=300GB/s (the default) there\n");
}
