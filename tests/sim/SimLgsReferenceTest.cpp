// LogGOPSim's results on schedgen's patterns, reproduced exactly.
//
// How the numbers were measured: for each row, `schedgen -p PATTERN -s N -d D
// [--nway W --segmentsize S --rpl-dep-cmp T] -o x.goal; txt2bin -i x.goal -o x.bin;
// LogGOPSim -f x.bin FLAGS` with spcl/LogGOPSim 76451de (-O2). The schedules are rebuilt
// here by tests/sim/SchedgenPatterns.h, which produces schedgen's exact op and
// dependency order (checked op by op against those .bin files). `hosts` holds the
// `Host i:` lines (16 ranks or fewer); otherwise maxHost/maxTime hold the "Maximum
// finishing time at host H: T" line. `events` is LogGOPSim's "Events:" count.
#include "tests/sim/SchedgenPatterns.h"
#include "tests/sim/SimTestUtil.h"

#include <gtest/gtest.h>

#include <functional>

using namespace infracc;
using namespace infracc::test;
namespace sg = infracc::test::schedgen;

namespace {

struct RefCase {
  const char *name;
  std::function<Schedule()> build;
  const char *flags;
  uint64_t events;
  std::vector<uint64_t> hosts;
  uint32_t maxHost;
  uint64_t maxTime;
};

const std::vector<RefCase> &cases() {
  static const std::vector<RefCase> c = {
    {"bcast_7_1024", [] { return sg::binomialTreeBcast(7, 1024); }, "", 18, {15776,20276,20276,23276,25914,30414,30414}, 0, 0},
    {"bcast_8_100000", [] { return sg::binomialTreeBcast(8, 100000); }, "", 21, {1205988,1210488,1210488,1214988,1807482,1811982,1811982,1816482}, 0, 0},
    {"bcast_8_100000 -S 0", [] { return sg::binomialTreeBcast(8, 100000); }, "-S 0", 21, {1205988,1210488,1210488,1214988,1807482,1811982,1811982,1816482}, 0, 0},
    {"bcast_64_1", [] { return sg::binomialTreeBcast(64, 1); }, "", 189, {}, 63, 33000},
    {"bcast_33_1024 -L 100 -o 10 -g 5 -G 1 -O 2", [] { return sg::binomialTreeBcast(33, 1024); }, "-L 100 -o 10 -g 5 -G 1 -O 2", 96, {}, 32, 12446},
    {"reduce_8_1024", [] { return sg::binomialTreeReduce(8, 1024); }, "", 21, {34914,24776,13138,13138,1500,1500,1500,1500}, 0, 0},
    {"reduce_33_100000 -S 0", [] { return sg::binomialTreeReduce(33, 100000); }, "-S 0", 96, {}, 0, 3612964},
    {"reduce_16_100000 -O 7 -G 3 -S 1000", [] { return sg::binomialTreeReduce(16, 100000); }, "-O 7 -G 3 -S 1000", 45, {2821972,2817972,2112479,2112479,1406986,1406986,1406986,1406986,701493,701493,701493,701493,701493,701493,701493,701493}, 0, 0},
    {"bintree_16_4096", [] { return sg::binaryTreeBcast(16, 4096); }, "", 45, {27070,57140,82710,87210,112780,112780,138350,91710,115780,115780,141350,115780,141350,141350,166920,120280}, 0, 0},
    {"bintree_31_1 -o 0", [] { return sg::binaryTreeBcast(31, 1); }, "-o 0", 90, {}, 30, 14000},
    {"dissem_16_1", [] { return sg::dissemination(16, 1); }, "", 192, {22000,22000,22000,22000,22000,22000,22000,22000,22000,22000,22000,22000,22000,22000,22000,22000}, 0, 0},
    {"dissem_16_0", [] { return sg::dissemination(16, 0); }, "", 192, {21976,21976,21976,21976,21976,21976,21976,21976,21976,21976,21976,21976,21976,21976,21976,21976}, 0, 0},
    {"dissem_16_0 -o 0", [] { return sg::dissemination(16, 0); }, "-o 0", 192, {9976,9976,9976,9976,9976,9976,9976,9976,9976,9976,9976,9976,9976,9976,9976,9976}, 0, 0},
    {"dissem_17_70000", [] { return sg::dissemination(17, 70000); }, "", 255, {}, 0, 2127470},
    {"dissem_100_1024 -L 100 -o 10 -g 5 -G 1 -O 2", [] { return sg::dissemination(100, 1024); }, "-L 100 -o 10 -g 5 -G 1 -O 2", 2100, {}, 0, 28784},
    {"dissem_32_1024 -g 0 -G 0", [] { return sg::dissemination(32, 1024); }, "-g 0 -G 0", 480, {}, 0, 27500},
    {"nway2_9", [] { return sg::nwayDissemination(9, 2, 64); }, "", 126, {15640,15640,15640,15640,15640,15640,15640,15640,15640}, 0, 0},
    {"nway3_27 -L 10000 -o 200 -g 3000 -G 1", [] { return sg::nwayDissemination(27, 3, 64); }, "-L 10000 -o 200 -g 3000 -G 1", 891, {}, 0, 37643},
    {"pring_9", [] { return sg::pipelinedRing(9, 10000, 1000, false); }, "", 240, {64446,104928,120422,131916,143410,154904,166398,177892,187886}, 0, 0},
    {"pringdep_9", [] { return sg::pipelinedRing(9, 10000, 3000, true); }, "", 96, {58482,85976,109470,132964,156458,179952,203446,226940,237434}, 0, 0},
    {"pringdep_4 -S 100", [] { return sg::pipelinedRing(4, 10000, 3000, true); }, "-S 100", 36, {108470,112470,131964,139458}, 0, 0},
    {"dring_8", [] { return sg::doubleRing(8, 512); }, "", 48, {74594,67528,58962,50396,41830,44330,52896,61462}, 0, 0},
    {"dring_20 -S 0", [] { return sg::doubleRing(20, 512); }, "-S 0", 120, {}, 0, 177386},
    {"scatter_64_1", [] { return sg::scatter(64, 1); }, "", 189, {}, 31, 98500},
    {"scatter_17_100000", [] { return sg::scatter(17, 100000); }, "", 48, {}, 16, 9620404},
    {"gather_17_100000 -S 0", [] { return sg::gather(17, 100000); }, "-S 0", 48, {}, 0, 9627904},
    {"gather_8_1", [] { return sg::gather(8, 1); }, "", 21, {14500,1500,1500,1500,1500,1500,1500,1500}, 0, 0},
    {"linbar_40", [] { return sg::linBarrier(40); }, "", 235, {}, 19, 125000},
    {"linbar_5 -S 0", [] { return sg::linBarrier(5); }, "-S 0", 25, {18500,15500,17000,18500,20000}, 0, 0},
    {"a2a_16_8", [] { return sg::linearAlltoall(16, 8); }, "", 720, {45630,45630,45630,45630,45630,45630,45630,45630,45630,45630,45630,45630,45630,45630,45630,45630}, 0, 0},
    {"a2a_64_100000", [] { return sg::linearAlltoall(64, 100000); }, "", 12096, {}, 0, 38146122},
    {"a2a_33_100000 -S 0", [] { return sg::linearAlltoall(33, 100000); }, "-S 0", 3168, {}, 0, 19375808},
    {"recdoub_8_8", [] { return sg::allreduceRecDoub(8, 8); }, "", 144, {33048,33048,33048,33048,33048,33048,33048,33048}, 0, 0},
    {"recdoub_16_1", [] { return sg::allreduceRecDoub(16, 1); }, "", 384, {43952,43952,43952,43952,43952,43952,43952,43952,43952,43952,43952,43952,43952,43952,43952,43952}, 0, 0},
    {"recdoub_64_1000000 -S 0", [] { return sg::allreduceRecDoub(64, 1000000); }, "-S 0", 2304, {}, 0, 11878428},
    {"recdoub_64_1024 -O 7 -G 3 -S 1000", [] { return sg::allreduceRecDoub(64, 1024); }, "-O 7 -G 3 -S 1000", 2304, {}, 0, 82182},
    {"recdoubcmp_16", [] { return sg::allreduceRecDoub(16, 4096, 500); }, "", 496, {82062,82062,82062,82062,82062,82062,82062,82062,82062,82062,82062,82062,82062,82062,82062,82062}, 0, 0},
    {"ring_8_1024", [] { return sg::allreduceRing(8, 1024); }, "", 336, {87668,87668,87668,87668,87668,87668,87668,87668}, 0, 0},
    {"ring_8_640000 -S 0", [] { return sg::allreduceRing(8, 640000); }, "-S 0", 336, {6796916,6796916,6796916,6796916,6796916,6796916,6796916,6796916}, 0, 0},
    {"ring_4_8", [] { return sg::allreduceRing(4, 8); }, "", 72, {33036,33036,33036,33036}, 0, 0},
  };
  return c;
}

class SimLgsReference : public ::testing::TestWithParam<size_t> {};

} // namespace

TEST_P(SimLgsReference, MatchesLogGOPSim) {
  const RefCase &c = cases()[GetParam()];
  SCOPED_TRACE(c.name);
  sim::SimResult r = runLgs(c.build(), c.flags);
  ASSERT_TRUE(r.finished());
  EXPECT_EQ(r.events, c.events);
  if (!c.hosts.empty()) {
    EXPECT_EQ(r.hostFinish, c.hosts);
  } else {
    EXPECT_EQ(r.makespanRank, c.maxHost);
    EXPECT_EQ(r.makespan, c.maxTime);
  }
}

INSTANTIATE_TEST_SUITE_P(Schedgen, SimLgsReference, ::testing::Range<size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<size_t> &info) {
                           std::string n = cases()[info.param].name;
                           for (char &ch : n)
                             if (!isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           while (!n.empty() && n.back() == '_')
                             n.pop_back();
                           return n;
                         });
