// The verifier: cycles, static send/recv matching (program order per source,
// destination and tag; wildcards through a maximum matching), notes, and how the
// driver runs it after every frontend.
#include "tests/goal/GoalTestUtil.h"
#include "tests/support/TestUtil.h"

#include "passes/Verify.h"
#include "support/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

namespace {

struct Verified {
  bool ok = false;
  std::string diags;
};

Verified verify(const std::string &text, VerifyOptions opts = {}) {
  Parsed p = parseGoalText(text);
  if (!p.schedule)
    return {false, "parse failed: " + p.diags};
  Verified v;
  llvm::raw_string_ostream os(v.diags);
  DiagEngine diags(os);
  diags.setErrorLimit(0);
  v.ok = verifySchedule(*p.schedule, diags, "v.goal", opts);
  os.flush();
  return v;
}

Verified verify(const Schedule &s) {
  Verified v;
  llvm::raw_string_ostream os(v.diags);
  DiagEngine diags(os);
  v.ok = verifySchedule(s, diags, "v.goal", VerifyOptions());
  os.flush();
  return v;
}

} // namespace

TEST(Verify, CleanSchedulesSayNothing) {
  Verified v = verify(ringAllreduceText(5, 2, 64));
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.diags, "");
  v = verify(readFile(sourcePath("tests/goal/inputs/irequires.goal")));
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.diags, "");
}

TEST(Verify, DependencyCycleListsItsOperations) {
  Verified v = verify("num_ranks 1\nrank 0 {\n"
                      "a: calc 1\nb: calc 2\nc: calc 3\nd: calc 4\ne: calc 5\n"
                      "b requires a\nc requires b\nd irequires c\nb requires d\ne requires d\n"
                      "}\n");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.diags, "v.goal: error: rank 0: dependency cycle: 'c' requires 'b', 'd' irequires "
                     "'c', 'b' requires 'd'\n"
                     "v.goal: note: rank 0: 4 of its 5 operations can never start (they are on or "
                     "behind a dependency cycle)\n");
}

TEST(Verify, SelfDependencyIsACycle) {
  Verified v = verify("num_ranks 2\nrank 0 {\n}\nrank 1 {\nl1: calc 1\nl1 irequires l1\n}\n");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.diags, "v.goal: error: rank 1: dependency cycle: 'l1' irequires 'l1'\n"
                     "v.goal: note: rank 1: 1 of its 1 operations can never start (they are on or "
                     "behind a dependency cycle)\n");
}

TEST(Verify, LongCyclesAreShortened) {
  std::string t = "num_ranks 1\nrank 0 {\n";
  for (int i = 1; i <= 12; ++i)
    t += "l" + std::to_string(i) + ": calc 1\n";
  for (int i = 1; i <= 12; ++i)
    t += "l" + std::to_string(i % 12 + 1) + " requires l" + std::to_string(i) + "\n";
  t += "}\n";
  Verified v = verify(t);
  EXPECT_EQ(messageLines(v.diags).front(),
            "v.goal: error: rank 0: dependency cycle: 'l2' requires 'l1', 'l3' requires 'l2', "
            "'l4' requires 'l3', 'l5' requires 'l4', 'l6' requires 'l5', 'l7' requires 'l6', 'l8' "
            "requires 'l7', 'l9' requires 'l8', 'l10' requires 'l9', 'l11' requires 'l10', ... (2 "
            "more)");
}

TEST(Verify, UnmatchedSendsAndRecvsInProgramOrder) {
  // Three sends from 0 to 1 with tag 1, two recvs: MPI pairs them in order, so the
  // third send is the one left over. The recv with tag 2 has no send at all.
  std::string text = "num_ranks 2\nrank 0 {\n"
                     "s1: send 8b to 1 tag 1\ns2: send 8b to 1 tag 1\ns3: send 8b to 1 tag 1\n"
                     "}\nrank 1 {\n"
                     "r1: recv 8b from 0 tag 1\nr2: recv 8b from 0 tag 2\nr3: recv 8b from 0 tag 1\n"
                     "}\n";
  Verified v = verify(text);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.diags, "v.goal: error: rank 1: recv 'r2' (8 bytes from rank 0, tag 2) has no "
                     "matching send\n"
                     "v.goal: error: rank 0: send 's3' (8 bytes to rank 1, tag 1) has no "
                     "matching recv in rank 1\n"
                     "v.goal: note: with -allow-unmatched these are warnings\n");
  VerifyOptions lenient;
  lenient.allowUnmatched = true;
  v = verify(text, lenient);
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.diags, "v.goal: warning: rank 1: recv 'r2' (8 bytes from rank 0, tag 2) has no "
                     "matching send\n"
                     "v.goal: warning: rank 0: send 's3' (8 bytes to rank 1, tag 1) has no "
                     "matching recv in rank 1\n");
}

TEST(Verify, MatchingDoesNotDependOnTheOrderOfTags) {
  // Rank 1 receives rank 0's tags in another order than they were sent, and rank 2's
  // in the same order, interleaved with rank 0's: every message has its partner.
  Verified v = verify("num_ranks 3\nrank 0 {\n"
                      "s1: send 8b to 1 tag 1\ns2: send 8b to 1 tag 2\ns3: send 8b to 1 tag 1\n"
                      "}\nrank 1 {\n"
                      "r1: recv 8b from 0 tag 2\nr2: recv 8b from 2 tag 5\n"
                      "r3: recv 8b from 0 tag 1\nr4: recv 8b from 2 tag 6\nr5: recv 8b from 0 tag 1\n"
                      "}\nrank 2 {\n"
                      "s1: send 8b to 1 tag 5\ns2: send 8b to 1 tag 6\n"
                      "}\n");
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.diags, "");
  // Same order up to a missing last recv, and a recv from a rank that sends nothing.
  v = verify("num_ranks 3\nrank 0 {\n"
             "s1: send 8b to 1 tag 1\ns2: send 8b to 1 tag 2\n"
             "}\nrank 1 {\n"
             "r1: recv 8b from 0 tag 1\n"
             "}\nrank 2 {\n"
             "r1: recv 8b from 0 tag 3\n"
             "}\n");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.diags, "v.goal: error: rank 0: send 's2' (8 bytes to rank 1, tag 2) has no "
                     "matching recv in rank 1\n"
                     "v.goal: error: rank 2: recv 'r1' (8 bytes from rank 0, tag 3) has no "
                     "matching send\n"
                     "v.goal: note: with -allow-unmatched these are warnings\n");
}

TEST(Verify, WildcardsUseAMaximumMatching) {
  // Recvs (any source, tag 1) and (source 0, any tag); sends with tags 1 and 2. Giving
  // the first send to the (0, any) recv would leave the tag-2 send without a partner;
  // a maximum matching pairs tag 2 with (0, any) and tag 1 with (any, 1).
  Verified v = verify("num_ranks 2\nrank 0 {\ns1: send 8b to 1 tag 1\ns2: send 8b to 1 tag 2\n}\n"
                      "rank 1 {\nr1: recv 8b from 0 tag -1\nr2: recv 8b from -1 tag 1\n}\n");
  EXPECT_TRUE(v.ok) << v.diags;
  EXPECT_EQ(v.diags, "");
  // A send with tag -1 matches a recv with any tag from its rank.
  v = verify("num_ranks 2\nrank 0 {\ns1: send 8b to 1 tag -1\n}\n"
             "rank 1 {\nr1: recv 8b from 0 tag 77\n}\n");
  EXPECT_TRUE(v.ok) << v.diags;
  // Wildcard recvs that cannot all be served: the last in program order are reported.
  v = verify("num_ranks 3\nrank 0 {\ns: send 8b to 2 tag 5\n}\nrank 1 {\n}\n"
             "rank 2 {\nr1: recv 8b from -1 tag -1\nr2: recv 8b from -1 tag 5\n"
             "r3: recv 8b from 1 tag -1\n}\n");
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(messageLines(v.diags),
            (std::vector<std::string>{
                "v.goal: error: rank 2: recv 'r2' (8 bytes from any rank, tag 5) has no matching "
                "send",
                "v.goal: error: rank 2: recv 'r3' (8 bytes from rank 1, any tag) has no matching "
                "send",
                "v.goal: note: with -allow-unmatched these are warnings"}));
}

TEST(Verify, ManyUnmatchedAreCounted) {
  std::string t = "num_ranks 2\nrank 0 {\n";
  for (int i = 1; i <= 25; ++i)
    t += "l" + std::to_string(i) + ": send 1b to 1 tag " + std::to_string(i) + "\n";
  t += "}\nrank 1 {\n}\n";
  VerifyOptions o;
  o.maxListed = 3;
  Verified v = verify(t, o);
  EXPECT_EQ(messageLines(v.diags),
            (std::vector<std::string>{
                "v.goal: error: rank 0: send 'l1' (1 byte to rank 1, tag 1) has no matching "
                "recv in rank 1",
                "v.goal: error: rank 0: send 'l2' (1 byte to rank 1, tag 2) has no matching "
                "recv in rank 1",
                "v.goal: error: rank 0: send 'l3' (1 byte to rank 1, tag 3) has no matching "
                "recv in rank 1",
                "v.goal: error: 22 more sends or recvs have no matching partner",
                "v.goal: note: with -allow-unmatched these are warnings"}));
}

TEST(Verify, SelfAndZeroByteMessagesAreNotes) {
  std::string t = "num_ranks 2\nrank 0 {\n"
                  "a: send 4b to 0\nb: recv 4b from 0\nc: send 0b to 1\n}\n"
                  "rank 1 {\nr: recv 0b from 0\n}\n";
  Verified v = verify(t);
  EXPECT_TRUE(v.ok);
  EXPECT_EQ(v.diags, "v.goal: note: rank 0: send 'a' is a message to its own rank\n"
                     "v.goal: note: rank 0: send 'c' to rank 1 is a zero-byte message\n"
                     "v.goal: note: LogGOPSim charges (size-1)*G for a message; for 0 bytes that "
                     "wraps around and acts as -G\n");
  std::string many = "num_ranks 1\nrank 0 {\n";
  for (int i = 1; i <= 8; ++i)
    many += "s" + std::to_string(i) + ": send 0b to 0\nr" + std::to_string(i) + ": recv 0b from 0\n";
  many += "}\n";
  v = verify(many);
  std::vector<std::string> lines = messageLines(v.diags);
  ASSERT_EQ(lines.size(), 13u);
  EXPECT_EQ(lines[4], "v.goal: note: rank 0: send 's5' is a message to its own rank");
  EXPECT_EQ(lines[5], "v.goal: note: 3 more messages go to their own rank");
  EXPECT_EQ(lines[11], "v.goal: note: 3 more messages carry zero bytes");
}

TEST(Verify, OperandsOutOfRange) {
  // Only a builder (a pass, another frontend) can make these; the readers reject them.
  ScheduleBuilder b(2);
  b.beginRank(0);
  b.addSend(8, 5);
  b.addRecv(8, 2);
  b.endRank();
  Verified v = verify(b.finish());
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(v.diags, "v.goal: error: rank 0: send #0 goes to rank 5, but the schedule has 2 ranks "
                     "(0..1)\n"
                     "v.goal: error: rank 0: recv #1 comes from rank 2, but the schedule has 2 "
                     "ranks (0..1)\n");
}

TEST(Verify, RunsAfterEveryFrontendByDefault) {
  std::string dir = makeTempDir("verify");
  writeFile(dir + "/u.goal", "num_ranks 2\nrank 0 {\nl1: send 8b to 1\n}\nrank 1 {\n}\n");
  RunResult r = runInfracc({dir + "/u.goal", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, dir + "/u.goal:3:1: error: rank 0: send 'l1' (8 bytes to rank 1, tag 0) has "
                         "no matching recv in rank 1\nl1: send 8b to 1\n^\n" +
                     dir + "/u.goal: note: with -allow-unmatched these are warnings\n");
  r = runInfracc({dir + "/u.goal", "-emit=goal", "-allow-unmatched"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, dir + "/u.goal:3:1: warning: rank 0: send 'l1' (8 bytes to rank 1, tag 0) has "
                         "no matching recv in rank 1\nl1: send 8b to 1\n^\n");
  r = runInfracc({dir + "/u.goal", "-emit=goal", "-disable-verify"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.err, "");
  // From a binary file the operations have no labels: they are named by index, and
  // located by the byte offset of their record (14-byte header, 2 jump-table entries
  // of 16, rank 0's 8-byte header and one root: the first record is at 58).
  ASSERT_EQ(runInfracc({dir + "/u.goal", "-emit=goal-bin", "-o", dir + "/u.bin",
                        "-allow-unmatched", "-w"})
                .status,
            0);
  r = runInfracc({dir + "/u.bin", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/u.bin:offset 58: error: rank 0: send #0 (8 bytes to rank 1, tag 0) "
                         "has no matching recv in rank 1\n" +
                     dir + "/u.bin: note: with -allow-unmatched these are warnings\n");
}

TEST(Verify, ErrorsPointAtTheOperationInTheFile) {
  // Through the driver, the buffer the frontend read stays registered: cycles,
  // unmatched messages, bad peers and notes name file:line:col with the line and a
  // caret at the operation's statement.
  std::string dir = makeTempDir("verify-loc");
  writeFile(dir + "/c.goal", "num_ranks 2\n"
                             "rank 0 {\n"
                             "  a: calc 1\n"
                             "  b: calc 2\n"
                             "  a requires b\n"
                             "  b requires a\n"
                             "  z: send 0b to 1 tag 5\n"
                             "}\n"
                             "rank 1 {\n"
                             "  recv 8b from 0 tag 6   // unlabelled\n"
                             "}\n");
  RunResult r = runInfracc({dir + "/c.goal", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/c.goal:4:3: error: rank 0: dependency cycle: 'b' requires 'a', 'a' "
                         "requires 'b'\n  b: calc 2\n  ^\n" +
                     dir + "/c.goal: note: rank 0: 2 of its 3 operations can never start (they "
                           "are on or behind a dependency cycle)\n" +
                     dir + "/c.goal:10:3: error: rank 1: recv #0 (8 bytes from rank 0, tag 6) "
                           "has no matching send\n  recv 8b from 0 tag 6   // unlabelled\n  ^\n" +
                     dir + "/c.goal:7:3: error: rank 0: send 'z' (0 bytes to rank 1, tag 5) has "
                           "no matching recv in rank 1\n  z: send 0b to 1 tag 5\n  ^\n" +
                     dir + "/c.goal: note: with -allow-unmatched these are warnings\n" +
                     dir + "/c.goal:7:3: note: rank 0: send 'z' to rank 1 is a zero-byte "
                           "message\n  z: send 0b to 1 tag 5\n  ^\n" +
                     dir + "/c.goal: note: LogGOPSim charges (size-1)*G for a message; for 0 "
                           "bytes that wraps around and acts as -G\n");
}

TEST(Verify, CyclesInManyRanksAreCounted) {
  std::string t = "num_ranks 4\n";
  for (int r = 0; r < 4; ++r)
    t += "rank " + std::to_string(r) + " {\nl1: calc 1\nl1 requires l1\n}\n";
  VerifyOptions o;
  o.maxListed = 2;
  Verified v = verify(t, o);
  EXPECT_FALSE(v.ok);
  EXPECT_EQ(messageLines(v.diags),
            (std::vector<std::string>{
                "v.goal: error: rank 0: dependency cycle: 'l1' requires 'l1'",
                "v.goal: note: rank 0: 1 of its 1 operations can never start (they are on or "
                "behind a dependency cycle)",
                "v.goal: error: rank 1: dependency cycle: 'l1' requires 'l1'",
                "v.goal: note: rank 1: 1 of its 1 operations can never start (they are on or "
                "behind a dependency cycle)",
                "v.goal: error: 2 more ranks have dependency cycles"}));
}
