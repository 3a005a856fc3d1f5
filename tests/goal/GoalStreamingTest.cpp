// Streaming conversion (GOAL text -> binary without holding the schedule): the
// builder hands ranks over one by one, the binary stream writer writes what
// writeBinary writes, and the driver's streamed output and diagnostics equal those of
// a run that reads the whole schedule; on a pipe (-o -) the input is read twice.
#include "backends/goal/GoalWriter.h"
#include "ir/Schedule.h"
#include "ir/TargetRegistry.h"
#include "tests/goal/GoalTestUtil.h"
#include "tests/support/TestUtil.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/raw_ostream.h>

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

namespace {

// Every construct: empty ranks, irequires, cpu and nic clauses, a dependency on a
// label defined later (a backward successor), wildcard-free matched messages.
const char *const Mixed = R"(num_ranks 4

rank 0 {
l1: calc 100 cpu 1
l2: send 64b to 2 tag 7 cpu 1 nic 1
l3: send 70000b to 3 tag 1
l2 requires l1
l3 irequires l2
l4: calc 5
l4 requires l9
l9: calc 1
}

rank 1 {
}

rank 2 {
l1: recv 64b from 0 tag 7 nic 1
l2: calc 3
l2 requires l1
}

rank 3 {
l5: recv 70000b from 0 tag 1
}
)";

TEST(GoalStreaming, BuilderHandsOverEveryRankInOrder) {
  ScheduleBuilder b(5);
  std::vector<std::string> seen;
  b.streamTo([&](uint32_t r, const RankOps &ops) {
    std::string s = "r" + std::to_string(r) + ":";
    for (uint32_t i = 0; i < ops.size(); ++i) {
      s += " " + std::to_string(ops.globalIndex(i)) + opKindName(ops.kind(i)).str();
      for (uint32_t raw : ops.successorsRaw(i))
        s += ">" + std::to_string(raw & ~Schedule::IRequiresBit) +
             ((raw & Schedule::IRequiresBit) ? "i" : "");
    }
    seen.push_back(s);
  });
  b.beginRank(1);
  b.addCalc(1);
  b.addSend(8, 3);
  b.addDependency(1, 0, DepKind::IRequires);
  b.endRank();
  b.beginRank(3);
  b.addRecv(8, 1, 0, 2);
  b.endRank();
  Schedule s = b.finish();
  EXPECT_EQ(seen, (std::vector<std::string>{"r0:", "r1: 0calc>1i 1send", "r2:", "r3: 2recv",
                                            "r4:"}));
  EXPECT_EQ(s.numOps(), 3u);
  EXPECT_EQ(s.numOps(3), 1u);
  EXPECT_EQ(s.maxCpu(), 2u);
}

TEST(GoalStreaming, StreamWriterWritesWhatWriteBinaryWrites) {
  Parsed p = parseGoalText(Mixed);
  ASSERT_TRUE(p.schedule) << p.diags;
  std::string dir = makeTempDir("goal-stream-writer");
  std::string path = dir + "/x.bin";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    auto writer = goal::binaryStreamWriter(os, p.schedule->numRanks());
    for (uint32_t r = 0; r < p.schedule->numRanks(); ++r)
      ASSERT_TRUE(writer->rank(r, p.schedule->ops(r)));
    ASSERT_FALSE(bool(writer->finish(*p.schedule)));
  }
  EXPECT_EQ(readFile(path), toBinary(*p.schedule));
}

// Mixed, and a two-pass writer into `bytes` that has measured every rank of it.
struct MeasuredMixed {
  Parsed p = parseGoalText(Mixed);
  std::string bytes;
  llvm::raw_string_ostream os{bytes};
  std::unique_ptr<ScheduleStreamWriter> writer;
  MeasuredMixed() {
    writer = goal::binaryTwoPassWriter(os, p.schedule->numRanks());
    EXPECT_TRUE(writer->measuring());
    for (uint32_t r = 0; r < p.schedule->numRanks(); ++r)
      EXPECT_TRUE(writer->rank(r, p.schedule->ops(r)));
  }
};

TEST(GoalStreaming, TwoPassWriterMeasuresThenWritesWhatWriteBinaryWrites) {
  MeasuredMixed m;
  const Schedule &s = *m.p.schedule;
  m.os.flush();
  EXPECT_EQ(m.bytes, "");   // the first pass writes nothing
  m.writer->startWriting(s);
  EXPECT_FALSE(m.writer->measuring());
  for (uint32_t r = 0; r < s.numRanks(); ++r)
    ASSERT_TRUE(m.writer->rank(r, s.ops(r)));
  ASSERT_FALSE(bool(m.writer->finish(s)));
  m.os.flush();
  EXPECT_EQ(m.bytes, toBinary(s));
}

TEST(GoalStreaming, TwoPassWriterRefusesARankThatChangedBetweenThePasses) {
  MeasuredMixed m;
  const Schedule &s = *m.p.schedule;
  m.writer->startWriting(s);
  ASSERT_TRUE(m.writer->rank(0, s.ops(0)));
  EXPECT_FALSE(m.writer->rank(1, s.ops(2)));   // rank 2's ops where rank 1's were measured
}

TEST(GoalStreaming, StreamWriterRefusesWhatBinaryCannotHold) {
  ScheduleBuilder b(1);
  b.beginRank(0);
  b.addCalc(1, 300);
  b.endRank();
  Schedule s = b.finish();
  std::string dir = makeTempDir("goal-stream-refuse");
  std::error_code ec;
  llvm::raw_fd_ostream os(dir + "/x.bin", ec);
  auto writer = goal::binaryStreamWriter(os, 1);
  EXPECT_FALSE(writer->rank(0, s.ops(0)));
}

// The driver streams into a file (one pass) and to a pipe (-o -: two passes); a run
// with -verify-each reads the whole schedule. All three must give the same bytes,
// diagnostics and exit status.
void expectSameAsWholeRead(const std::string &name, const std::string &text,
                           const std::vector<std::string> &extra = {}) {
  std::string dir = makeTempDir("goal-stream-" + name);
  writeFile(dir + "/x.goal", text);
  std::vector<std::string> streamed = {dir + "/x.goal", "-emit=goal-bin", "-o", dir + "/x.bin"};
  std::vector<std::string> piped = {dir + "/x.goal", "-emit=goal-bin", "-o", "-"};
  std::vector<std::string> whole = {dir + "/x.goal", "-emit=goal-bin", "-o", "-", "-verify-each"};
  for (auto *args : {&streamed, &piped, &whole})
    args->insert(args->end(), extra.begin(), extra.end());
  RunResult a = runInfracc(streamed), b = runInfracc(piped), c = runInfracc(whole);
  EXPECT_EQ(a.status, c.status) << name;
  EXPECT_EQ(b.status, c.status) << name;
  EXPECT_EQ(a.err, c.err) << name;
  EXPECT_EQ(b.err, c.err) << name;
  EXPECT_EQ(b.out, c.out) << name;
  if (c.status == 0)
    EXPECT_EQ(readFile(dir + "/x.bin"), c.out) << name;
  else
    EXPECT_FALSE(llvm::sys::fs::exists(dir + "/x.bin")) << name;
}

TEST(GoalStreaming, DriverOutputEqualsAWholeRead) {
  expectSameAsWholeRead("mixed", Mixed);
  expectSameAsWholeRead("ring", ringAllreduceText(16, 2, 4096));
}

TEST(GoalStreaming, WhatTheVerifierReportsComesOutAsInAWholeRead) {
  // Each of these makes the verifier speak: the streamed run falls back to reading the
  // whole schedule, so messages and outputs are the usual ones.
  expectSameAsWholeRead("cycle", "num_ranks 1\nrank 0 {\nl1: calc 1\nl2: calc 1\n"
                                 "l1 requires l2\nl2 requires l1\n}\n");
  expectSameAsWholeRead("unmatched", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 3\n}\n"
                                     "rank 1 {\nl1: recv 8b from 0 tag 4\n}\n");
  expectSameAsWholeRead("zero-byte", "num_ranks 2\nrank 0 {\nl1: send 0b to 1\n}\n"
                                     "rank 1 {\nl1: recv 0b from 0\n}\n");
  expectSameAsWholeRead("self", "num_ranks 1\nrank 0 {\nl1: send 8b to 0\nl2: recv 8b from 0\n}\n");
  expectSameAsWholeRead("wildcard", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 3\n}\n"
                                    "rank 1 {\nl1: recv 8b from -1 tag -1\n}\n");
  expectSameAsWholeRead("cpu", "num_ranks 1\nrank 0 {\nl1: calc 1 cpu 300\n}\n");
  expectSameAsWholeRead("parse-error", "num_ranks 2\nrank 0 {\nl1: calc 1\n}\nrank 1 {\nl1: cal 1\n}\n");
  expectSameAsWholeRead("unverified", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 3\n}\n"
                                      "rank 1 {\nl1: recv 8b from 0 tag 4\n}\n",
                        {"-disable-verify"});
}

} // namespace
