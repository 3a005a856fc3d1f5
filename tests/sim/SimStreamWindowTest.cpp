// A mapped schedule larger than the memory is read page by page, and the simulator asks
// for each rank's next records and successor entries ahead of it
// (SimOptions::streamWindow, docs/performance.md). That is advice to the system only: the
// results must be the same with any window, including one past the end of the file.
#include "tests/goal/GoalTestUtil.h"
#include "tests/support/TestUtil.h"

#include "backends/sim/Simulator.h"
#include "compiler/frontends/goal/GoalBinaryReader.h"
#include "support/Diagnostics.h"

#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/raw_ostream.h>

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

TEST(SimStreamWindow, TheResultsDoNotDependOnTheWindow) {
  // 16 ranks, 3 ring allreduces of 64 KiB: 2 * 15 * 3 = 90 steps of send, recv, calc.
  Parsed p = parseGoalText(ringAllreduceText(16, 3, 65536), "ring.goal");
  ASSERT_TRUE(p.schedule) << p.diags;
  std::string dir = makeTempDir("sim-window");
  writeFile(dir + "/ring.bin", toBinary(*p.schedule));
  // Mapped, as the driver reads a binary schedule (the file is 150 KB).
  auto file = llvm::MemoryBuffer::getFile(dir + "/ring.bin", /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  ASSERT_TRUE(file);
  std::string diagsText;
  llvm::raw_string_ostream os(diagsText);
  DiagEngine diags(os);
  std::optional<Schedule> s =
      goal::readBinaryGoal(diags, std::shared_ptr<const llvm::MemoryBuffer>(std::move(*file)));
  ASSERT_TRUE(s) << diagsText;
  ASSERT_TRUE(s->isPacked());
  ASSERT_FALSE(s->viewedBytes().empty());

  // Both engines (LogGOPSim's and ATLAHS's).
  for (sim::Engine engine : {sim::Engine::Lgs, sim::Engine::Atlahs}) {
    sim::SimOptions o;
    o.engine = engine;
    o.streamWindow = 0;
    sim::SimResult in = sim::simulate(p.schedule->packedCopy(), o);   // in memory: no view
    ASSERT_TRUE(in.finished());
    EXPECT_EQ(in.readAheadRequests, 0u);
    for (uint64_t window : {uint64_t(4096), uint64_t(8192), uint64_t(1) << 20}) {
      o.streamWindow = window;
      sim::SimResult r = sim::simulate(*s, o);
      EXPECT_TRUE(r.finished()) << window;
      EXPECT_EQ(r.makespan, in.makespan) << window;
      EXPECT_EQ(r.hostFinish, in.hostFinish) << window;
      EXPECT_EQ(r.cpuFinish, in.cpuFinish) << window;
      EXPECT_EQ(r.messages, in.messages) << window;
      EXPECT_EQ(r.opsDone, s->numOps()) << window;
      // A window larger than the file (150 KB) is asked for once per rank and stream:
      // 16 ranks x (records, successor entries). Smaller ones are asked for again as
      // each rank moves through its 270 records of 39 bytes (10.5 KB).
      if (window > s->viewedBytes().size())
        EXPECT_EQ(r.readAheadRequests, 32u);
      else
        EXPECT_GT(r.readAheadRequests, 32u) << window;
    }
  }
}
