// The pass pipeline flags: -passes, -print-after, -verify-each, -stats, -time-passes,
// and the default pipelines.
#include "tests/passes/PassTestUtil.h"

#include <gtest/gtest.h>

using namespace infracc::test;

TEST(PassManager, PassesRunInTheOrderGiven) {
  PassDir d({"pairs4.goal"});
  RunResult r = d.run({"pairs4.goal", "-passes=plce", "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("infracc: error: unknown pass 'plce' in -passes; passes are: ", 0), 0u)
      << r.err;
  EXPECT_NE(r.err.find("passes are: intranode-calc, lower-collectives, lower-kernels, merge-jobs, "
                       "place, remap-gpus, split-nodes, unroll-loadstore, verify"),
            std::string::npos);
  // split-nodes before remap-gpus has nothing to split.
  r = d.run({"pairs4.goal", "-passes=split-nodes,remap-gpus", "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: split-nodes needs to know the GPUs of every node: run it "
                   "after remap-gpus in the same run, or give -gpus-per-node=N\n");
}

TEST(PassManager, PrintAfterShowsTheSchedule) {
  PassDir d({"pairs4.goal"});
  RunResult r = d.run({"pairs4.goal", "-passes=remap-gpus,intranode-calc", "-gpus-per-node=2",
                       "-print-after=remap-gpus", "-emit=goal", "-o", "out.goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "; *** Schedule after remap-gpus ***\n" + readFile(sourcePath(
                       "tests/golden/passes/pairs4.remap2.goal")));
  r = d.run({"pairs4.goal", "-passes=remap-gpus,intranode-calc", "-gpus-per-node=2",
             "-print-after=all", "-emit=goal", "-o", "out.goal"});
  EXPECT_EQ(countOf(r.err, "; *** Schedule after "), 3u);   // verify, remap-gpus, intranode-calc
  EXPECT_NE(r.err.find("; *** Schedule after intranode-calc ***\n" + d.read("out.goal")),
            std::string::npos);
  r = d.run({"pairs4.goal", "-passes=remap-gpus", "-gpus-per-node=2", "-print-after=place",
             "-emit=goal", "-o", "out.goal"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "infracc: warning: -print-after=place: 'place' is not in the pipeline "
                   "(verify,remap-gpus), so nothing is printed for it\n");
  r = d.run({"pairs4.goal", "-print-after=plce", "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -print-after names 'plce', which is not a pass\n");
}

TEST(PassManager, VerifyEachRunsTheVerifierAfterEveryPass) {
  PassDir d({"pairs4.goal"});
  // Counters add up over the three runs of the verifier (before, after remap-gpus,
  // after intranode-calc): 11 ops each; 3 + 3 + 6 dependencies; 5 + 5 + 2 messages.
  RunResult r = d.run({"pairs4.goal", "-passes=remap-gpus,intranode-calc", "-gpus-per-node=2",
                       "-verify-each", "-stats", "-emit=goal", "-o", "out.goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  // After remap-gpus the verifier notes the messages between GPUs of one node.
  EXPECT_EQ(r.err,
            "pairs4.goal: note: rank 0: send #1 is a message to its own rank\n"
            "pairs4.goal: note: rank 0: send #5 is a message to its own rank\n"
            "pairs4.goal: note: rank 1: send #3 is a message to its own rank\n"
            "===-------------------------------------------------------------------------===\n"
            "                          ... Statistics Collected ...\n"
            "===-------------------------------------------------------------------------===\n"
            "\n"
            "2500 intranode-calc - Bytes moved inside nodes\n"
            "   3 intranode-calc - Messages inside a node replaced by calcs\n"
            "   4 remap-gpus     - GPUs grouped into nodes\n"
            "   2 remap-gpus     - Most GPUs on one node\n"
            "   2 remap-gpus     - Nodes (ranks) after remap-gpus\n"
            "  12 verify         - Dependencies verified\n"
            "  12 verify         - Sends matched with a recv\n"
            "  33 verify         - Operations verified\n"
            "\n");
  // A schedule that only -disable-verify let in fails the verifier after the first pass.
  d.write("unmatched.goal", "num_ranks 2\n\nrank 0 {\nl1: send 8b to 1 tag 1\n}\n\nrank 1 {\n}\n");
  r = d.run({"unmatched.goal", "-passes=remap-gpus", "-gpus-per-node=1", "-disable-verify",
             "-verify-each", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  // One GPU per node: the ranks keep their ops' labels.
  EXPECT_EQ(r.err, "unmatched.goal: error: rank 0: send 'l1' (8 bytes to rank 1, tag 1) has no "
                   "matching recv in rank 1\n"
                   "unmatched.goal: note: with -allow-unmatched these are warnings\n"
                   "infracc: error: the module no longer verifies after pass 'remap-gpus'\n");
}

TEST(PassManager, TimePassesReportsEveryPassOnce) {
  PassDir d({"pairs4.goal"});
  RunResult r = d.run({"pairs4.goal", "-passes=remap-gpus,intranode-calc", "-gpus-per-node=2",
                       "-time-passes", "-emit=goal", "-o", "out.goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(countOf(r.err, "Pass execution timing report"), 1u) << r.err;
  EXPECT_EQ(countOf(r.err, "Reading, expansion and output"), 1u) << r.err;
  for (const char *pass : {"  verify\n", "  remap-gpus\n", "  intranode-calc\n"})
    EXPECT_EQ(countOf(r.err, pass), 1u) << pass << r.err;
}

TEST(PassManager, DefaultPipelines) {
  // -emit=sim with -sim-model=topo places first; several workloads are merged first
  // (and then not placed again: merge-jobs places them).
  PassDir d({"small_cluster.yaml", "pairs4.goal", "job_a.goal", "job_b.goal"});
  RunResult r = d.run({"small_cluster.yaml", "pairs4.goal", "-sim-model=topo", "-print-after=all",
                       "-o", "out.txt"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(countOf(r.err, "; *** Schedule after "), 2u);
  EXPECT_NE(r.err.find("; *** Schedule after place ***"), std::string::npos);
  r = d.run({"small_cluster.yaml", "job_a.goal", "job_b.goal", "-sim-model=topo",
             "-print-after=all", "-o", "out.txt"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("; *** Schedule after merge-jobs ***"), std::string::npos);
  EXPECT_EQ(r.err.find("; *** Schedule after place ***"), std::string::npos);
  // With a fabric topo is the default model, so place runs; with lgs nothing is placed.
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-print-after=all", "-o", "out.txt"});
  EXPECT_EQ(countOf(r.err, "; *** Schedule after place ***"), 1u);
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-sim-model=lgs", "-print-after=all", "-o",
             "out.txt"});
  EXPECT_EQ(countOf(r.err, "; *** Schedule after "), 1u);
}
