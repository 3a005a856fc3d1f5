// Golden outputs of the kernel-level targets: -emit=kernels of every test plan (and the
// .kernels reader taking each back unchanged), -emit=loadstore (Figure 7 style),
// -emit=goal and -emit=sim of kernel-level schedules, -emit=msccl of a collective
// lowered to kernels; and round trips: plan -> -emit=msccl -> the same kernel level.
#include "tests/loadstore/LoadStoreTestUtil.h"

#include <gtest/gtest.h>

#include <regex>

namespace infracc::test {
namespace {

struct Plan {
  const char *name;
  const char *msg;   // -msg-size
};

// 1 MiB messages (3 MiB for the three-GPU plans, whose blocks are a third).
const Plan Plans[] = {
    {"allreduce_ring", "1048576"},     {"allgather_put", "1048576"},
    {"allgather_get", "1048576"},      {"reducescatter_get", "1048576"},
    {"alltoall_port", "1048576"},      {"allreduce_pipeline", "1048576"},
    {"allreduce_nvls", "1048576"},     {"allgather_nvls", "1048576"},
    {"allreduce_ll", "1048576"},       {"reducescatter_ll", "3145728"},
    {"allgather_ll", "3145728"},       {"allgather_nvls_ll", "1048576"},
    {"allreduce_pipeline_reuse", "1048576"},
};

std::string plan(const std::string &name) { return sourcePath("tests/msccl/inputs/" + name + ".json"); }
std::string input(const std::string &name) { return sourcePath("tests/loadstore/inputs/" + name); }

TEST(KernelsGolden, EveryPlanAsKernelText) {
  for (const Plan &p : Plans) {
    RunResult r = runInfracc({plan(p.name), "-emit=kernels", std::string("-msg-size=") + p.msg});
    ASSERT_EQ(r.status, 0) << p.name << ": " << r.err;
    EXPECT_EQ(compareGolden("loadstore/kernels/" + std::string(p.name) + ".kernels", r.out), "");
    // The .kernels reader takes the dump back as it is.
    std::string golden = sourcePath("tests/golden/loadstore/kernels/" + std::string(p.name) + ".kernels");
    RunResult back = runInfracc({golden, "-emit=kernels"});
    ASSERT_EQ(back.status, 0) << p.name << ": " << back.err;
    EXPECT_EQ(back.out, r.out) << p.name;
  }
}

TEST(KernelsGolden, PlansRoundTripThroughMsccl) {
  for (const Plan &p : Plans) {
    std::string msg = std::string("-msg-size=") + p.msg;
    RunResult direct = runInfracc({plan(p.name), "-emit=kernels", msg});
    std::string out = makeTempDir("rt") + "/plan.json";
    RunResult written = runInfracc({plan(p.name), "-emit=msccl", msg, "-o", out});
    ASSERT_EQ(written.status, 0) << p.name << ": " << written.err;
    RunResult back = runInfracc({out, "-emit=kernels", msg});
    ASSERT_EQ(back.status, 0) << p.name << ": " << back.err;
    EXPECT_EQ(back.out, direct.out) << p.name;
  }
}

/// A GOAL file with one collective statement on each of `ranks` ranks.
std::string collectiveFile(const std::string &statement, int ranks) {
  std::string t = "num_ranks " + std::to_string(ranks) + "\n";
  for (int r = 0; r < ranks; ++r)
    t += "rank " + std::to_string(r) + " {\nl1: " + statement + "\n}\n";
  std::string path = makeTempDir("coll") + "/c.goal";
  writeFile(path, t);
  return path;
}

TEST(KernelsGolden, CollectiveKernelsRoundTripThroughMsccl) {
  unsigned cases = 0;
  for (std::string kind : {"allreduce", "allgather", "reducescatter", "alltoall"})
    for (std::string algo : {"ring", "direct"})
      for (std::string transfer : {"put", "get"}) {
        if (kind == "alltoall" && algo == "ring")
          continue;
        std::string goal = collectiveFile(kind + " 1000b algo " + algo, 4);
        std::vector<std::string> lower{goal, "-passes=lower-collectives", "-coll-target=kernels",
                                       "-coll-transfer=" + transfer, "-workgroups=3"};
        auto with = [&](std::vector<std::string> extra) {
          std::vector<std::string> a = lower;
          a.insert(a.end(), extra.begin(), extra.end());
          return runInfracc(a);
        };
        RunResult direct = with({"-emit=kernels"});
        ASSERT_EQ(direct.status, 0) << direct.err;
        std::string out = makeTempDir("crt") + "/plan.json";
        RunResult written = with({"-emit=msccl", "-o", out});
        ASSERT_EQ(written.status, 0) << written.err;
        // The plan names its message size (min = max): the allgather's output, the
        // reducescatter's input, 4000 bytes; 1000 for the others.
        std::string msg = kind == "allreduce" ? "1000" : "4000";
        EXPECT_NE(readFile(out).find("\"min_message_size\": " + msg), std::string::npos);
        RunResult back = runInfracc({out, "-emit=kernels", "-msg-size=" + msg});
        ASSERT_EQ(back.status, 0) << back.err;
        EXPECT_EQ(back.out, direct.out) << kind << " " << algo << " " << transfer;
        ++cases;
      }
  EXPECT_EQ(cases, 14u);
}

TEST(KernelsGolden, CollectiveAsMscclPlan) {
  std::string goal = collectiveFile("allgather 4096b algo ring", 4);
  RunResult r = runInfracc({goal, "-passes=lower-collectives", "-coll-target=kernels",
                            "-workgroups=2", "-emit=msccl"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("loadstore/msccl/allgather_ring_put.json", r.out), "");
  r = runInfracc({goal, "-passes=lower-collectives", "-coll-target=kernels", "-emit=kernels"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("loadstore/kernels/allgather_ring_put_coll.kernels", r.out), "");
}

TEST(KernelsGolden, ExplicitPassesNameTheMissingLowering) {
  // With -passes given, nothing is added: the simulator names the pass that is missing.
  std::string goal = collectiveFile("allgather 4096b algo ring", 4);
  RunResult r = runInfracc({goal, "-passes=lower-collectives", "-coll-target=kernels",
                            "-emit=sim"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, goal + ": error: rank 0, l1 (op 0): 'kernel' is not lowered; the simulator "
                          "runs send, recv and calc only (add lower-kernels to -passes)\n");
  r = runInfracc({goal, "-passes=lower-collectives,lower-kernels", "-coll-target=kernels",
                  "-emit=sim"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("Host 3: "), std::string::npos) << r.out;
}

TEST(LoadStoreGolden, Figure7) {
  RunResult r = runInfracc({input("figure7.kernels"), "-emit=loadstore", "-unroll=4",
                            "-wavefronts=2"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("loadstore/loadstore/figure7.txt", r.out), "");
}

TEST(LoadStoreGolden, PipelineWithReusedScratch) {
  RunResult r = runInfracc({plan("allreduce_pipeline_reuse"), "-msg-size=128", "-emit=loadstore",
                            "-wg=1:0:0", "-unroll=2", "-cache-line=256"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("loadstore/loadstore/pipeline_reuse.txt", r.out), "");
}

TEST(LoadStoreGolden, PacketsAndReductions) {
  RunResult r = runInfracc({plan("allreduce_ll"), "-msg-size=512", "-emit=loadstore"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("loadstore/loadstore/allreduce_ll.txt", r.out), "");
}

TEST(GoalOfKernels, PlansBecomeMessages) {
  RunResult r = runInfracc({plan("allreduce_ll"), "-msg-size=1024", "-emit=goal"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("loadstore/goal/allreduce_ll.goal", r.out), "");
  r = runInfracc({plan("allgather_get"), "-msg-size=4096", "-emit=goal"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("loadstore/goal/allgather_get.goal", r.out), "");
  r = runInfracc({input("figure7.kernels"), "-emit=goal", "-gpu-copy-ns-per-byte=0.5"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("loadstore/goal/figure7.goal", r.out), "");
}

TEST(GoalOfKernels, SimulatedWithLogGOPSimsDefaults) {
  // The lowered messages, run by the built-in LogGOPSim-exact simulator.
  RunResult r = runInfracc({plan("allreduce_ring"), "-msg-size=1048576", "-emit=sim"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(compareGolden("loadstore/sim/allreduce_ring.txt", r.out), "");
}

// A fused group (load, load, reduce, store, store) is one operation: lowered once, not
// once more for each of its members after the first (which put every chunk of the ring
// four times over). Per GPU: six steps, each a put of a quarter of 1 MiB and a signal.
TEST(GoalOfKernels, AFusedGroupIsLoweredOnce) {
  RunResult r = runInfracc({plan("allreduce_ring"), "-msg-size=1048576", "-emit=goal"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string rank0 = r.out.substr(r.out.find("rank 0 {"));
  rank0 = rank0.substr(0, rank0.find("\n}\n"));
  size_t puts = 0, signals = 0;
  for (size_t at = 0; (at = rank0.find(": send 262144b to 1 ", at)) != std::string::npos; ++at)
    ++puts;
  for (size_t at = 0; (at = rank0.find(": send 8b to 1 ", at)) != std::string::npos; ++at)
    ++signals;
  EXPECT_EQ(puts, 6u);
  EXPECT_EQ(signals, 6u);
  // LogGOPSim (spcl/LogGOPSim, txt2bin + LogGOPSim -f with its defaults) on this -emit=goal
  // output gives 9503400 ns for every host, as -emit=sim does (tests/golden/loadstore/sim).
}

// Reading LL packets waits for the put that wrote them, whichever GPU's kernel is
// lowered first: GPU 0 (lowered before GPU 1) waits for GPU 1's packets as GPU 1 waits
// for GPU 0's (before, only the later kernel waited).
TEST(GoalOfKernels, PacketReadsWaitForThePutsWhateverTheKernelOrder) {
  RunResult r = runInfracc({plan("allreduce_ll"), "-msg-size=1024", "-emit=goal"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (std::string me : {"0", "1"}) {
    std::string body = r.out.substr(r.out.find("rank " + me + " {"));
    body = body.substr(0, body.find("\n}\n") + 1);
    std::string peer = me == "0" ? "1" : "0";
    // Each of the peer's two puts is waited for by a calc of this rank (the reduce's
    // and the copy's wait for their packets).
    for (std::string tag : {"2147483648", "2147483649"}) {
      std::smatch recv;
      ASSERT_TRUE(std::regex_search(
          body, recv, std::regex("(l[0-9]+): recv 1024b from " + peer + " tag " + tag + "\n")))
          << body;
      std::smatch waiter;
      ASSERT_TRUE(std::regex_search(body, waiter,
                                    std::regex("(l[0-9]+) requires " + recv[1].str() + "\n")))
          << "rank " << me << " waits for no put with tag " << tag << ":\n" << body;
      EXPECT_NE(body.find(waiter[1].str() + ": calc 0\n"), std::string::npos) << body;
    }
  }
}

// Loops are lowered once per iteration: the operations are counted first and a schedule
// that would not fit in -max-memory is refused before any is made.
TEST(GoalOfKernels, LoweringIsSizedBeforeItRuns) {
  RunResult r = runInfracc({plan("allreduce_pipeline"), "-msg-size=1GiB", "-max-memory=16G",
                            "-emit=sim"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, plan("allreduce_pipeline") +
                       ": error: lowering the kernels to messages (the largest: GPU 0's kernel "
                       "of 1 workgroup over 1073741824 bytes of input, 637534226 operations) "
                       "would need about 95.0 GiB (2550136904 x 40 bytes), more than -max-memory "
                       "(16.0 GiB); raise it with -max-memory=\n");
  // At 1 MiB it makes 2,490,416 operations; the count before is 2,490,440 (an upper
  // bound: releases nobody waits for are counted with a recv), 95.002 MiB.
  r = runInfracc({plan("allreduce_pipeline"), "-max-memory=96M", "-emit=sim", "-stats"});
  EXPECT_EQ(r.status, 0) << r.err;
  // The count before is checked against what the lowering then made (its own statistic),
  // not only against a number it printed once.
  std::smatch made;
  ASSERT_TRUE(std::regex_search(r.err, made,
                                std::regex("([0-9]+) lower-kernels +- Operations after lowering")))
      << r.err;
  EXPECT_EQ(made[1].str(), "2490416");
  // Kept as a number: `made` points into r.err, which the next run replaces.
  const uint64_t after = std::stoull(made[1].str());
  r = runInfracc({plan("allreduce_pipeline"), "-max-memory=95M", "-emit=sim"});
  EXPECT_EQ(r.status, 1);
  std::smatch counted;
  ASSERT_TRUE(std::regex_search(r.err, counted,
                                std::regex("\\(([0-9]+) x 40 bytes\\), more than -max-memory "
                                           "\\(95.0 MiB\\)")))
      << r.err;
  const uint64_t before = std::stoull(counted[1].str());
  EXPECT_GE(before, after);
  // The difference: the plan's 24 sem_release ops (grep -c sem_release of its
  // -emit=kernels), each waited for and counted with a recv of its own although the
  // acquire becomes that recv.
  EXPECT_EQ(before - after, 24u);
}

} // namespace
} // namespace infracc::test
