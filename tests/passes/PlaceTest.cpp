// The place pass: every policy on tests/passes/inputs/small_cluster.yaml (3 hosts of 2
// GPUs: endpoints host.0.xpu.0, host.0.xpu.1, host.1.xpu.0, ... in this order), the
// map file, and every error. Placements are read back with -emit=placement.
#include "tests/passes/PassTestUtil.h"

#include <gtest/gtest.h>

using namespace infracc::test;

namespace {

const char *Header = "# placement of 4 ranks of 'pairs4.goal' on 'small_cluster.yaml': rank "
                     "endpoint\n";

std::string placed(const PassDir &d, std::vector<std::string> extra) {
  std::vector<std::string> args{"small_cluster.yaml", "pairs4.goal", "-emit=placement"};
  args.insert(args.end(), extra.begin(), extra.end());
  RunResult r = d.run(args);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind(Header, 0), 0u) << r.out;
  return r.out.substr(std::string(Header).size());
}

} // namespace

TEST(Place, LinearIsTheEndpointOrder) {
  PassDir d({"small_cluster.yaml", "pairs4.goal"});
  // The default pipeline of -emit=placement places with the default policy, linear.
  EXPECT_EQ(placed(d, {}), "0 host.0.xpu.0\n1 host.0.xpu.1\n2 host.1.xpu.0\n3 host.1.xpu.1\n");
  EXPECT_EQ(placed(d, {"-passes=place", "-place=linear"}),
            "0 host.0.xpu.0\n1 host.0.xpu.1\n2 host.1.xpu.0\n3 host.1.xpu.1\n");
}

TEST(Place, PackedFillsAHostBeforeTheNext) {
  PassDir d({"small_cluster.yaml", "pairs4.goal"});
  EXPECT_EQ(placed(d, {"-place=packed"}),
            "0 host.0.xpu.0\n1 host.0.xpu.1\n2 host.1.xpu.0\n3 host.1.xpu.1\n");
  // One GPU per host: three usable endpoints; -oversubscribe wraps around.
  EXPECT_EQ(placed(d, {"-place=packed", "-place-per-host=1", "-oversubscribe"}),
            "0 host.0.xpu.0\n1 host.1.xpu.0\n2 host.2.xpu.0\n3 host.0.xpu.0\n");
}

TEST(Place, RoundRobinTakesOneEndpointPerHostInTurn) {
  PassDir d({"small_cluster.yaml", "pairs4.goal"});
  EXPECT_EQ(placed(d, {"-place=round-robin"}),
            "0 host.0.xpu.0\n1 host.1.xpu.0\n2 host.2.xpu.0\n3 host.0.xpu.1\n");
}

TEST(Place, RandomIsAShuffleOfTheEndpoints) {
  // Expected values from tests/passes/tools/mt19937_64.py 6, an independent
  // implementation of std::mt19937_64 and the documented shuffle: seed 1 gives the
  // endpoint order 1 3 0 4 5 2, seed 2 gives 3 4 2 1 5 0, seed 7 gives 5 1 4 2 0 3.
  PassDir d({"small_cluster.yaml", "pairs4.goal"});
  EXPECT_EQ(placed(d, {"-place=random"}),   // -seed defaults to 1
            "0 host.0.xpu.1\n1 host.1.xpu.1\n2 host.0.xpu.0\n3 host.2.xpu.0\n");
  EXPECT_EQ(placed(d, {"-place=random", "-seed=2"}),
            "0 host.1.xpu.1\n1 host.2.xpu.0\n2 host.1.xpu.0\n3 host.0.xpu.1\n");
  EXPECT_EQ(placed(d, {"-place=random", "-seed=7"}),
            "0 host.2.xpu.1\n1 host.0.xpu.1\n2 host.2.xpu.0\n3 host.1.xpu.0\n");
  // With one endpoint per host the shuffle is over host.0.xpu.0, host.1.xpu.0,
  // host.2.xpu.0 (mt19937_64.py 3: seed 2 gives 2 1 0).
  RunResult r = d.run({"small_cluster.yaml", "pairs4.goal", "-emit=placement", "-place=random",
                       "-seed=2", "-place-per-host=1", "-oversubscribe"});
  EXPECT_EQ(r.out.substr(std::string(Header).size()),
            "0 host.2.xpu.0\n1 host.1.xpu.0\n2 host.0.xpu.0\n3 host.2.xpu.0\n");
}

TEST(Place, MapFileGivesEveryRankItsEndpoint) {
  PassDir d({"small_cluster.yaml", "pairs4.goal"});
  d.write("map.txt", "# rank endpoint\n3 host.0.xpu.0\n\n0 host.2.xpu.1   # comment\n"
                     "  1\thost.1.xpu.0\n2 host.0.xpu.1\n");
  EXPECT_EQ(placed(d, {"-place-map=map.txt"}),
            "0 host.2.xpu.1\n1 host.1.xpu.0\n2 host.0.xpu.1\n3 host.0.xpu.0\n");
  // The output of -emit=placement is a map file.
  d.write("again.txt", placed(d, {"-place=round-robin"}));
  EXPECT_EQ(placed(d, {"-place-map=again.txt"}),
            "0 host.0.xpu.0\n1 host.1.xpu.0\n2 host.2.xpu.0\n3 host.0.xpu.1\n");
  EXPECT_EQ(placed(d, {"-place=map", "-place-map=map.txt"}),
            "0 host.2.xpu.1\n1 host.1.xpu.0\n2 host.0.xpu.1\n3 host.0.xpu.0\n");
}

TEST(Place, StatisticsCountRanksAndHosts) {
  PassDir d({"small_cluster.yaml", "pairs4.goal"});
  RunResult r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place", "-emit=placement",
                       "-place=round-robin", "-stats", "-disable-verify"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.err.find("3 place - Hosts holding at least one rank\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("4 place - Ranks placed on the fabric\n"), std::string::npos) << r.err;
}

TEST(PlaceErrors, TooManyRanks) {
  PassDir d({"small_cluster.yaml", "pairs4.goal"});
  RunResult r = d.run({"small_cluster.yaml", "pairs4.goal", "-emit=placement", "-place=packed",
                       "-place-per-host=1"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "pairs4.goal: error: the workload has 4 ranks but the fabric "
                   "'small_cluster.yaml' has only 3 usable endpoints (6 xpus, at most 1 per host "
                   "with -place-per-host=1); give a larger fabric, or -oversubscribe to put "
                   "several ranks on one endpoint\n");
  std::string seven = "num_ranks 7\n";
  for (int i = 0; i < 7; ++i)
    seven += "\nrank " + std::to_string(i) + " {\nl1: calc 1\n}\n";
  d.write("seven.goal", seven);
  r = d.run({"small_cluster.yaml", "seven.goal", "-emit=placement"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "seven.goal: error: the workload has 7 ranks but the fabric "
                   "'small_cluster.yaml' has only 6 endpoints (xpus); give a larger fabric, or "
                   "-oversubscribe to put several ranks on one endpoint\n");
  r = d.run({"small_cluster.yaml", "seven.goal", "-emit=placement", "-oversubscribe"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("\n6 host.0.xpu.0\n"), std::string::npos) << r.out;
}

TEST(PlaceErrors, Usage) {
  PassDir d({"small_cluster.yaml", "pairs4.goal"});
  RunResult r = d.run({"pairs4.goal", "-passes=place", "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: the place pass needs a fabric (an InfraGraph .yaml/.json "
                   "file or -fabric=<blueprint>) to place ranks on\n");
  r = d.run({"small_cluster.yaml", "-passes=place", "-emit=stats"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: the place pass needs a workload (e.g. a .goal file)\n");
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place,place", "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: the schedule is already placed or grouped (by merge-jobs, "
                   "remap-gpus or an earlier place); run place once, before the passes that "
                   "regroup ranks\n");
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=remap-gpus,place", "-gpus-per-node=2",
             "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: the schedule is already placed or grouped (by merge-jobs, "
                   "remap-gpus or an earlier place); run place once, before the passes that "
                   "regroup ranks\n");
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place", "-place=map", "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -place=map needs -place-map=<file> (lines 'rank "
                   "endpoint-name')\n");
  d.write("map.txt", "0 host.0.xpu.0\n");
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place", "-place=packed",
             "-place-map=map.txt", "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -place-map gives the placement; it cannot be combined with "
                   "-place=packed\n");
  r = d.run({"small_cluster.yaml", "pairs4.goal", "-passes=place", "-place=spread"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("Cannot find option named 'spread'!"), std::string::npos) << r.err;
}

TEST(PlaceErrors, MapFile) {
  PassDir d({"small_cluster.yaml", "pairs4.goal"});
  auto run = [&](const std::string &map) {
    d.write("map.txt", map);
    return d.run({"small_cluster.yaml", "pairs4.goal", "-place-map=map.txt", "-emit=placement"});
  };
  RunResult r = run("0 host.0.xpu.0\nx1 host.0.xpu.1\n1\n2 host.1.xpu.0 extra\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "map.txt:2:1: error: expected a rank number (0, 1, ...) at the start of the line, "
            "found 'x1'; lines are 'rank endpoint-name'\n"
            "x1 host.0.xpu.1\n"
            "^\n"
            "map.txt:3:2: error: rank 1 has no endpoint name; lines are 'rank endpoint-name' "
            "(e.g. '1 dgx.0.xpu.1')\n"
            "1\n"
            " ^\n"
            "map.txt:4:16: error: unexpected 'extra' after the endpoint name; lines are "
            "'rank endpoint-name' (comments start with #)\n"
            "2 host.1.xpu.0 extra\n"
            "               ^\n");

  r = run("0 host.0.xpu.0\n9 host.0.xpu.1\n1 host.7.xpu.0\n2 host.0.nvsw.0\n3 host.0.xpu.0\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "map.txt:2:1: error: rank 9 does not exist: the workload 'pairs4.goal' has ranks 0 "
            "to 3\n"
            "9 host.0.xpu.1\n"
            "^\n"
            "map.txt:3:3: error: 'host.7.xpu.0' is not a node of the fabric; endpoints are named "
            "like 'host.0.xpu.0' (the fabric's endpoints are xpus)\n"
            "1 host.7.xpu.0\n"
            "  ^\n"
            "map.txt:4:3: error: 'host.0.nvsw.0' is a switch, not an endpoint; ranks go on xpus "
            "(e.g. 'host.0.xpu.0')\n"
            "2 host.0.nvsw.0\n"
            "  ^\n"
            "map.txt:5:3: error: ranks 0 and 3 are both placed on 'host.0.xpu.0'; give every "
            "rank its own endpoint, or -oversubscribe\n"
            "3 host.0.xpu.0\n"
            "  ^\n"
            "map.txt:1:3: note: rank 0 placed here\n"
            "0 host.0.xpu.0\n"
            "  ^\n");

  r = run("0 host.0.xpu.0\n0 host.0.xpu.1\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err,
            "map.txt:2:1: error: rank 0 is placed twice\n"
            "0 host.0.xpu.1\n"
            "^\n"
            "map.txt:1:1: note: first placed here\n"
            "0 host.0.xpu.0\n"
            "^\n");

  r = run("1 host.0.xpu.0\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "map.txt: error: the map places no endpoint for ranks 0 and 2-3 (the "
                   "workload has 4 ranks); every rank needs a line\n");

  r = d.run({"small_cluster.yaml", "pairs4.goal", "-place-map=absent.txt", "-emit=placement"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "infracc: error: cannot read the placement map 'absent.txt': No such file or "
                   "directory\n");
}
