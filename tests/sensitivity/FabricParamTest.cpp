// -emit=sensitivity with a fabric: -param=link:NAME and -param=switch vary the latency of
// one link class (or of every switch) along the paths -sim-model=topo takes. The curve
// must equal the simulator run on the same fabric with that latency changed (a blueprint
// parameter, or -switch-latency) at every value, on a contention-free schedule.
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace infracc::test;

namespace {

// A token passed around four ranks, 1000 bytes a hop: one message in flight at a time,
// so no two operations ever compete for a cpu or a nic. Ranks are placed linearly; on
// clos radix 4 with one-NIC hosts, two hosts share a ToR: 0->1 and 2->3 stay under their
// ToR (2 tier_0_link, 1 switch), 1->2 and 3->0 cross the spine (2 tier_0_link,
// 2 tier_1_link, 3 switches).
const char *kTokenRing = R"(num_ranks 4
rank 0 {
s: send 1000b to 1 tag 0
r: recv 1000b from 3 tag 0
r requires s
}
rank 1 {
r: recv 1000b from 0 tag 0
s: send 1000b to 2 tag 0
s requires r
}
rank 2 {
r: recv 1000b from 1 tag 0
s: send 1000b to 3 tag 0
s requires r
}
rank 3 {
r: recv 1000b from 2 tag 0
s: send 1000b to 0 tag 0
s requires r
}
)";

const std::string kFabric = "clos:radix=4,levels=2,host=simple_host,lat0=100ns,lat1=300ns";

struct Segment {
  int64_t start, end, tStart, slope;
};

std::vector<Segment> segments(const std::string &csv) {
  std::vector<Segment> out;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "start,end,T_start,slope");
  while (std::getline(in, line)) {
    Segment s{};
    char c1, c2, c3;
    std::istringstream f(line);
    f >> s.start >> c1 >> s.end >> c2 >> s.tStart >> c3 >> s.slope;
    EXPECT_TRUE(f && c1 == ',' && c2 == ',' && c3 == ',') << line;
    out.push_back(s);
  }
  return out;
}

int64_t curveAt(const std::vector<Segment> &curve, int64_t x) {
  for (const Segment &s : curve)
    if (s.start <= x && x <= s.end)
      return s.tStart + s.slope * (x - s.start);
  ADD_FAILURE() << "no segment holds " << x;
  return -1;
}

int64_t simulated(const std::vector<std::string> &args) {
  RunResult r = runInfracc(args);
  EXPECT_EQ(r.status, 0) << r.err;
  int64_t t = maximumFinishingTime(r.out);
  EXPECT_GE(t, 0) << r.out;
  return t;
}

std::string tokenRingFile() {
  std::string dir = makeTempDir("sens-fabric");
  writeFile(dir + "/ring.goal", kTokenRing);
  return dir + "/ring.goal";
}

} // namespace

TEST(SensitivityFabric, LinkClassLatencyMatchesTheSimulator) {
  std::string goal = tokenRingFile();
  RunResult r = runInfracc({"-fabric=" + kFabric, goal, "-emit=sensitivity",
                            "-param=link:tier_1_link", "-range=0:2us", "-format=csv"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<Segment> curve = segments(r.out);
  ASSERT_EQ(curve.size(), 1u) << r.out;
  // Two messages cross the spine, each over two tier_1_link: four traversals.
  EXPECT_EQ(curve[0].slope, 4);
  EXPECT_EQ(curve[0].start, 0);
  EXPECT_EQ(curve[0].end, 2000);
  for (int64_t x : {0, 1, 300, 999, 2000}) {
    std::string fabric = "clos:radix=4,levels=2,host=simple_host,lat0=100ns,lat1=" +
                         std::to_string(x) + "ns";
    EXPECT_EQ(curveAt(curve, x), simulated({"-fabric=" + fabric, goal, "-emit=sim",
                                             "-sim-batch"}))
        << "tier_1_link latency " << x << " ns";
  }
}

TEST(SensitivityFabric, HostLinkClassCountsEveryMessage) {
  std::string goal = tokenRingFile();
  RunResult r = runInfracc({"-fabric=" + kFabric, goal, "-emit=sensitivity",
                            "-param=link:tier_0_link", "-range=0:1us", "-format=csv"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<Segment> curve = segments(r.out);
  ASSERT_EQ(curve.size(), 1u) << r.out;
  EXPECT_EQ(curve[0].slope, 8);   // four messages, each from a host and into a host
  for (int64_t x : {0, 100, 750}) {
    std::string fabric = "clos:radix=4,levels=2,host=simple_host,lat0=" + std::to_string(x) +
                         "ns,lat1=300ns";
    EXPECT_EQ(curveAt(curve, x), simulated({"-fabric=" + fabric, goal, "-emit=sim",
                                             "-sim-batch"}))
        << "tier_0_link latency " << x << " ns";
  }
}

TEST(SensitivityFabric, SwitchLatencyMatchesTheSimulator) {
  std::string goal = tokenRingFile();
  RunResult r = runInfracc({"-fabric=" + kFabric, goal, "-emit=sensitivity", "-param=switch",
                            "-range=0:1us", "-format=csv"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<Segment> curve = segments(r.out);
  ASSERT_EQ(curve.size(), 1u) << r.out;
  EXPECT_EQ(curve[0].slope, 8);   // 1 + 3 + 1 + 3 switches on the ring's four hops
  for (int64_t x : {0, 50, 1000}) {
    EXPECT_EQ(curveAt(curve, x),
              simulated({"-fabric=" + kFabric, goal, "-emit=sim", "-sim-batch",
                         "-switch-latency=" + std::to_string(x) + "ns"}))
        << "switch latency " << x << " ns";
  }
}

TEST(SensitivityFabric, TextReportNamesWhatTheSlopeCounts) {
  std::string goal = tokenRingFile();
  RunResult r = runInfracc({"-fabric=" + kFabric, goal, "-emit=sensitivity",
                            "-param=link:tier_1_link", "-range=0:2us"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("traversals of tier_1_link links on the critical path"),
            std::string::npos)
      << r.out;
  // A parameter with a long name is called x in the increments (T(0) = 13116 ns, slope 4).
  EXPECT_NE(r.out.find("at x0 + dx, x = link:tier_1_link: T, its increase over T(x0)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  dx=20 ns: T = 13196 ns, +0.6099%, slope 4"), std::string::npos) << r.out;
}

TEST(SensitivityFabric, Errors) {
  std::string goal = tokenRingFile();
  RunResult r = runInfracc({"-fabric=" + kFabric, goal, "-emit=sensitivity",
                            "-param=link:tier_1_lnk"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -param=link:tier_1_lnk: the fabric has no link of that "
                   "name (its links: ic, pcie, tier_0_link, tier_1_link); did you mean 'tier_1_link'?\n");
  r = runInfracc({goal, "-emit=sensitivity", "-param=switch"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -param=switch needs a fabric and -sim-model=topo (message "
                   "latencies from the fabric's paths)\n");
  r = runInfracc({"-fabric=" + kFabric, goal, "-emit=sensitivity", "-param=link:"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err,
            "infracc: error: -param=link: needs a link name, e.g. -param=link:tier_1_link\n");
}

TEST(SensitivityFabric, PerWireLatencyStudyOnADragonfly) {
  // LLAMP's FEC question on a dragonfly: what do +100 ns on every wire cost? The slope of
  // each link class is its traversals on the critical path; with one segment per class
  // over the range, the sum of slopes times 100 ns is the simulator's answer.
  const std::string base = "dragonfly:a=4,p=2,h=2,host=simple_host";
  const std::vector<std::string> placed = {sourcePath("examples/ring-allreduce-16.goal"),
                                           "-place=random", "-seed=7"};
  auto with = [&](std::vector<std::string> args, const std::string &lat) {
    args.insert(args.begin(), "-fabric=" + base + "," + lat);
    args.insert(args.end(), placed.begin(), placed.end());
    return args;
  };
  const std::string lat = "host_lat=10ns,local_lat=50ns,global_lat=200ns";
  const int64_t before = simulated(with({"-emit=sim", "-sim-batch"}, lat));
  const int64_t after = simulated(
      with({"-emit=sim", "-sim-batch"}, "host_lat=110ns,local_lat=150ns,global_lat=300ns"));
  // Messages on the critical path, from the fabric-less analysis of the same ring
  // (-param=L): each crosses exactly two host links, one out and one in.
  RunResult l = runInfracc({placed[0], "-emit=sensitivity", "-format=csv"});
  ASSERT_EQ(l.status, 0) << l.err;
  const std::vector<Segment> lCurve = segments(l.out);
  ASSERT_EQ(lCurve.size(), 1u) << l.out;
  int64_t traversals = 0;
  for (auto [cls, latency] : {std::pair{"host_switch_link", 10}, std::pair{"intra_switch_link", 50},
                              std::pair{"inter_switch_link", 200}}) {
    RunResult r = runInfracc(with({"-emit=sensitivity", std::string("-param=link:") + cls,
                                   "-range=0:1us", "-format=csv"},
                                  lat));
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<Segment> curve = segments(r.out);
    ASSERT_EQ(curve.size(), 1u) << cls << "\n" << r.out;
    // At the class's own latency every curve is the simulator's time of the base fabric.
    EXPECT_EQ(curveAt(curve, latency), before) << cls;
    if (std::string(cls) == "host_switch_link") {
      EXPECT_EQ(curve[0].slope, 2 * lCurve[0].slope);
    }
    traversals += curve[0].slope;
  }
  EXPECT_EQ(after - before, traversals * 100);
}
