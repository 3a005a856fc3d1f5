// The pictures through the infracc binary: targets, options, refusals, and the
// timeline of a simulation.
#include "tests/support/TestUtil.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/FileSystem.h>

#include <gtest/gtest.h>

#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace infracc::test;

namespace {

const std::string PingPong = sourcePath("tests/visualize/inputs/pingpong.goal");
const std::string TwoRacks = sourcePath("tests/visualize/inputs/two-racks.yaml");

} // namespace

TEST(VisualizeCli, ScheduleIsTheDefaultPictureOfAWorkload) {
  RunResult r = runInfracc({PingPong, "-emit=dot"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(compareGolden("visualize/pingpong-schedule.dot", r.out), "");
}

TEST(VisualizeCli, ScheduleRefusedAboveMaxOps) {
  RunResult r = runInfracc({PingPong, "-emit=svg", "-max-ops=4"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "infracc: error: the schedule has 5 ops, more than -max-ops=4; a picture that "
                   "large cannot be read (raise -max-ops to draw it anyway)\n");
}

TEST(VisualizeCli, OverviewCarriesTheFabricDigest) {
  RunResult digest = runInfracc({TwoRacks, "-emit=digest"});
  ASSERT_EQ(digest.status, 0) << digest.err;
  RunResult r = runInfracc({TwoRacks, "-emit=dot"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string hex = llvm::StringRef(digest.out).trim().str();
  ASSERT_EQ(hex.size(), 64u) << digest.out;
  EXPECT_NE(r.out.find("digest sha256:" + hex), std::string::npos);
  EXPECT_EQ(compareGolden("visualize/two-racks-overview.dot", r.out), "");
}

TEST(VisualizeCli, WithFabricAndWorkloadTheFabricIsDrawnUnlessAsked) {
  RunResult fabric = runInfracc({TwoRacks, PingPong, "-emit=dot"});
  ASSERT_EQ(fabric.status, 0) << fabric.err;
  EXPECT_TRUE(llvm::StringRef(fabric.out).starts_with("digraph \"two-racks\""));
  RunResult sched = runInfracc({TwoRacks, PingPong, "-emit=dot", "-view=schedule"});
  ASSERT_EQ(sched.status, 0) << sched.err;
  EXPECT_TRUE(llvm::StringRef(sched.out).starts_with("digraph schedule"));
}

TEST(VisualizeCli, ViewsNeedTheirInput) {
  RunResult r = runInfracc({TwoRacks, "-emit=svg", "-view=schedule"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -view=schedule needs a workload (e.g. a .goal file)\n");
  r = runInfracc({PingPong, "-emit=svg", "-view=overview"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -view=overview needs a fabric (an InfraGraph .yaml/.json "
                   "file or -fabric=<blueprint>)\n");
  r = runInfracc({TwoRacks, "-emit=svg", "-view=bogus"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: unknown view 'bogus' for -view; valid views are: overview, "
                   "device:NAME, full, schedule\n");
}

TEST(VisualizeCli, FullViewBeyondMaxNodesDrawsTheOverview) {
  std::string dir = makeTempDir("viz");
  std::string out = dir + "/full.svg";
  // 6 servers x 2 nodes + 3 switches x 6 nodes = 30.
  RunResult r = runInfracc({TwoRacks, "-emit=svg", "-view=full", "-max-nodes=20", "-o", out});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "infracc: warning: -view=full would draw 30 nodes, more than -max-nodes=20; "
                   "drawing the overview instead (9 nodes). Drill down with "
                   "-view=device:gpu_server (2 nodes), -view=device:tor_switch (6 nodes), or "
                   "raise -max-nodes\n");
  RunResult overview = runInfracc({TwoRacks, "-emit=dot"});
  RunResult fallback = runInfracc({TwoRacks, "-emit=dot", "-view=full", "-max-nodes=20"});
  // The same picture as the overview, but for the line in the title.
  EXPECT_EQ(llvm::count(fallback.out, '\n'), llvm::count(overview.out, '\n'));
  EXPECT_NE(fallback.out.find("-view=full would draw 30 nodes (more than -max-nodes=20): this "
                              "is the overview"),
            std::string::npos);
  EXPECT_NE(readFile(out).find("<svg"), std::string::npos);
  // -Werror makes the fallback an error: no file.
  llvm::sys::fs::remove(out);
  r = runInfracc({TwoRacks, "-emit=svg", "-view=full", "-max-nodes=20", "-Werror", "-o", out});
  EXPECT_EQ(r.status, 1);
  EXPECT_FALSE(llvm::sys::fs::exists(out));
}

TEST(VisualizeCli, PngAndPdfFiles) {
  std::string dir = makeTempDir("viz");
  for (const char *format : {"png", "pdf"}) {
    std::string out = dir + "/fabric." + format;
    RunResult r = runInfracc({TwoRacks, std::string("-emit=") + format, "-o", out});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    std::string data = readFile(out);
    EXPECT_TRUE(llvm::StringRef(data).starts_with(format == std::string("png") ? "\x89PNG" : "%PDF"));
  }
}

TEST(VisualizeCli, DeviceView) {
  RunResult r = runInfracc({TwoRacks, "-emit=svg", "-view=device:tor"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("<svg"), std::string::npos);
  r = runInfracc({TwoRacks, "-emit=svg", "-view=device:"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -view=device: needs a device name, e.g. -view=device:server\n");
}

// The ping-pong under LogGOPSim's defaults ends at 11184 ns on rank 0 and 7142 ns on
// rank 1 (measured with LogGOPSim 76451de: txt2bin + LogGOPSim -f; with -L 5000 rank 0
// ends at 16184).
TEST(VisualizeCli, TimelineOfASimulation) {
  RunResult r = runInfracc({PingPong, "-emit=timeline"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("makespan 11184 ns at rank 0"), std::string::npos);
  EXPECT_EQ(compareGolden("visualize/pingpong-timeline.svg", r.out), "");
  RunResult slow = runInfracc({PingPong, "-emit=timeline", "-L=5000"});
  ASSERT_EQ(slow.status, 0) << slow.err;
  EXPECT_NE(slow.out.find("makespan 16184 ns at rank 0"), std::string::npos);
  EXPECT_NE(slow.out.find("L=5000 o=1500"), std::string::npos);
}

TEST(VisualizeCli, TimelineNeedsAWorkload) {
  RunResult r = runInfracc({TwoRacks, "-emit=timeline"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -emit=timeline needs a workload (e.g. a .goal file)\n");
}

TEST(VisualizeCli, RefusesBinaryOutputToATerminal) {
  std::string binary = infraccBinary();
  int master = -1, slave = -1;
  ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  int err[2];
  ASSERT_EQ(pipe(err), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(slave, STDOUT_FILENO);
    dup2(err[1], STDERR_FILENO);
    close(master);
    close(err[0]);
    execl(binary.c_str(), binary.c_str(), TwoRacks.c_str(), "-emit=png", (char *)nullptr);
    _exit(127);
  }
  close(slave);
  close(err[1]);
  std::string stderrText = infracc::test::readToEnd(err[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  close(master);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_EQ(stderrText, "infracc: error: -emit=png writes binary data and standard output is a "
                        "terminal; name a file with -o (e.g. -o picture.png)\n");
}
