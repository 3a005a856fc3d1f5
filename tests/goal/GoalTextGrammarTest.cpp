// The GOAL text grammar that txt2bin accepts, construct by construct, plus infracc's
// documented leniencies. Expected schedules are written out by hand from the text.
// Where a test says "txt2bin accepts this", that was checked by running LogGOPSim's
// txt2bin (spcl/LogGOPSim 76451de) on the same text and comparing its .bin with
// ours (tests/goal/tools/compare_with_txt2bin.sh).
#include "tests/goal/GoalTestUtil.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

namespace {

std::string ok(const std::string &text) {
  Parsed p = parseGoalText(text);
  EXPECT_TRUE(p.schedule.has_value()) << p.diags;
  EXPECT_EQ(p.diags, "");
  return p.schedule ? describe(*p.schedule) : "";
}

} // namespace

TEST(GoalText, SendRecvCalcWithDefaults) {
  EXPECT_EQ(ok("num_ranks 2\n"
               "rank 0 {\n"
               "l1: send 1024b to 1\n"
               "l2: calc 500\n"
               "}\n"
               "rank 1 {\n"
               "l1: recv 1024b from 0\n"
               "}\n"),
            "r0 #0 l1 send peer=1 size=1024 tag=0 cpu=0 nic=0 succ=[]\n"
            "r0 #1 l2 calc peer=0 size=500 tag=0 cpu=0 nic=0 succ=[]\n"
            "r1 #0 l1 recv peer=0 size=1024 tag=0 cpu=0 nic=0 succ=[]\n");
}

TEST(GoalText, EveryClauseCombinationInOrder) {
  EXPECT_EQ(ok("num_ranks 2\nrank 0 {\n"
               "a: send 1b to 1 tag 7\n"
               "b: send 2b to 1 cpu 3\n"
               "c: send 3b to 1 nic 4\n"
               "d: send 4b to 1 tag 7 cpu 3\n"
               "e: send 5b to 1 tag 7 nic 4\n"
               "f: send 6b to 1 cpu 3 nic 4\n"
               "g: recv 7b from 1 tag 7 cpu 3 nic 4\n"
               "h: calc 8 cpu 9\n"
               "}\nrank 1 {\n}\n"),
            "r0 #0 a send peer=1 size=1 tag=7 cpu=0 nic=0 succ=[]\n"
            "r0 #1 b send peer=1 size=2 tag=0 cpu=3 nic=0 succ=[]\n"
            "r0 #2 c send peer=1 size=3 tag=0 cpu=0 nic=4 succ=[]\n"
            "r0 #3 d send peer=1 size=4 tag=7 cpu=3 nic=0 succ=[]\n"
            "r0 #4 e send peer=1 size=5 tag=7 cpu=0 nic=4 succ=[]\n"
            "r0 #5 f send peer=1 size=6 tag=0 cpu=3 nic=4 succ=[]\n"
            "r0 #6 g recv peer=1 size=7 tag=7 cpu=3 nic=4 succ=[]\n"
            "r0 #7 h calc peer=0 size=8 tag=0 cpu=9 nic=0 succ=[]\n");
}

TEST(GoalText, WildcardsForRecvSourceAndForTags) {
  // -1 is any source for a recv and any tag on either side (txt2bin stores 0xFFFFFFFF).
  EXPECT_EQ(ok("num_ranks 2\nrank 0 {\n"
               "l1: recv 8b from -1 tag -1\n"
               "l2: recv 8b from 1 tag -1\n"
               "l3: send 8b to 1 tag -1\n"
               "}\nrank 1 {\n}\n"),
            "r0 #0 l1 recv peer=any size=8 tag=any cpu=0 nic=0 succ=[]\n"
            "r0 #1 l2 recv peer=1 size=8 tag=any cpu=0 nic=0 succ=[]\n"
            "r0 #2 l3 send peer=1 size=8 tag=any cpu=0 nic=0 succ=[]\n");
}

TEST(GoalText, RequiresAndIrequiresKeepTheirOrderPerPredecessor) {
  // Successors: requires first, then irequires, each in the order of their lines
  // (txt2bin's DependOnMe / StartDependOnMe). A repeated line is a second edge.
  EXPECT_EQ(ok("num_ranks 1\nrank 0 {\n"
               "l1: calc 1\nl2: calc 2\nl3: calc 3\nl4: calc 4\n"
               "l4 irequires l1\n"
               "l3 requires l1\n"
               "l2 irequires l1\n"
               "l2 requires l1\n"
               "l3 requires l1\n"
               "l4 requires l2\n"
               "}\n"),
            "r0 #0 l1 calc peer=0 size=1 tag=0 cpu=0 nic=0 succ=[2,1,2,3i,1i]\n"
            "r0 #1 l2 calc peer=0 size=2 tag=0 cpu=0 nic=0 succ=[3]\n"
            "r0 #2 l3 calc peer=0 size=3 tag=0 cpu=0 nic=0 succ=[]\n"
            "r0 #3 l4 calc peer=0 size=4 tag=0 cpu=0 nic=0 succ=[]\n");
}

TEST(GoalText, CommentsBlankLinesAndEmptyBlocks) {
  EXPECT_EQ(ok("// a schedule\n"
               "/* spanning\n   lines */\n"
               "\n"
               "num_ranks 3\n"
               "\n"
               "rank 0 {\n"
               "// inside\n"
               "/* block */\n"
               "/* c */l1: calc 5\n"
               "\n"
               "}\n"
               "rank 1 {\n}\n"
               "rank 2 {}\n"),
            "r0 #0 l1 calc peer=0 size=5 tag=0 cpu=0 nic=0 succ=[]\n");
}

TEST(GoalText, SizeSuffixGluedOrSpacedAndTokensWithoutBlanks) {
  // txt2bin needs no blank between tokens after the statement's first word:
  // `l1:send5bto1tag7cpu1nic2` is a send, and `a requiresb` names label b.
  EXPECT_EQ(ok("num_ranks 2\nrank 0 {\n"
               "l1: send 1024 b to 1\n"
               "l2:send5bto1tag7cpu1nic2\n"
               "l3 : calc5cpu3\n"
               "l3 requiresl2\n"
               "l4:recv 1b\tfrom\t-1tag-1\n"
               "}\nrank 1 {\n}\n"),
            "r0 #0 l1 send peer=1 size=1024 tag=0 cpu=0 nic=0 succ=[]\n"
            "r0 #1 l2 send peer=1 size=5 tag=7 cpu=1 nic=2 succ=[2]\n"
            "r0 #2 l3 calc peer=0 size=5 tag=0 cpu=3 nic=0 succ=[]\n"
            "r0 #3 l4 recv peer=any size=1 tag=any cpu=0 nic=0 succ=[]\n");
}

TEST(GoalText, KeywordsVersusLabels) {
  // At the start of a statement the longest word wins and a keyword beats a label of
  // the same length: send, recv, calc, rank and num_ranks cannot be labels, but tag,
  // to, b, requires, send1, rank0 can.
  EXPECT_EQ(ok("num_ranks 1\nrank 0 {\n"
               "tag: calc 1\n"
               "requires: calc 2\n"
               "b: calc 3\n"
               "send1: calc 4\n"
               "rank0: calc 5\n"
               "requires requires tag\n"
               "b irequires requires\n"
               "}\n"),
            "r0 #0 tag calc peer=0 size=1 tag=0 cpu=0 nic=0 succ=[1]\n"
            "r0 #1 requires calc peer=0 size=2 tag=0 cpu=0 nic=0 succ=[2i]\n"
            "r0 #2 b calc peer=0 size=3 tag=0 cpu=0 nic=0 succ=[]\n"
            "r0 #3 send1 calc peer=0 size=4 tag=0 cpu=0 nic=0 succ=[]\n"
            "r0 #4 rank0 calc peer=0 size=5 tag=0 cpu=0 nic=0 succ=[]\n");
}

TEST(GoalText, UnlabelledOperations) {
  EXPECT_EQ(ok("num_ranks 2\nrank 0 {\nsend 4b to 1\ncalc 7 cpu 1\n}\nrank 1 {\nrecv 4b from 0\n}\n"),
            "r0 #0 - send peer=1 size=4 tag=0 cpu=0 nic=0 succ=[]\n"
            "r0 #1 - calc peer=0 size=7 tag=0 cpu=1 nic=0 succ=[]\n"
            "r1 #0 - recv peer=0 size=4 tag=0 cpu=0 nic=0 succ=[]\n");
}

TEST(GoalText, LabelsAreScopedPerRank) {
  EXPECT_EQ(ok("num_ranks 2\nrank 0 {\nx: calc 1\ny: calc 2\ny requires x\n}\n"
               "rank 1 {\ny: calc 3\nx: calc 4\ny requires x\n}\n"),
            "r0 #0 x calc peer=0 size=1 tag=0 cpu=0 nic=0 succ=[1]\n"
            "r0 #1 y calc peer=0 size=2 tag=0 cpu=0 nic=0 succ=[]\n"
            "r1 #0 y calc peer=0 size=3 tag=0 cpu=0 nic=0 succ=[]\n"
            "r1 #1 x calc peer=0 size=4 tag=0 cpu=0 nic=0 succ=[0]\n");
}

TEST(GoalText, LabelForms) {
  // l<n> labels take a fast path; leading zeros, other letters and long numbers do not,
  // and all must keep their exact spelling.
  EXPECT_EQ(ok("num_ranks 1\nrank 0 {\n"
               "l0: calc 1\nl007: calc 2\nl7: calc 3\nL7: calc 4\n"
               "l99999999999: calc 5\nlabel_with_underscore_1: calc 6\n"
               "l7 requires l007\nl007 requires l0\nl99999999999 requires L7\n"
               "}\n"),
            "r0 #0 l0 calc peer=0 size=1 tag=0 cpu=0 nic=0 succ=[1]\n"
            "r0 #1 l007 calc peer=0 size=2 tag=0 cpu=0 nic=0 succ=[2]\n"
            "r0 #2 l7 calc peer=0 size=3 tag=0 cpu=0 nic=0 succ=[]\n"
            "r0 #3 L7 calc peer=0 size=4 tag=0 cpu=0 nic=0 succ=[4]\n"
            "r0 #4 l99999999999 calc peer=0 size=5 tag=0 cpu=0 nic=0 succ=[]\n"
            "r0 #5 label_with_underscore_1 calc peer=0 size=6 tag=0 cpu=0 nic=0 succ=[]\n");
}

TEST(GoalText, NumbersAtTheirLimitsAndWithLeadingZeros) {
  EXPECT_EQ(ok("num_ranks 2\nrank 0 {\n"
               "l1: send 18446744073709551615b to 1 tag 4294967294 cpu 65535 nic 65535\n"
               "l2: send 65536b to 0001 tag 0010012002\n"
               "l3: calc 18446744073709551615\n"
               "}\nrank 1 {\n}\n"),
            "r0 #0 l1 send peer=1 size=18446744073709551615 tag=4294967294 cpu=65535 "
            "nic=65535 succ=[]\n"
            "r0 #1 l2 send peer=1 size=65536 tag=10012002 cpu=0 nic=0 succ=[]\n"
            "r0 #2 l3 calc peer=0 size=18446744073709551615 tag=0 cpu=0 nic=0 succ=[]\n");
}

TEST(GoalText, WindowsLineEndsAndNoFinalNewline) {
  EXPECT_EQ(ok("num_ranks 1\r\nrank 0 {\r\nl1: calc 1\r\nl2: calc 2 cpu 1\r\n"
               "l2 requires l1\r\n}"),
            "r0 #0 l1 calc peer=0 size=1 tag=0 cpu=0 nic=0 succ=[1]\n"
            "r0 #1 l2 calc peer=0 size=2 tag=0 cpu=1 nic=0 succ=[]\n");
  EXPECT_EQ(ok("num_ranks 1\nrank 0 {\nl1: calc 1\n}"),
            "r0 #0 l1 calc peer=0 size=1 tag=0 cpu=0 nic=0 succ=[]\n");
}

// --- Leniencies (txt2bin rejects or mangles these; docs/goal.md) -------------------

TEST(GoalTextLenient, Indentation) {
  // txt2bin swallows the first character after leading blanks; we skip the blanks.
  EXPECT_EQ(ok("num_ranks 2\n  rank 0 {\n    l1: send 8b to 1\n\t\tl2: calc 3\n    l2 requires l1\n  }\n"
               " rank 1 {\n   l1: recv 8b from 0\n }\n"),
            "r0 #0 l1 send peer=1 size=8 tag=0 cpu=0 nic=0 succ=[1]\n"
            "r0 #1 l2 calc peer=0 size=3 tag=0 cpu=0 nic=0 succ=[]\n"
            "r1 #0 l1 recv peer=0 size=8 tag=0 cpu=0 nic=0 succ=[]\n");
}

TEST(GoalTextLenient, TrailingComments) {
  EXPECT_EQ(ok("num_ranks 2 // two ranks\n"
               "rank 0 { // first\n"
               "l1: send 8b to 1 tag 3 // the message\n"
               "l2: calc 3 /* short */\n"
               "l3: calc 4 cpu 1 /* spans\n two lines */\n"
               "l2 requires l1 // after\n"
               "} // end\n"
               "rank 1 {\nl1: recv 8b from 0 tag 3 /* a */ /* b */ // c\n}\n"),
            "r0 #0 l1 send peer=1 size=8 tag=3 cpu=0 nic=0 succ=[1]\n"
            "r0 #1 l2 calc peer=0 size=3 tag=0 cpu=0 nic=0 succ=[]\n"
            "r0 #2 l3 calc peer=0 size=4 tag=0 cpu=1 nic=0 succ=[]\n"
            "r1 #0 l1 recv peer=0 size=8 tag=3 cpu=0 nic=0 succ=[]\n");
}

TEST(GoalTextLenient, LabelsUsedBeforeTheyAreDefined) {
  // Forward references keep the text order of the dependency lines.
  EXPECT_EQ(ok("num_ranks 1\nrank 0 {\n"
               "l1: calc 1\n"
               "l2 requires l1\n"
               "l3 irequires l1\n"
               "l2: calc 2\n"
               "l4 requires l1\n"
               "l3: calc 3\n"
               "l4: calc 4\n"
               "}\n"),
            "r0 #0 l1 calc peer=0 size=1 tag=0 cpu=0 nic=0 succ=[1,3,2i]\n"
            "r0 #1 l2 calc peer=0 size=2 tag=0 cpu=0 nic=0 succ=[]\n"
            "r0 #2 l3 calc peer=0 size=3 tag=0 cpu=0 nic=0 succ=[]\n"
            "r0 #3 l4 calc peer=0 size=4 tag=0 cpu=0 nic=0 succ=[]\n");
}

TEST(GoalTextLenient, StatementsOnTheLinesOfBraces) {
  EXPECT_EQ(ok("num_ranks 2\nrank 0 { l1: calc 1\n} rank 1 {\n}\n"),
            "r0 #0 l1 calc peer=0 size=1 tag=0 cpu=0 nic=0 succ=[]\n");
}

TEST(GoalText, SchedgenStyleFile) {
  // A ring allreduce in schedgen's layout: 4 ranks, 2 iterations, 3 ops per step.
  Parsed p = parseGoalText(ringAllreduceText(4, 2, 1024));
  ASSERT_TRUE(p.schedule) << p.diags;
  const Schedule &s = *p.schedule;
  EXPECT_EQ(s.numRanks(), 4u);
  EXPECT_EQ(s.numOps(), 4u * 12 * 3);
  EXPECT_EQ(s.numDependencies(), 4u * (11 + 12));
  uint32_t g = s.globalIndex(3, 4);   // rank 3, l5: the recv of step 1
  EXPECT_EQ(s.kind(g), OpKind::Recv);
  EXPECT_EQ(s.peer(g), 2u);
  EXPECT_EQ(s.tag(g), 1u);
  EXPECT_EQ(s.label(g), "l5");
  EXPECT_EQ(s.numSuccessors(g), 1u);
  EXPECT_EQ(s.successor(g, 0), 5u);   // l6 (the calc) requires it
}
