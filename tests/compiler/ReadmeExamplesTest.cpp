// The README's example command lines, run exactly as written (from the checkout's
// root), with what they print.
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

using namespace infracc::test;

TEST(ReadmeExamples, MpiTraceSimulated) {
  std::vector<std::string> args = readmeCommand("examples/mpi-trace/ -emit=sim");
  ASSERT_EQ(args, (std::vector<std::string>{"examples/mpi-trace/", "-emit=sim"}));
  RunResult r = runInfracc(args, sourcePath(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // LogGOPSim's defaults; the collectives (bcast, allreduce, barrier) lowered by default.
  // LogGOPSim 76451de printed the same times for `infracc examples/mpi-trace/ -emit=goal`
  // after txt2bin.
  EXPECT_EQ(r.out.substr(0, r.out.find("PERFORMANCE")),
            "LogGP network backend; size: 4 (1 CPUs, 1 NICs); L=2500, o=1500 g=1000, G=6, O=0, "
            "P=4, S=65535\n");
  EXPECT_EQ(r.out.substr(r.out.find("Times: ")),
            "Times: \nHost 0: 2429528\nHost 1: 2430986\nHost 2: 2429528\nHost 3: 2434986\n");
}

TEST(ReadmeExamples, AllreduceCollectiveLoweredAndSimulated) {
  std::vector<std::string> args = readmeCommand("examples/allreduce-collective.goal");
  ASSERT_EQ(args, (std::vector<std::string>{"examples/allreduce-collective.goal",
                                            "-passes=lower-collectives",
                                            "-reduce-ns-per-byte=0.125", "-emit=sim"}));
  RunResult r = runInfracc(args, sourcePath(""));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  std::string times = "Times: \n";
  for (int rank = 0; rank < 16; ++rank)
    times += "Host " + std::to_string(rank) + ": 12084180\n";
  ASSERT_NE(r.out.find("Times: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(r.out.find("Times: ")), times);
  // The hand-written ring of the same size gives the same times (LogGOPSim 76451de on
  // examples/ring-allreduce-16.goal after txt2bin: 12084180 on every host).
  RunResult ring = runInfracc({"examples/ring-allreduce-16.goal"}, sourcePath(""));
  ASSERT_EQ(ring.status, 0) << ring.err;
  EXPECT_EQ(ring.out.substr(ring.out.find("Times: ")), times);
}
