// remap-gpus and split-nodes: exact GOAL after the pass (derived by hand from the rules
// in passes/RankGrouping.h), NICs from the fabric, the what-if regrouping, the
// makespan check with the simulator, and every error.
#include "tests/passes/PassTestUtil.h"

#include <gtest/gtest.h>

using namespace infracc::test;

namespace {

// pairs4.goal as 2 nodes x 2 GPUs. g = 2 GPUs per node, C = 2 cpu streams per GPU
// (ranks use cpu 0 and 1), N = 1 nic per GPU. GPU k gets cpus 2k, 2k+1 and nic k;
// tag' = (tag*2 + s)*2 + d. Rank 0 (node 0, GPU 0): to rank 1 (node 0 GPU 1) tag 5 ->
// (10+0)*2+1 = 21; to rank 2 (node 1 GPU 0) -> 20; from rank 1 -> (10+1)*2+0 = 22.
// Rank 1 (node 0 GPU 1): from rank 0 -> 21, to rank 0 -> 22, to rank 3 (node 1 GPU 1)
// tag 7 -> (14+1)*2+1 = 31. Rank 2: from rank 0 -> 20, from rank 3 tag 0 -> (0+1)*2+0
// = 2. Rank 3: from rank 1 -> 31, to rank 2 -> 2.
const char *Pairs4Remapped = R"(num_ranks 2

rank 0 {
l1: calc 100
l2: send 1000b to 0 tag 21
l3: send 1000b to 1 tag 20
l4: recv 1000b from 0 tag 22
l5: recv 1000b from 0 tag 21 cpu 2 nic 1
l6: send 1000b to 0 tag 22 cpu 2 nic 1
l7: send 2000b to 1 tag 31 cpu 2 nic 1
l2 requires l1
l3 requires l1
l6 requires l5
}

rank 1 {
l1: recv 1000b from 0 tag 20
l2: recv 500b from 1 tag 2 cpu 1
l3: recv 2000b from 0 tag 31 cpu 2 nic 1
l4: send 500b to 1 tag 2 cpu 3 nic 1
}
)";

// pairs4.goal as the GOAL writer prints it (what split-nodes must give back).
const char *Pairs4 = R"(num_ranks 4

rank 0 {
l1: calc 100
l2: send 1000b to 1 tag 5
l3: send 1000b to 2 tag 5
l4: recv 1000b from 1 tag 5
l2 requires l1
l3 requires l1
}

rank 1 {
l1: recv 1000b from 0 tag 5
l2: send 1000b to 0 tag 5
l3: send 2000b to 3 tag 7
l2 requires l1
}

rank 2 {
l1: recv 1000b from 0 tag 5
l2: recv 500b from 3 tag 0 cpu 1
}

rank 3 {
l1: recv 2000b from 1 tag 7
l2: send 500b to 2 tag 0 cpu 1
}
)";

} // namespace

TEST(RemapGpus, GroupsByGpusPerNode) {
  PassDir d({"pairs4.goal"});
  RunResult r = d.run({"pairs4.goal", "-passes=remap-gpus", "-gpus-per-node=2", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, Pairs4Remapped);
}

TEST(RemapGpus, GroupsByPlacementWithEachGpusNic) {
  // Linear placement on small_cluster.yaml puts ranks 0, 1 on host 0 and 2, 3 on host 1.
  // Each host's PCIe switch joins both GPUs and both NICs; equally near NICs are shared
  // out in order, so GPU 0 leaves through nic 0 and GPU 1 through nic 1: the same text.
  PassDir d({"small_cluster.yaml", "pairs4.goal"});
  RunResult r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place,remap-gpus",
                       "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, Pairs4Remapped);
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place,remap-gpus", "-emit=placement"});
  EXPECT_EQ(r.out, "# placement of 2 ranks of 'pairs4.goal' on 'small_cluster.yaml': rank "
                   "endpoint\n"
                   "# rank 0 member 0: rank 0 of job 0 on host.0.xpu.0, cpus 0-1\n"
                   "# rank 0 member 1: rank 1 of job 0 on host.0.xpu.1, cpus 2-3\n"
                   "# rank 0 nic 0 = host.0.nic.0\n"
                   "# rank 0 nic 1 = host.0.nic.1\n"
                   "0 host.0.xpu.0\n"
                   "# rank 1 member 0: rank 2 of job 0 on host.1.xpu.0, cpus 0-1\n"
                   "# rank 1 member 1: rank 3 of job 0 on host.1.xpu.1, cpus 2-3\n"
                   "# rank 1 nic 0 = host.1.nic.0\n"
                   "# rank 1 nic 1 = host.1.nic.1\n"
                   "1 host.1.xpu.0\n");
  // Round-robin puts ranks 0 and 3 on host 0 (GPUs 0, 1), 1 on host 1, 2 on host 2.
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place,remap-gpus", "-emit=goal",
             "-place=round-robin"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 12), "num_ranks 3\n");
}

TEST(RemapGpus, DgxGpusLeaveThroughTheirOwnNic) {
  // In a DGX H100 (blueprint dgx_h100) GPU s sits on PCIe slot s, which holds NIC s:
  // every send of GPU k (cpu streams 2k, 2k+1) goes out on nic k.
  PassDir d({"rail8.goal"});
  RunResult r = d.run({"-fabric=leaf_spine:leaves=1,spines=1,hosts_per_leaf=2,host=dgx_h100",
                       "rail8.goal", "-passes=place,remap-gpus", "-place=packed",
                       "-place-per-host=4", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  for (int k = 0; k < 4; ++k) {
    std::string send = "send 4096b to 1 tag " + std::to_string((1 * 4 + k) * 4 + k);
    std::string clauses = k ? " cpu " + std::to_string(2 * k) + " nic " + std::to_string(k) : "";
    EXPECT_NE(r.out.find(": " + send + clauses + "\n"), std::string::npos) << k << r.out;
  }
}

// -nic=map:FILE overrides the affinity: both GPUs of server 0 on its NIC 1, so GPU 0's
// send goes out on nic 1 (by affinity it would be nic 0, no clause).
TEST(RemapGpus, NicMapOverridesAffinity) {
  PassDir d;
  d.write("g4.goal", "num_ranks 4\nrank 0 {\nl1: send 8b to 2 tag 0\n}\nrank 1 {\n}\n"
                     "rank 2 {\nl1: recv 8b from 0 tag 0\n}\nrank 3 {\n}\n");
  d.write("nics.txt", "0 server.0.nic.1\n1 server.0.nic.1\n2 server.1.nic.0\n3 server.1.nic.1\n");
  const std::vector<std::string> base = {
      "-fabric=leaf_spine:leaves=2,spines=2,hosts_per_leaf=2,host=server", "g4.goal",
      "-passes=place,remap-gpus", "-emit=goal"};
  std::vector<std::string> mapped = base;
  mapped.push_back("-nic=map:nics.txt");
  RunResult r = d.run(mapped);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("l1: send 8b to 1 tag 0 nic 1\n"), std::string::npos) << r.out;
  r = d.run(base);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("l1: send 8b to 1 tag 0\n"), std::string::npos) << r.out;
}

TEST(RemapGpus, RegroupsForWhatIfStudies) {
  // rail8 (2 nodes x 4 GPUs) replayed as 4 nodes x 2 GPUs: rank r is GPU r%2 of node
  // r/2; rank 0 talks to rank 4 = node 2 GPU 0: tag 1 -> (1*2+0)*2+0 = 4.
  PassDir d({"rail8.goal"});
  RunResult r = d.run({"rail8.goal", "-passes=remap-gpus", "-gpus-per-node=2", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find("rank 1 {")),
            "num_ranks 4\n\nrank 0 {\n"
            "l1: calc 100\n"
            "l2: send 4096b to 2 tag 4\n"
            "l3: recv 4096b from 2 tag 4\n"
            "l4: calc 50 cpu 1\n"
            "l5: send 100b to 2 tag 8 cpu 1\n"
            "l6: recv 100b from 2 tag 8 cpu 1\n"
            "l7: calc 200 cpu 2\n"
            "l8: send 4096b to 2 tag 7 cpu 2 nic 1\n"
            "l9: recv 4096b from 2 tag 7 cpu 2 nic 1\n"
            "l10: calc 50 cpu 3\n"
            "l11: send 100b to 2 tag 11 cpu 3 nic 1\n"
            "l12: recv 100b from 2 tag 11 cpu 3 nic 1\n"
            "l2 requires l1\n"
            "l4 requires l3\n"
            "l6 requires l3\n"
            "l5 requires l4\n"
            "l8 requires l7\n"
            "l10 requires l9\n"
            "l12 requires l9\n"
            "l11 requires l10\n"
            "}\n\n");
  r = d.run({"rail8.goal", "-passes=remap-gpus", "-gpus-per-node=8", "-emit=goal"});
  EXPECT_EQ(r.out.substr(0, 13), "num_ranks 1\n\n");
  // 3 GPUs per node: the last node holds the 2 GPUs left over.
  r = d.run({"rail8.goal", "-passes=remap-gpus", "-gpus-per-node=3", "-emit=goal", "-stats"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 13), "num_ranks 3\n\n");
  EXPECT_NE(r.err.find(" 8 remap-gpus - GPUs grouped into nodes\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" 3 remap-gpus - Most GPUs on one node\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" 3 remap-gpus - Nodes (ranks) after remap-gpus\n"), std::string::npos);
}

TEST(RemapGpus, SameMakespanWhenNoStreamOrNicChangesHands) {
  // rail8: every message joins GPU k of one node and GPU k of the other, so after the
  // remapping each message is still charged on its own GPU's cpu stream and NIC at both
  // ends (LogGOPSim charges the receiver on the sender's cpu and nic indices). The
  // makespan, 32064 ns, was measured with LogGOPSim (76451de) on rail8.goal and on the
  // remapped schedules (-emit=goal | txt2bin | LogGOPSim): host 3 ends at 32064 per
  // GPU; nodes of 2 GPUs end at 31864, 32064, 31864, 32064; nodes of 4 at 32064.
  PassDir d({"rail8.goal", "rail8.placemap"});
  writeFile(d.path() + "/dgx_cluster.yaml", readFile(sourcePath("examples/dgx_cluster.yaml")));
  RunResult r = d.run({"rail8.goal", "-sim-batch"});
  EXPECT_EQ(makespan(r.out), "32064") << r.out << r.err;
  for (const char *n : {"2", "4", "8"}) {
    r = d.run({"rail8.goal", "-passes=remap-gpus", std::string("-gpus-per-node=") + n,
               "-sim-batch"});
    EXPECT_EQ(makespan(r.out), "32064") << n << r.err;
  }
  r = d.run({"rail8.goal", "-passes=remap-gpus", "-gpus-per-node=2"});
  EXPECT_EQ(stableSim(r.out), "LogGP network backend; size: 4 (4 CPUs, 2 NICs); L=2500, o=1500 "
                              "g=1000, G=6, O=0, P=4, S=65535\nTimes: \nHost 0: 31864\n"
                              "Host 1: 32064\nHost 2: 31864\nHost 3: 32064\n");
  // Placed on the DGX-style example (GPU k on NIC k), grouped by host.
  r = d.run({"dgx_cluster.yaml", "rail8.goal", "-passes=place,remap-gpus",
             "-place-map=rail8.placemap", "-sim-batch", "-sim-model=lgs"});
  EXPECT_EQ(makespan(r.out), "32064") << r.err;
}

TEST(RemapGpus, MessagesBetweenGpusOfDifferentIndexChangeStreams) {
  // cross4: GPU 0 of node 0 sends 1000 B to GPU 1 of node 1, which computes 10000 ns
  // on its cpu 0 first. Per GPU, the message waits for that calc: 10000 + o + 999*G =
  // 17494. After remap-gpus the receiver is charged on the sender's stream, cpu 0 of
  // node 1, which is GPU 0's and idle: 4000 + 1500 + 5994 = 11494. (Both measured with
  // LogGOPSim too.) This is the limit documented in docs/passes.md.
  PassDir d({"cross4.goal"});
  RunResult r = d.run({"cross4.goal", "-sim-batch"});
  EXPECT_EQ(makespan(r.out), "17494");
  r = d.run({"cross4.goal", "-passes=remap-gpus", "-gpus-per-node=2", "-sim-batch"});
  EXPECT_EQ(makespan(r.out), "11494");
}

TEST(SplitNodes, UndoesRemapGpus) {
  PassDir d({"pairs4.goal", "small_cluster.yaml"});
  RunResult r = d.run({"pairs4.goal", "-passes=remap-gpus,split-nodes", "-gpus-per-node=2",
                       "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, Pairs4);
  // With a placement: the ranks go back to their GPUs.
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place,remap-gpus,split-nodes",
             "-place=round-robin", "-emit=placement"});
  EXPECT_EQ(r.out, "# placement of 4 ranks of 'pairs4.goal' on 'small_cluster.yaml': rank "
                   "endpoint\n0 host.0.xpu.0\n1 host.1.xpu.0\n2 host.2.xpu.0\n3 host.0.xpu.1\n");
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place,remap-gpus,split-nodes",
             "-place=round-robin", "-emit=goal"});
  EXPECT_EQ(r.out, Pairs4);
  // From a file: the per-node GOAL read back and split with -gpus-per-node.
  d.write("nodes.goal", Pairs4Remapped);
  r = d.run({"nodes.goal", "-passes=split-nodes", "-gpus-per-node=2", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, Pairs4);
}

TEST(RemapGpusErrors, Usage) {
  PassDir d({"pairs4.goal", "small_cluster.yaml"});
  RunResult r = d.run({"pairs4.goal", "-passes=remap-gpus", "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: remap-gpus needs to know which GPUs share a node: run place "
                   "first (with a fabric), or give -gpus-per-node=N\n");
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place,remap-gpus", "-gpus-per-node=2",
             "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -gpus-per-node and a placement both say which GPUs share a "
                   "node; the placement (from place or merge-jobs) decides: drop -gpus-per-node, "
                   "or do not place\n");
  // A grouped schedule is taken apart and grouped again: twice is the same as once.
  r = d.run({"pairs4.goal", "-passes=remap-gpus,remap-gpus", "-gpus-per-node=2", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, Pairs4Remapped);
  r = d.run({"small_cluster.yaml", "-passes=remap-gpus", "-emit=stats"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: remap-gpus needs a workload (a per-GPU schedule)\n");
}

TEST(RemapGpusErrors, MessagesThatCannotBeKeptApart) {
  PassDir d;
  d.write("wild.goal", "num_ranks 2\n\nrank 0 {\nl1: recv 8b from -1 tag 3\nl2: recv 8b from 1 "
                       "tag -1\n}\n\nrank 1 {\nl1: send 8b to 0 tag 3\nl2: send 8b to 0 tag -1\n}\n");
  RunResult r = d.run({"wild.goal", "-passes=remap-gpus", "-gpus-per-node=2", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "wild.goal: error: rank 0 operation 'l1' is a recv from any source (-1); with up to 2 "
            "ranks grouped into one it could match messages meant for another of them, so "
            "remap-gpus cannot keep it apart (give the recv its source)\n"
            "wild.goal: error: rank 0 operation 'l2' has any tag (-1); with up to 2 ranks grouped "
            "into one, remap-gpus cannot keep its messages apart from the others' (give it a "
            "tag)\n"
            "wild.goal: error: rank 1 operation 'l2' has any tag (-1); with up to 2 ranks grouped "
            "into one, remap-gpus cannot keep its messages apart from the others' (give it a "
            "tag)\n");
  // One GPU per node changes nothing, wildcards included.
  r = d.run({"wild.goal", "-passes=remap-gpus", "-gpus-per-node=1", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;

  d.write("bigtag.goal", "num_ranks 2\n\nrank 0 {\nl1: send 8b to 1 tag 1073741823\n"
                         "l2: send 8b to 1 tag 1073741824\n}\n\nrank 1 {\nl1: recv 8b from 0 tag "
                         "1073741823\nl2: recv 8b from 0 tag 1073741824\n}\n");
  // (1073741824*2 + 0)*2 + 1 would leave the 32-bit tag space: the distinct tags are
  // numbered 0, 1 in their order first, giving (0*2 + 0)*2 + 1 = 1 and (1*2 + 0)*2 + 1 = 5.
  // Lowered collectives (tags from 2^31) on multi-GPU hosts depend on this.
  r = d.run({"bigtag.goal", "-passes=remap-gpus", "-gpus-per-node=2", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "num_ranks 1\n\nrank 0 {\nl1: send 8b to 0 tag 1\nl2: send 8b to 0 tag 5\n"
                   "l3: recv 8b from 0 tag 1 cpu 1 nic 1\nl4: recv 8b from 0 tag 5 cpu 1 nic 1\n}\n");
}

TEST(SplitNodesErrors, All) {
  PassDir d({"pairs4.goal"});
  d.write("nodes.goal", Pairs4Remapped);
  // (-disable-verify: the verifier's notes about messages to the own rank are not the point.)
  RunResult r = d.run({"nodes.goal", "-passes=split-nodes", "-emit=goal", "-disable-verify"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: split-nodes needs to know the GPUs of every node: run it "
                   "after remap-gpus in the same run, or give -gpus-per-node=N\n");
  r = d.run({"nodes.goal", "-passes=split-nodes", "-gpus-per-node=3", "-emit=goal",
             "-disable-verify"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "nodes.goal: error: split-nodes: the schedule has 4 cpu streams per node, not "
                   "a multiple of -gpus-per-node=3, so the streams cannot be shared out among "
                   "the GPUs (remap-gpus gives GPU k streams [k*c, (k+1)*c))\n");
  // A tag that does not encode the sending GPU (node 0's GPU 0 claims to be GPU 1).
  d.write("badtag.goal", "num_ranks 2\n\nrank 0 {\nl1: send 8b to 1 tag 2\n}\n\nrank 1 {\n"
                         "l1: recv 8b from 0 tag 2 cpu 1\n}\n");
  r = d.run({"badtag.goal", "-passes=split-nodes", "-gpus-per-node=2", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "badtag.goal: error: split-nodes: rank 0 operation 'l1': its tag 2 does not encode GPU "
            "0 of this node talking to a GPU of node 1 (remap-gpus writes tag' = (tag*2 + source "
            "GPU)*2 + destination GPU)");
  // After intranode-calc a recv of one GPU waits for a calc of another.
  r = d.run({"pairs4.goal", "-passes=remap-gpus,intranode-calc,split-nodes", "-gpus-per-node=2",
             "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "pairs4.goal: error: split-nodes: rank 0 operation #4 (GPU 1) requires operation #1 "
            "(GPU 0): a dependency between two GPUs of a node has no per-GPU form "
            "(intranode-calc makes such edges; split before it)");
}
