// A GOAL file of a few hundred thousand operations, generated here, read in-process
// and through the driver, verified and written back.
#include "tests/goal/GoalTestUtil.h"
#include "tests/support/TestUtil.h"

#include "compiler/frontends/goal/GoalBinaryReader.h"
#include "passes/Verify.h"
#include "support/Diagnostics.h"

#include <llvm/Support/MemoryBuffer.h>

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

TEST(GoalScale, RingAllreduceOf338688Ops) {
  // 64 ranks, 14 ring allreduces: 2 * 63 * 14 = 1764 steps of send, recv, calc per rank.
  std::string text = ringAllreduceText(64, 14, 65536);
  Parsed p = parseGoalText(text, "ring.goal");
  ASSERT_TRUE(p.schedule) << p.diags;
  const Schedule &s = *p.schedule;
  EXPECT_EQ(s.numOps(), 64u * 1764 * 3);
  EXPECT_EQ(s.numOps(), 338688u);
  EXPECT_EQ(s.numDependencies(), 64u * (1763 + 1764));
  // Rank 63, step 1763 (the last): l5290 send to 0, l5291 recv from 62, l5292 calc.
  uint32_t g = s.globalIndex(63, 5289);
  EXPECT_EQ(s.label(g), "l5290");
  EXPECT_EQ(s.kind(g), OpKind::Send);
  EXPECT_EQ(s.peer(g), 0u);
  EXPECT_EQ(s.tag(g), 1763u);
  EXPECT_EQ(s.size(g), 65536u);
  EXPECT_EQ(s.numSuccessors(g), 0u);
  EXPECT_EQ(s.kind(g + 1), OpKind::Recv);
  EXPECT_EQ(s.peer(g + 1), 62u);
  EXPECT_EQ(s.successor(g + 1, 0), 5291u);
  EXPECT_EQ(s.kind(g + 2), OpKind::Calc);
  EXPECT_EQ(s.successor(g - 1, 0), 5289u);   // the previous calc releases this send
  EXPECT_EQ(s.rankOf(g), 63u);

  std::string diagsText;
  llvm::raw_string_ostream os(diagsText);
  DiagEngine diags(os);
  EXPECT_TRUE(verifySchedule(s, diags, "ring.goal", VerifyOptions()));
  os.flush();
  EXPECT_EQ(diagsText, "");

  // Binary and back.
  std::string bin = toBinary(s);
  auto buf = llvm::MemoryBuffer::getMemBuffer(bin, "ring.bin", false);
  std::optional<Schedule> back = goal::readBinaryGoal(diags, std::move(buf));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->numOps(), s.numOps());
  EXPECT_EQ(toBinary(*back), bin);

  // Through the driver: the file read through its memory map.
  std::string dir = makeTempDir("goal-scale");
  writeFile(dir + "/ring.goal", text);
  RunResult r = runInfracc({dir + "/ring.goal", "-emit=goal-bin", "-o", dir + "/ring.bin"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(readFile(dir + "/ring.bin"), bin);
}
