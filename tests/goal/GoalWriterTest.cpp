// -emit=goal: the exact text, round trips (text -> IR -> text -> IR is the identity on
// the IR), what plain GOAL cannot express, LLAMP's stricter line syntax, and the
// -print-after printer.
#include "tests/goal/GoalTestUtil.h"
#include "tests/support/TestUtil.h"

#include "backends/goal/GoalWriter.h"
#include "support/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

#include <gtest/gtest.h>
#include <llvm/Support/Regex.h>

#include <sstream>

using namespace infracc;
using namespace infracc::test;

namespace {

std::string print(const Schedule &s, bool extended = false) {
  std::string out;
  llvm::raw_string_ostream os(out);
  goal::printText(s, os, extended);
  os.flush();
  return out;
}

Schedule parseOrDie(const std::string &text) {
  Parsed p = parseGoalText(text);
  if (!p.schedule)
    throw std::runtime_error(p.diags);
  return std::move(*p.schedule);
}

// Labels differ after a round trip (ours are l1, l2, ...); everything else must not.
std::string fields(const Schedule &s) {
  std::string d = describe(s), out;
  std::istringstream in(d);
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find(' ', line.find(' ') + 1);
    out += line.substr(0, a) + line.substr(line.find(' ', a + 1)) + "\n";
  }
  return out;
}

} // namespace

TEST(GoalWriter, PlainText) {
  // Unlabelled ops, odd labels, forward references, wildcards, clauses.
  Schedule s = parseOrDie("num_ranks 2\n"
                          "rank 0 {\n"
                          "  first: calc 10 cpu 2\n"
                          "  send 8b to 1 tag -1 nic 1   // unlabelled\n"
                          "  x requires first\n"
                          "  x: recv 16b from -1 tag 4 cpu 1 nic 3\n"
                          "  x irequires first\n"
                          "}\n"
                          "rank 1 {\n"
                          "  a: recv 8b from 0 tag 9\n"
                          "  b: send 16b to 0 tag 4\n"
                          "  b requires a\n"
                          "}\n");
  EXPECT_EQ(print(s), "num_ranks 2\n"
                      "\n"
                      "rank 0 {\n"
                      "l1: calc 10 cpu 2\n"
                      "l2: send 8b to 1 tag -1 nic 1\n"
                      "l3: recv 16b from -1 tag 4 cpu 1 nic 3\n"
                      "l3 requires l1\n"
                      "l3 irequires l1\n"
                      "}\n"
                      "\n"
                      "rank 1 {\n"
                      "l1: recv 8b from 0 tag 9\n"
                      "l2: send 16b to 0 tag 4\n"
                      "l2 requires l1\n"
                      "}\n");
}

TEST(GoalWriter, GoldenOutputOfFixtures) {
  for (const char *name : {"irequires", "cpu_nic", "wildcards", "empty_ranks", "labels"}) {
    SCOPED_TRACE(name);
    std::string in = sourcePath(std::string("tests/goal/inputs/") + name + ".goal");
    RunResult r = runInfracc({in, "-emit=goal", "-w"});
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(compareGolden(std::string("goal/") + name + ".out.goal", r.out), "");
  }
}

TEST(GoalWriter, RoundTripIsTheIdentityOnTheIR) {
  std::vector<std::string> texts = {ringAllreduceText(6, 1, 100)};
  for (const char *name : {"irequires", "cpu_nic", "wildcards", "empty_ranks", "labels"})
    texts.push_back(readFile(sourcePath(std::string("tests/goal/inputs/") + name + ".goal")));
  for (const std::string &text : texts) {
    Schedule a = parseOrDie(text);
    std::string printed = print(a);
    Schedule b = parseOrDie(printed);
    EXPECT_EQ(fields(b), fields(a));
    EXPECT_EQ(b.maxCpu(), a.maxCpu());
    EXPECT_EQ(b.maxNic(), a.maxNic());
    // Printing again changes nothing, and the binary forms agree.
    EXPECT_EQ(print(b), printed);
    EXPECT_EQ(toBinary(b), toBinary(a));
  }
}

TEST(GoalWriter, LinesFollowLlampsSyntax) {
  // LLAMP (spcl/llamp mpi-dep-graph/file_parser.py) reads GOAL line by line with these
  // regular expressions and rejects any other non-blank line. It has no -1 wildcards.
  // Written in POSIX ERE (llvm::Regex): \s is [[:space:]], \d is [0-9].
  const char *patterns[] = {
      R"(^num_ranks[[:space:]]+([0-9]+)$)",
      R"(^rank[[:space:]]+([0-9]+)[[:space:]]+\{$)",
      R"(^\}$)",
      R"(^l([0-9]+)[[:space:]]*:[[:space:]]*send[[:space:]]+([0-9]+)b[[:space:]]+to[[:space:]]+([0-9]+)([[:space:]]+tag[[:space:]]+([0-9]+))?([[:space:]]+cpu[[:space:]]+([0-9]+))?([[:space:]]*nic[[:space:]]+([0-9]+))?$)",
      R"(^l([0-9]+)[[:space:]]*:[[:space:]]*recv[[:space:]]+([0-9]+)b[[:space:]]+from[[:space:]]+([0-9]+)([[:space:]]+tag[[:space:]]+([0-9]+))?([[:space:]]+cpu[[:space:]]+([0-9]+))?([[:space:]]*nic[[:space:]]+([0-9]+))?$)",
      R"(^l([0-9]+)[[:space:]]*:[[:space:]]*calc[[:space:]]+([0-9]+)([[:space:]]+cpu[[:space:]]+([0-9]+))?$)",
      R"(^l([0-9]+)[[:space:]]+(irequires|requires)[[:space:]]+l([0-9]+)$)",
  };
  for (const char *name : {"irequires", "cpu_nic", "empty_ranks", "labels"}) {
    SCOPED_TRACE(name);
    Schedule s = parseOrDie(readFile(sourcePath(std::string("tests/goal/inputs/") + name + ".goal")));
    std::istringstream in(print(s));
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty())
        continue;
      bool matched = false;
      for (const char *re : patterns)
        matched |= llvm::Regex(re).match(line);
      EXPECT_TRUE(matched) << line;
    }
  }
  // The patterns do reject what LLAMP rejects.
  for (const char *bad : {"  l1: calc 5", "l1: recv 8b from -1", "l2: send 8 b to 1"})
    for (const char *re : patterns)
      EXPECT_FALSE(llvm::Regex(re).match(bad)) << bad;
}

TEST(GoalWriter, RefusesWhatPlainGoalCannotExpress) {
  ScheduleBuilder b(2);
  b.beginRank(0);
  b.addOp(OpKind::Calc, 0, 5, 0, 0, 2);              // calc on nic 2 (possible in binary GOAL)
  b.addOp(OpKind::Send, AnySource, 8, 0, 0, 0);      // send to -1
  CollectiveInfo c;
  c.kind = CollectiveKind::Allreduce;
  c.bytes = 1024;
  b.addOp(OpKind::Collective, b.addCollective(c), 0);
  b.endRank();
  Schedule s = b.finish();
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagEngine diags(os);
  EXPECT_TRUE(static_cast<bool>(goal::checkPlainText(s, diags, "w.bin")));
  os.flush();
  EXPECT_EQ(out, "w.bin: error: rank 0 operation #0 is a calc on nic 2; GOAL text has no nic "
                 "clause for calc (binary GOAL does)\n"
                 "w.bin: error: rank 0 operation #1 is a send to any rank (-1), which GOAL "
                 "cannot express\n"
                 "w.bin: error: rank 0 operation #2 is a collective (allreduce), which plain "
                 "GOAL cannot express; lower it to sends, recvs and calcs with "
                 "-passes=lower-collectives (or write the extended dialect with "
                 "-emit=goal-extended)\n");
  // The -print-after printer shows them in the extended dialect instead.
  EXPECT_EQ(print(s, /*extended=*/true), "num_ranks 2\n\nrank 0 {\nl1: calc 5 nic 2\n"
                                         "l2: send 8b to -1 tag 0\n"
                                         "l3: allreduce 1024b\n}\n\nrank 1 {\n}\n");
}

TEST(GoalWriter, PrintAfterUsesTheSameWriter) {
  RunResult r = runInfracc({sourcePath("tests/goal/inputs/irequires.goal"), "-emit=goal",
                            "-o", makeTempDir("goal-print") + "/x.goal", "-print-after=verify"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string expected = "; *** Schedule after verify ***\n" +
                         readFile(sourcePath("tests/golden/goal/irequires.out.goal"));
  EXPECT_EQ(r.err, expected);
}
