// The progress bar: its format, and that it stays silent unless enabled.
#include "support/Progress.h"
#include "tests/support/TestUtil.h"

#include <llvm/Support/raw_ostream.h>

#include <gtest/gtest.h>

#include <algorithm>

using namespace infracc;

TEST(Progress, RendersBarPercentAndRate) {
  std::string sink;
  llvm::raw_string_ostream os(sink);
  Progress p("reading x.goal", 200'000'000, "bytes", true, os);
  EXPECT_EQ(p.render(50'000'000, 0.5),
            "reading x.goal [#######                       ]  25% 50.0 MB of 200.0 MB, 100.0 MB/s");
  EXPECT_EQ(p.render(200'000'000, 0),
            "reading x.goal [##############################] 100% 200.0 MB of 200.0 MB");
  Progress ops("simulating", 0, "events", true, os);
  EXPECT_EQ(ops.render(1500, 3.0), "simulating 1500, 500 events/s");
}

TEST(Progress, DetailReplacesTheRate) {
  std::string sink;
  llvm::raw_string_ostream os(sink);
  {
    Progress p("simulating", 100, "ops", true, os);
    p.setInterval(std::chrono::milliseconds(0));
    EXPECT_EQ(p.render(50, 2.0, "1.0 M events/s, simulated time 7 ns"),
              "simulating [###############               ]  50% 50 of 100 ops, 1.0 M events/s, "
              "simulated time 7 ns");
    p.update(40, [](double) { return std::string("simulated time 3 ns"); });
    p.finish([](double) { return std::string("simulated time 9 ns"); });
  }
  os.flush();
  EXPECT_NE(sink.find("40 of 100 ops, simulated time 3 ns"), std::string::npos);
  EXPECT_NE(sink.find("simulated time 9 ns"), std::string::npos);
}

TEST(Progress, DrawsOnOneLineAndEndsIt) {
  std::string sink;
  llvm::raw_string_ostream os(sink);
  {
    Progress p("reading", 100, "items", true, os);
    p.setInterval(std::chrono::milliseconds(0));
    p.update(10);
    p.update(60);
    p.finish();
    p.finish();   // only once
  }
  os.flush();
  // Each redraw returns to the start of the line and erases its rest.
  EXPECT_EQ(sink.find("\rreading [###"), 0u);
  EXPECT_NE(sink.find("  10% 10 of 100"), std::string::npos);
  EXPECT_NE(sink.find("  60% 60 of 100"), std::string::npos);
  EXPECT_EQ(std::count(sink.begin(), sink.end(), '\r'), 3);
  EXPECT_EQ(std::count(sink.begin(), sink.end(), '\n'), 1);
  EXPECT_EQ(sink.back(), '\n');
}

TEST(Progress, DisabledPrintsNothing) {
  std::string sink;
  llvm::raw_string_ostream os(sink);
  {
    Progress p("reading", 100, "bytes", false, os);
    p.setInterval(std::chrono::milliseconds(0));
    p.update(50);
    p.finish();
  }
  os.flush();
  EXPECT_EQ(sink, "");
}

TEST(Progress, OffWhenStderrIsNotATerminal) {
  // The tests capture stderr in a file, so -progress must not draw anything.
  std::string dir = infracc::test::makeTempDir("progress");
  infracc::test::writeFile(dir + "/x.goal", "num_ranks 1\nrank 0 {\nl1: calc 5\n}\n");
  infracc::test::RunResult r =
      infracc::test::runInfracc({dir + "/x.goal", "-emit=goal", "-progress"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "num_ranks 1\n\nrank 0 {\nl1: calc 5\n}\n");
  // Nor while simulating.
  r = infracc::test::runInfracc({dir + "/x.goal", "-emit=sim", "-progress"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  EXPECT_NE(r.out.find("Host 0: 5\n"), std::string::npos);
}
