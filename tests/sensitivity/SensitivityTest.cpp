// -emit=sensitivity: T(L) as segments, checked against the simulator run at several L
// (the analysis claims T(L) = T(0) + slope * L on each segment).
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>


using namespace infracc::test;

namespace {

uint64_t simulated(const std::string &goal, uint64_t L) {
  RunResult r = runInfracc({goal, "-emit=sim", "-L=" + std::to_string(L), "-sim-batch"});
  EXPECT_EQ(r.status, 0) << r.err;
  int64_t t = maximumFinishingTime(r.out);
  EXPECT_GE(t, 0) << r.out;
  return t < 0 ? 0 : uint64_t(t);
}

TEST(Sensitivity, RingAllreduceIsLinearInLAsTheSimulatorSays) {
  std::string goal = sourcePath("examples/ring-allreduce-16.goal");
  RunResult r = runInfracc({goal, "-emit=sensitivity"});
  ASSERT_EQ(r.status, 0) << r.err;
  // 30 messages on the critical path: 2(p-1) ring steps of 16 ranks. T(0) + 30 * 2500 is
  // 12084180, what LogGOPSim printed for this file at its default L (ReadmeExamples).
  EXPECT_NE(r.out.find("T(L=0 ns) = 12009180 ns\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("               0         100000         12009180           30\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("simulator at L=0 ns: 12009180 ns (equal)\n"), std::string::npos);
  for (uint64_t L : {0u, 2500u, 10000u, 50000u, 100000u})
    EXPECT_EQ(simulated(goal, L), 12009180 + 30 * L) << "L=" << L;
}

TEST(Sensitivity, IncastHasOneMessageOnItsCriticalPath) {
  std::string goal = sourcePath("tests/htsim/inputs/incast32.goal");
  RunResult r = runInfracc({goal, "-emit=sensitivity"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("T(L=0 ns) = 186047814 ns\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("               0         100000        186047814            1\n"),
            std::string::npos)
      << r.out;
  for (uint64_t L : {0u, 5000u, 50000u})
    EXPECT_EQ(simulated(goal, L), 186047814 + L) << "L=" << L;
}

} // namespace
