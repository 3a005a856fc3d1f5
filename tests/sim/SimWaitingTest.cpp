// Many operations waiting for one CPU or NIC at once (what a storage service or a traffic
// generator produces): LogGOPSim retries every one of them whenever the resource frees,
// the simulator parks them instead (docs/sim.md, "Performance"); the times must not change.
//
// How the numbers were measured: the schedule below, written out as GOAL text, through
// `txt2bin -i storm.goal -o storm.bin; LogGOPSim -f storm.bin FLAGS` with spcl/LogGOPSim
// 76451de (-O2).
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <fmt/format.h>

using namespace infracc::test;

namespace {

// Rank 0: 400 sends at once (1, 700, 5000 and 70000 bytes, the last rendezvous) to ranks
// 1-5 over two cpus and two nics, 50 calcs on cpu 0, and 100 receives; rank 1 sends
// those 100 messages back at once.
std::string storm() {
  const uint64_t size[] = {1, 700, 5000, 70000}, back[] = {64, 9000};
  std::string g = "num_ranks 6\n\nrank 0 {\n";
  int l = 0;
  for (int k = 0; k < 400; ++k)
    g += fmt::format("l{}: send {}b to {} tag {} cpu {} nic {}\n", ++l, size[k % 4], 1 + k % 5, k,
                     k % 2, (k / 2) % 2);
  for (int j = 0; j < 50; ++j)
    g += fmt::format("l{}: calc 3000 cpu 0\n", ++l);
  for (int j = 0; j < 100; ++j)
    g += fmt::format("l{}: recv {}b from 1 tag {} cpu {}\n", ++l, back[j % 2], 1000 + j, j % 2);
  g += "}\n";
  for (int r = 1; r < 6; ++r) {
    g += fmt::format("\nrank {} {{\n", r);
    l = 0;
    for (int k = 0; k < 400; ++k)
      if (1 + k % 5 == r)
        g += fmt::format("l{}: recv {}b from 0 tag {} cpu {}\n", ++l, size[k % 4], k, k % 2);
    if (r == 1)
      for (int j = 0; j < 100; ++j)
        g += fmt::format("l{}: send {}b to 0 tag {} nic {}\n", ++l, back[j % 2], 1000 + j, j % 2);
    g += "}\n";
  }
  return g;
}

} // namespace

TEST(SimWaiting, StormMatchesLogGOPSim) {
  std::string dir = makeTempDir("storm");
  writeFile(dir + "/storm.goal", storm());
  struct Case {
    std::vector<std::string> flags;
    const char *hosts;
  };
  const Case cases[] = {
      {{}, "Host 0: 44781806\nHost 1: 45203300\nHost 2: 44751312\nHost 3: 44299324\n"
           "Host 4: 43878330\nHost 5: 44782306\n"},
      {{"-sim-o=0", "-g=0"}, "Host 0: 44581306\nHost 1: 45001300\nHost 2: 44551312\n"
                             "Host 3: 44101324\nHost 4: 43681330\nHost 5: 44581306\n"},
      {{"-g=0", "-G=0"}, "Host 0: 600000\nHost 1: 304000\nHost 2: 301000\nHost 3: 302500\n"
                         "Host 4: 302500\nHost 5: 304000\n"},
      {{"-O=3"}, "Host 0: 44993023\nHost 1: 45207020\nHost 2: 44755032\nHost 3: 44303044\n"
                 "Host 4: 43882050\nHost 5: 44786026\n"},
  };
  for (const Case &c : cases) {
    std::vector<std::string> args = {dir + "/storm.goal", "-emit=sim"};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    RunResult r = runInfracc(args);
    ASSERT_EQ(r.status, 0) << r.err;
    const size_t at = r.out.find("Host 0:");
    ASSERT_NE(at, std::string::npos) << r.out;
    EXPECT_EQ(r.out.substr(at), c.hosts);
  }
}
