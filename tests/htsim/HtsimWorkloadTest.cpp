// From a workload to flows and triggers: the expected connection matrices are derived by
// hand from the rules in backends/htsim/ConnectionMatrix.h (flows in the order of their
// sends, rank by rank; trigger ids in the order flows first name them).
#include "tests/htsim/HtsimTestUtil.h"

#include <filesystem>

using namespace infracc::test;

namespace {

// 8 hosts, 2 per ToR (nodes 0-1 on ToR 0, 2-3 on ToR 1, ...), 2 spines.
const std::string Fabric8 = "-fabric=leaf_spine:leaves=4,spines=2,hosts_per_leaf=2,"
                            "host=simple_host,bw1=100G,lat0=1us,lat1=1us";
// The same with 2 xpus per host: ranks 2h and 2h+1 share host h.
const std::string Fabric8x2 = "-fabric=leaf_spine:leaves=4,spines=2,hosts_per_leaf=2,"
                              "host=simple_host(xpus=2),bw1=100G,lat0=1us,lat1=1us";

std::string goal(const std::vector<std::string> &ranks) {
  std::string s = "num_ranks " + std::to_string(ranks.size()) + "\n";
  for (size_t r = 0; r < ranks.size(); ++r)
    s += "rank " + std::to_string(r) + " {\n" + ranks[r] + "}\n";
  return s;
}

Emitted emitFor(const std::string &fabric, const std::string &workload,
                std::vector<std::string> extra = {}, bool allowRecvDone = false) {
  std::vector<std::string> args = {fabric, tempFile("w.goal", workload)};
  args.insert(args.end(), extra.begin(), extra.end());
  Emitted e = emitHtsim(args, allowRecvDone);
  EXPECT_EQ(e.run.status, 0) << e.run.err;
  return e;
}

std::string body(const std::string &fabric, const std::string &workload,
                 std::vector<std::string> extra = {}, bool allowRecvDone = false) {
  return cmBody(emitFor(fabric, workload, std::move(extra), allowRecvDone).cm);
}

// stderr without the temporary file names in front of "warning:" / "error:".
std::string messages(const std::string &err) {
  std::string out;
  size_t start = 0;
  while (start < err.size()) {
    size_t end = err.find('\n', start);
    std::string line = err.substr(start, end - start);
    size_t at = line.find(": warning: ");
    if (at == std::string::npos)
      at = line.find(": error: ");
    if (at != std::string::npos)
      out += line.substr(at + 2) + "\n";
    start = end == std::string::npos ? err.size() : end + 1;
  }
  return out;
}

} // namespace

TEST(HtsimWorkload, FanInIsABarrier) {
  EXPECT_EQ(body(Fabric8, goal({"l1: send 1000b to 2 tag 0\n", "l1: send 2000b to 2 tag 0\n",
                                "l1: recv 1000b from 0 tag 0\nl2: recv 2000b from 1 tag 0\n"
                                "l3: send 3000b to 3 tag 0\nl3 requires l1\nl3 requires l2\n",
                                "l1: recv 3000b from 2 tag 0\n"})),
            "Nodes 8\nConnections 3\nTriggers 1\n"
            "0->2 id 1 start 0 size 1000 send_done_trigger 1\n"
            "1->2 id 2 start 0 size 2000 send_done_trigger 1\n"
            "2->3 id 3 trigger 1 size 3000\n"
            "trigger id 1 barrier count 2\n");
}

TEST(HtsimWorkload, FanOutSharesAOneshot) {
  EXPECT_EQ(body(Fabric8, goal({"l1: send 1000b to 1 tag 0\n",
                                "l1: recv 1000b from 0 tag 0\nl2: send 500b to 2 tag 0\n"
                                "l3: send 600b to 3 tag 0\nl2 requires l1\nl3 requires l1\n",
                                "l1: recv 500b from 1 tag 0\n", "l1: recv 600b from 1 tag 0\n"})),
            "Nodes 8\nConnections 3\nTriggers 1\n"
            "0->1 id 1 start 0 size 1000 send_done_trigger 1\n"
            "1->2 id 2 trigger 1 size 500\n"
            "1->3 id 3 trigger 1 size 600\n"
            "trigger id 1 oneshot\n");
}

// l3 requires l1 and l2, but l2's flow only starts after l1's is done: one oneshot each.
TEST(HtsimWorkload, ImpliedDependenciesAreDropped) {
  EXPECT_EQ(body(Fabric8, goal({"l1: send 100b to 1 tag 0\nl2: send 200b to 2 tag 0\n"
                                "l2 requires l1\nl3: send 300b to 3 tag 0\nl3 requires l1\n"
                                "l3 requires l2\n",
                                "l1: recv 100b from 0 tag 0\n", "l1: recv 200b from 0 tag 0\n",
                                "l1: recv 300b from 0 tag 0\n"})),
            "Nodes 8\nConnections 3\nTriggers 2\n"
            "0->1 id 1 start 0 size 100 send_done_trigger 1\n"
            "0->2 id 2 trigger 1 size 200 send_done_trigger 2\n"
            "0->3 id 3 trigger 2 size 300\n"
            "trigger id 1 oneshot\n"
            "trigger id 2 oneshot\n");
}

// Rank 2's l3 needs message 0, its l4 messages 0 and 1: message 0's flow can activate
// one trigger only, so both wait for the barrier over 0 and 1.
TEST(HtsimWorkload, SharedCompletionMergesTriggers) {
  Emitted e = emitFor(Fabric8, goal({"l1: send 100b to 2 tag 0\n", "l1: send 100b to 2 tag 0\n",
                                     "l1: recv 100b from 0 tag 0\nl2: recv 100b from 1 tag 0\n"
                                     "l3: send 100b to 3 tag 0\nl3 requires l1\n"
                                     "l4: send 100b to 4 tag 0\nl4 requires l1\nl4 requires l2\n",
                                     "l1: recv 100b from 2 tag 0\n",
                                     "l1: recv 100b from 2 tag 0\n"}));
  EXPECT_EQ(cmBody(e.cm), "Nodes 8\nConnections 4\nTriggers 1\n"
                          "0->2 id 1 start 0 size 100 send_done_trigger 1\n"
                          "1->2 id 2 start 0 size 100 send_done_trigger 1\n"
                          "2->3 id 3 trigger 1 size 100\n"
                          "2->4 id 4 trigger 1 size 100\n"
                          "trigger id 1 barrier count 2\n");
  EXPECT_EQ(messages(e.run.err),
            "warning: 2 flows wait for more than their sends depend on: an htsim flow can "
            "activate only one trigger, so triggers that wait for the same flow were merged (1 "
            "trigger merged into others)\n");
}

// Merging {0,1}, {0,2} and {2, rank 3's first send}: the merged trigger would wait for a
// flow it starts.
TEST(HtsimWorkload, MergeThatWouldDeadlockIsAnError) {
  std::string dir = makeTempDir("dead") + "/out";
  RunResult r = runInfracc(
      {Fabric8,
       tempFile("w.goal", goal({"l1: send 100b to 3 tag 0\n", "l1: send 100b to 3 tag 0\n",
                                "l1: send 100b to 3 tag 0\n",
                                "l1: recv 100b from 0 tag 0\nl2: recv 100b from 1 tag 0\n"
                                "l3: recv 100b from 2 tag 0\n"
                                "l4: send 100b to 4 tag 0\nl4 requires l1\nl4 requires l2\n"
                                "l5: send 100b to 5 tag 0\nl5 requires l1\nl5 requires l3\n"
                                "l6: send 100b to 6 tag 0\nl6 requires l4\nl6 requires l3\n",
                                "l1: recv 100b from 3 tag 0\n", "l1: recv 100b from 3 tag 0\n",
                                "l1: recv 100b from 3 tag 0\n"})),
       "-emit=htsim", "-o", dir});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(messages(r.err),
            "error: htsim cannot express these dependencies: a flow can activate only one "
            "trigger, so triggers that wait for the same message had to be merged, and 3 flows "
            "would then wait for flows that wait for them, e.g. the flow of rank 3: send 'l4' "
            "(100 bytes to rank 4)\n");
}

// Compute ahead of the first message becomes a start time (1500 ns = 1500000 ps); an
// irequires waits for the calc's start only; compute after a message is dropped.
TEST(HtsimWorkload, ComputeBeforeTheFirstMessageIsAStartTime) {
  Emitted e = emitFor(Fabric8, goal({"l1: calc 1500\nl2: send 100b to 1 tag 0\nl2 requires l1\n"
                                     "l3: send 100b to 2 tag 0\nl3 irequires l1\n"
                                     "l4: recv 100b from 1 tag 0\nl5: calc 700\nl5 requires l4\n",
                                     "l1: recv 100b from 0 tag 0\nl2: calc 250\nl2 requires l1\n"
                                     "l3: send 100b to 0 tag 0\nl3 requires l2\n",
                                     "l1: recv 100b from 0 tag 0\n"}));
  EXPECT_EQ(cmBody(e.cm), "Nodes 8\nConnections 3\nTriggers 1\n"
                          "0->1 id 1 start 1500000 size 100 send_done_trigger 1\n"
                          "0->2 id 2 start 0 size 100\n"
                          "1->0 id 3 trigger 1 size 100\n"
                          "trigger id 1 oneshot\n");
  EXPECT_EQ(messages(e.run.err),
            "warning: a connection matrix cannot express compute time: 3 calcs (2450 ns in all) "
            "are left out of workload.cm, except that compute ahead of a rank's first message "
            "delays the start of 1 flow (workload.bin keeps all of it)\n");
  EXPECT_NE(e.cm.find("# compute time cannot be expressed here: 3 calcs (2450 ns) left out, "
                      "except as start times of 1 flow\n"),
            std::string::npos);
}

// Ranks 0 and 1 share host 0: their message needs no flow, and rank 1's send waits for
// what rank 0's send waited for (rank 2's message). By default intranode-calc makes it
// compute (two calcs, left out of workload.cm); with -passes=place it stays a message
// between two ranks of one host and the matrix passes the dependency on by itself.
TEST(HtsimWorkload, MessagesInsideAHostPassDependenciesOn) {
  std::string w = goal({"l1: recv 100b from 2 tag 0\nl2: send 50b to 1 tag 0\n"
                        "l2 requires l1\n",
                        "l1: recv 50b from 0 tag 0\nl2: send 70b to 3 tag 0\n"
                        "l2 requires l1\n",
                        "l1: send 100b to 0 tag 0\n", "l1: recv 70b from 1 tag 0\n"});
  const std::string matrix = "Nodes 8\nConnections 2\nTriggers 1\n"
                             "0->1 id 1 trigger 1 size 70\n"
                             "1->0 id 2 start 0 size 100 send_done_trigger 1\n"
                             "trigger id 1 oneshot\n";
  Emitted e = emitFor(Fabric8x2, w);
  EXPECT_EQ(cmBody(e.cm), matrix);
  EXPECT_NE(e.cm.find("# 2 flows for 2 messages between hosts, 1 trigger\n"), std::string::npos)
      << e.cm;
  EXPECT_NE(e.cm.find("# compute time cannot be expressed here: 2 calcs (2 ns) left out\n"),
            std::string::npos)
      << e.cm;
  EXPECT_NE(e.mapping.find("# rank endpoint nic node\n"
                           "0 simple_host.0.xpu.0 simple_host.0.nic.0 0\n"
                           "1 simple_host.0.xpu.1 simple_host.0.nic.0 0\n"
                           "2 simple_host.1.xpu.0 simple_host.1.nic.0 1\n"
                           "3 simple_host.1.xpu.1 simple_host.1.nic.0 1\n"
                           "# node nic host tor ranks\n"
                           "0 simple_host.0.nic.0 simple_host.0 leaf.0 0-1\n"
                           "1 simple_host.1.nic.0 simple_host.1 leaf.0 2-3\n"),
            std::string::npos)
      << e.mapping;

  Emitted p = emitFor(Fabric8x2, w, {"-passes=place"});
  EXPECT_EQ(cmBody(p.cm), matrix);
  EXPECT_NE(p.cm.find("# 2 flows for 2 messages between hosts (1 message between ranks of one "
                      "host need none), 1 trigger\n"),
            std::string::npos)
      << p.cm;
  EXPECT_NE(p.mapping.find("# 1 message between ranks of one host is left as it was: no flow, "
                           "no cost.\n"),
            std::string::npos)
      << p.mapping;
}

// 3 * 2^30 + 5 bytes: four flows, each started by the previous one's completion; the
// next message waits for the last.
TEST(HtsimWorkload, LargeMessagesBecomeChainsOfFlows) {
  Emitted e = emitFor(Fabric8, goal({"l1: send 3221225477b to 1 tag 0\n",
                                     "l1: recv 3221225477b from 0 tag 0\n"
                                     "l2: send 10b to 2 tag 0\nl2 requires l1\n",
                                     "l1: recv 10b from 1 tag 0\n"}));
  EXPECT_EQ(cmBody(e.cm), "Nodes 8\nConnections 5\nTriggers 4\n"
                          "0->1 id 1 start 0 size 1073741824 send_done_trigger 1\n"
                          "0->1 id 2 trigger 1 size 1073741824 send_done_trigger 2\n"
                          "0->1 id 3 trigger 2 size 1073741824 send_done_trigger 3\n"
                          "0->1 id 4 trigger 3 size 5 send_done_trigger 4\n"
                          "1->2 id 5 trigger 4 size 10\n"
                          "trigger id 1 oneshot\ntrigger id 2 oneshot\ntrigger id 3 oneshot\n"
                          "trigger id 4 oneshot\n");
  EXPECT_EQ(messages(e.run.err),
            "warning: 1 message larger than 1073741824 bytes is sent as chains of flows of at "
            "most that size (htsim reads flow sizes as 32-bit integers)\n");
}

TEST(HtsimWorkload, ZeroByteMessagesAreOneByteFlows) {
  Emitted e = emitFor(Fabric8, goal({"l1: send 0b to 1 tag 0\n", "l1: recv 0b from 0 tag 0\n"}));
  EXPECT_EQ(cmBody(e.cm), "Nodes 8\nConnections 1\nTriggers 0\n0->1 id 1 start 0 size 1\n");
  EXPECT_NE(messages(e.run.err).find("warning: 1 zero-byte message is sent as 1-byte flows (an "
                                     "htsim flow needs a size)\n"),
            std::string::npos)
      << e.run.err;
}

TEST(HtsimWorkload, RecvDoneTriggersOnRequest) {
  std::string w = goal({"l1: send 1000b to 1 tag 0\nl2: send 10b to 2 tag 0\nl2 requires l1\n",
                        "l1: recv 1000b from 0 tag 0\nl2: send 500b to 3 tag 0\nl2 requires l1\n",
                        "l1: recv 10b from 0 tag 0\n", "l1: recv 500b from 1 tag 0\n"});
  EXPECT_EQ(body(Fabric8, w, {"-htsim-recv-trigger=recv-done"}, true),
            "Nodes 8\nConnections 3\nTriggers 2\n"
            "0->1 id 1 start 0 size 1000 send_done_trigger 1 recv_done_trigger 2\n"
            "0->2 id 2 trigger 1 size 10\n"
            "1->3 id 3 trigger 2 size 500\n"
            "trigger id 1 oneshot\ntrigger id 2 oneshot\n");
  // By default both wait for the sender's completion: one trigger.
  EXPECT_EQ(body(Fabric8, w),
            "Nodes 8\nConnections 3\nTriggers 1\n"
            "0->1 id 1 start 0 size 1000 send_done_trigger 1\n"
            "0->2 id 2 trigger 1 size 10\n"
            "1->3 id 3 trigger 1 size 500\n"
            "trigger id 1 oneshot\n");
}

TEST(HtsimWorkload, UnmatchedAndWildcardMessagesAreErrors) {
  std::string dir = makeTempDir("unmatched") + "/out";
  RunResult r = runInfracc({Fabric8,
                            tempFile("w.goal", goal({"l1: send 100b to 1 tag 0\n"
                                                     "l2: send 100b to 1 tag 7\n",
                                                     "l1: recv 100b from -1 tag 0\n"})),
                            "-allow-unmatched", "-emit=htsim", "-o", dir});
  EXPECT_EQ(r.status, 1);
  std::string m = messages(r.err);
  EXPECT_NE(m.find("error: rank 0: send 'l1' (100 bytes to rank 1, tag 0) has no matching recv; "
                   "only matched messages become htsim flows\n"
                   "error: rank 0: send 'l2' (100 bytes to rank 1, tag 7) has no matching recv; "
                   "only matched messages become htsim flows\n"
                   "error: rank 1: recv 'l1' has any source (-1); htsim flows need every "
                   "message's source, destination and tag, matched before the run\n"),
            std::string::npos)
      << r.err;
}

TEST(HtsimWorkload, MessagesWaitingForEachOtherAreAnError) {
  std::string dir = makeTempDir("cycle") + "/out";
  RunResult r = runInfracc({Fabric8,
                            tempFile("w.goal", goal({"l1: recv 100b from 1 tag 0\n"
                                                     "l2: send 100b to 1 tag 0\nl2 requires l1\n",
                                                     "l1: recv 100b from 0 tag 0\n"
                                                     "l2: send 100b to 0 tag 0\nl2 requires l1\n"})),
                            "-emit=htsim", "-o", dir});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(messages(r.err), "error: 2 messages could never be sent: their sends wait, directly "
                             "or not, for messages that wait for them, e.g. rank 0: send 'l2' "
                             "(100 bytes to rank 1)\n");
}

TEST(HtsimWorkload, MoreRanksThanEndpoints) {
  std::vector<std::string> ranks(9, "l1: calc 1\n");
  std::string dir = makeTempDir("many") + "/out";
  RunResult r = runInfracc({Fabric8, tempFile("w.goal", goal(ranks)), "-passes=verify",
                            "-emit=htsim", "-o", dir});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(messages(r.err),
            "error: the workload has 9 ranks but '-fabric=leaf_spine:leaves=4,spines=2,"
            "hosts_per_leaf=2,host=simple_host,bw1=100G,lat0=1us,lat1=1us' has 8 endpoints; "
            "place several ranks per endpoint with -passes=place -oversubscribe\n");
}

// workload.bin is the workload as binary GOAL with rank n on htsim node n: with one rank
// per host in host order, exactly what -emit=goal-bin writes for the workload padded
// with empty ranks up to the number of hosts.
TEST(HtsimWorkload, BinaryGoalIsOneRankPerNode) {
  std::string w = goal({"l1: send 100b to 1 tag 3\nl2: calc 40\nl2 requires l1\n",
                        "l1: recv 100b from 0 tag 3\n"});
  Emitted e = emitFor(Fabric8, w);
  std::vector<std::string> padded = {"l1: send 100b to 1 tag 3\nl2: calc 40\nl2 requires l1\n",
                                     "l1: recv 100b from 0 tag 3\n"};
  padded.resize(8, "");
  RunResult bin = runInfracc({tempFile("p.goal", goal(padded)), "-emit=goal-bin"});
  ASSERT_EQ(bin.status, 0) << bin.err;
  EXPECT_EQ(e.bin, bin.out);
}

// Several ranks per host: the GOAL ranks of a host are grouped as remap-gpus groups
// GPUs into nodes (cpu streams per member, tags kept apart), with one NIC.
TEST(HtsimWorkload, BinaryGoalGroupsRanksOfAHost) {
  std::string w = goal({"l1: send 100b to 2 tag 0\nl2: send 10b to 1 tag 0\n",
                        "l1: recv 10b from 0 tag 0\nl2: calc 5 cpu 1\n",
                        "l1: recv 100b from 0 tag 0\n", "l1: calc 9\n"});
  Emitted e = emitFor(Fabric8x2, w);
  // The default pipeline: rank 0's 10 bytes to rank 1 (same host) become calcs.
  RunResult ref = runInfracc({Fabric8x2, tempFile("w.goal", w),
                              "-passes=place,remap-gpus,intranode-calc", "-emit=goal"});
  ASSERT_EQ(ref.status, 0) << ref.err;
  // remap-gpus makes 2 nodes; workload.bin has one rank per htsim node (8).
  std::string padded = ref.out.substr(ref.out.find('\n') + 1);
  for (int r = 2; r < 8; ++r)
    padded += "rank " + std::to_string(r) + " {\n}\n";
  RunResult bin = runInfracc({tempFile("p.goal", "num_ranks 8\n" + padded), "-emit=goal-bin"});
  ASSERT_EQ(bin.status, 0) << bin.err;
  EXPECT_EQ(e.bin, bin.out);
}

// Grouping two ranks whose ops use cpu stream 200 needs streams up to 401, beyond binary
// GOAL's 8 bits: everything but workload.bin is written.
TEST(HtsimWorkload, BinaryGoalBeyondItsLimitsIsSkipped) {
  std::string dir = makeTempDir("skip") + "/out";
  RunResult r = runInfracc({Fabric8x2,
                            tempFile("w.goal", goal({"l1: send 100b to 2 tag 0 cpu 200\n",
                                                     "l1: calc 5 cpu 200\n",
                                                     "l1: recv 100b from 0 tag 0\n"})),
                            "-emit=htsim", "-o", dir});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(messages(r.err),
            "warning: remap-gpus uses cpu streams up to 401; binary GOAL and LogGOPSim's txt2bin "
            "keep only 8 bits (0-255) of a cpu index\n"
            "warning: workload.bin is not written: grouping the ranks of a host uses cpu streams "
            "up to 401; binary GOAL holds 0-255\n"
            "warning: a connection matrix cannot express compute time: 1 calc (5 ns in all) is "
            "left out of workload.cm\n");
  EXPECT_TRUE(std::filesystem::exists(dir + "/workload.cm"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/workload.bin"));
}

namespace {

// -nic on hosts with two NICs (the server blueprint: xpu i next to nic i). Host 0's ranks
// are placed crosswise (rank 0 on xpu.1): affinity follows the xpu, round-robin the rank
// order on the host, a map file what it says.
const std::string FabricServers = "-fabric=leaf_spine:leaves=2,spines=2,hosts_per_leaf=2,"
                                  "host=server,bw1=200G,lat0=1us,lat1=1us";
const std::string Crosswise = "0 server.0.xpu.1\n1 server.0.xpu.0\n2 server.1.xpu.0\n"
                              "3 server.1.xpu.1\n";
const std::string Pairs4 = goal({"l1: send 100b to 2 tag 0\n", "l1: send 100b to 3 tag 0\n",
                                 "l1: recv 100b from 0 tag 0\n", "l1: recv 100b from 1 tag 0\n"});

std::string rankRows(const std::string &mapping) {
  size_t a = mapping.find("# rank endpoint nic node\n"), b = mapping.find("# node nic host");
  return a == std::string::npos || b == std::string::npos ? mapping : mapping.substr(a, b - a);
}

} // namespace

TEST(HtsimNic, PoliciesOnTwoNicHosts) {
  std::string place = "-place-map=" + tempFile("place.txt", Crosswise);
  Emitted aff = emitFor(FabricServers, Pairs4, {place});
  EXPECT_EQ(rankRows(aff.mapping), "# rank endpoint nic node\n"
                                   "0 server.0.xpu.1 server.0.nic.1 1\n"
                                   "1 server.0.xpu.0 server.0.nic.0 0\n"
                                   "2 server.1.xpu.0 server.1.nic.0 2\n"
                                   "3 server.1.xpu.1 server.1.nic.1 3\n");
  // workload.bin delivers to the receiver's NIC of the sender's index: 1 -> 2 is not.
  EXPECT_EQ(messages(aff.run.err),
            "warning: workload.bin is not written: ATLAHS's htsim_uec delivers a message to the "
            "receiver's NIC of the sender's index, but rank 0 sends from 'server.0.nic.1' to "
            "'server.1.nic.0' of rank 2\n");
  EXPECT_EQ(cmBody(aff.cm), "Nodes 8\nConnections 2\nTriggers 0\n"
                            "1->2 id 1 start 0 size 100\n0->3 id 2 start 0 size 100\n");

  Emitted rr = emitFor(FabricServers, Pairs4, {place, "-htsim-nic=round-robin"});
  EXPECT_EQ(rankRows(rr.mapping), "# rank endpoint nic node\n"
                                  "0 server.0.xpu.1 server.0.nic.0 0\n"
                                  "1 server.0.xpu.0 server.0.nic.1 1\n"
                                  "2 server.1.xpu.0 server.1.nic.0 2\n"
                                  "3 server.1.xpu.1 server.1.nic.1 3\n");
  EXPECT_NE(rr.mapping.find("-nic=round-robin gives it"), std::string::npos) << rr.mapping;
  EXPECT_EQ(messages(rr.run.err), "");
  EXPECT_EQ(cmBody(rr.cm), "Nodes 8\nConnections 2\nTriggers 0\n"
                           "0->2 id 1 start 0 size 100\n1->3 id 2 start 0 size 100\n");

  std::string map = tempFile("nics.txt", "# rank nic\n0 server.0.nic.0\n1 server.0.nic.0\n"
                                         "2 server.1.nic.1\n3 server.1.nic.1\n");
  Emitted m = emitFor(FabricServers, Pairs4, {"-nic=map:" + map});
  EXPECT_EQ(rankRows(m.mapping), "# rank endpoint nic node\n"
                                 "0 server.0.xpu.0 server.0.nic.0 0\n"
                                 "1 server.0.xpu.1 server.0.nic.0 0\n"
                                 "2 server.1.xpu.0 server.1.nic.1 3\n"
                                 "3 server.1.xpu.1 server.1.nic.1 3\n");
  EXPECT_EQ(cmBody(m.cm), "Nodes 8\nConnections 2\nTriggers 0\n"
                          "0->3 id 1 start 0 size 100\n0->3 id 2 start 0 size 100\n");
}

TEST(HtsimNic, BadRequestsAreErrors) {
  std::string dir = makeTempDir("nic") + "/out";
  std::string w = tempFile("w.goal", Pairs4);
  RunResult r = runInfracc({FabricServers, w, "-nic=nearest", "-emit=htsim", "-o", dir});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -nic=nearest: valid values are affinity, round-robin and "
                   "map:FILE (a file of 'rank nic-name' lines)\n");
  // Another host's NIC, then a map that leaves ranks out.
  std::string other = tempFile("other.txt", "0 server.1.nic.0\n1 server.0.nic.1\n"
                                            "2 server.1.nic.0\n3 server.1.nic.1\n");
  r = runInfracc({FabricServers, w, "-nic=map:" + other, "-emit=htsim", "-o", dir});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("other.txt:1:3: error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rank 0 runs on 'server.0.xpu.0', so its NIC is one of its host's"),
            std::string::npos)
      << r.err;
  std::string some = tempFile("some.txt", "0 server.0.nic.0\n");
  r = runInfracc({FabricServers, w, "-nic=map:" + some, "-emit=htsim", "-o", dir});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(messages(r.err), "error: the NIC map gives no NIC for ranks 1-3 (the workload has 4 "
                             "ranks); every rank needs a line 'rank nic-name'\n");
  EXPECT_FALSE(std::filesystem::exists(dir));
}
