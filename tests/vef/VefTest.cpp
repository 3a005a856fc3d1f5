// VEF3 MPI traces: reading (records to ops, dependencies, collectives kept), writing
// (-emit=vef), the round trip, and the errors of both directions.
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace infracc::test;

namespace {

// Four tasks: messages with every dependency kind, two local sync points (records from
// a task to itself), and an allreduce on communicator C1 = {0, 1}.
const char *const Small = R"(VEF3 4 6 2 1 2 0 1000
C0 0 1 2 3
C1 0 1
0 0 2 86 4 419185 -1
2 0 3 4 5 5657 0
3 3 0 64 6 100 2
4 0 0 0 1 1397 2
8 0 0 0 2 1886 3
G0 C1 2 0 1024 1024 1 10 4
G0 C1 2 1 1024 1024 0 500 -1
9 1 2 128 7 0 G0
)";

// The simulator's finishing times (per host up to 8 ranks, else the maximum).
std::string maxFinish(const std::string &out) {
  size_t at = out.find("Times:");
  if (at == std::string::npos)
    at = out.rfind("Maximum finishing time");
  return at == std::string::npos ? out : out.substr(at);
}

} // namespace

TEST(VefReader, RecordsBecomeOps) {
  std::string dir = makeTempDir("vef");
  writeFile(dir + "/small.vef", Small);
  RunResult r = runInfracc({dir + "/small.vef", "-emit=goal-extended"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(compareGolden("vef/small.goal", r.out), "");
  // A time in cycles of 2000 ps is twice as many ns.
  std::string slow = Small;
  slow.replace(slow.find(" 1000\n"), 6, " 2000\n");
  writeFile(dir + "/slow.vef", slow);
  r = runInfracc({dir + "/slow.vef", "-emit=goal-extended"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("l1: calc 838370\n"), std::string::npos) << r.out;
}

TEST(VefWriter, RoundTrip) {
  std::string dir = makeTempDir("vef-rt");
  writeFile(dir + "/small.vef", Small);
  RunResult a = runInfracc({dir + "/small.vef", "-emit=vef", "-o", dir + "/a.vef"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(compareGolden("vef/small-written.vef", readFile(dir + "/a.vef")), "");
  RunResult b = runInfracc({dir + "/a.vef", "-emit=vef", "-o", dir + "/b.vef"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(readFile(dir + "/a.vef"), readFile(dir + "/b.vef"));
  // Same schedule semantics: the simulated times agree to the nanosecond.
  RunResult s0 = runInfracc({dir + "/small.vef", "-emit=sim"});
  RunResult s1 = runInfracc({dir + "/a.vef", "-emit=sim"});
  ASSERT_EQ(s0.status, 0) << s0.err;
  EXPECT_EQ(maxFinish(s0.out), "Times: \nHost 0: 447362\nHost 1: 450025\nHost 2: 454787\n"
                               "Host 3: 441098\n");
  EXPECT_EQ(maxFinish(s1.out), maxFinish(s0.out));
  // A GOAL schedule whose ops wait for one op each: the ring all-reduce of the examples.
  const std::string ring = sourcePath("examples/ring-allreduce-16.goal");
  RunResult v = runInfracc({ring, "-emit=vef", "-o", dir + "/ring.vef"});
  ASSERT_EQ(v.status, 0) << v.err;
  EXPECT_EQ(v.err, "");
  EXPECT_EQ(readFile(dir + "/ring.vef").substr(0, 26), "VEF3 16 480 1 0 0 0 1000\nC");
  EXPECT_EQ(maxFinish(runInfracc({dir + "/ring.vef", "-emit=sim"}).out),
            maxFinish(runInfracc({ring, "-emit=sim"}).out));
}

TEST(VefWriter, WhatVefCannotSay) {
  std::string dir = makeTempDir("vef-bad-w");
  writeFile(dir + "/two.goal", "num_ranks 2\nrank 0 {\nl1: calc 5\nl2: calc 7\n"
                               "l3: send 8b to 1 tag 0\nl3 requires l1\nl3 requires l2\n}\n"
                               "rank 1 {\nl1: recv 8b from 0 tag 0\n}\n");
  RunResult r = runInfracc({dir + "/two.goal", "-emit=vef", "-o", dir + "/o.vef"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/two.goal: error: rank 0's 'l3' waits for 2 ops; a VEF record waits "
                         "for one\n");
  EXPECT_FALSE(std::filesystem::exists(dir + "/o.vef"));
  writeFile(dir + "/root.goal", "num_ranks 2\nrank 0 {\nl1: bcast 8b root 1\n}\n"
                                "rank 1 {\nl1: bcast 8b root 1\n}\n");
  r = runInfracc({dir + "/root.goal", "-emit=vef", "-o", dir + "/o.vef"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/root.goal: error: rank 0's 'l1' has root 1; VEF collectives are "
                         "rooted at rank 0 of their communicator\n");
  writeFile(dir + "/rs.goal", "num_ranks 2\nrank 0 {\nl1: reducescatter 8b\n}\n"
                              "rank 1 {\nl1: reducescatter 8b\n}\n");
  r = runInfracc({dir + "/rs.goal", "-emit=vef", "-o", dir + "/o.vef"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/rs.goal: error: rank 0's 'l1' is a reducescatter, which VEF has no "
                         "op for\n");
  // A receive that waits for a calc: the wait is dropped, with a warning.
  writeFile(dir + "/late.goal", "num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 0\n}\n"
                                "rank 1 {\nl1: calc 9\nl2: recv 8b from 0 tag 0\n"
                                "l2 requires l1\n}\n");
  r = runInfracc({dir + "/late.goal", "-emit=vef", "-o", dir + "/o.vef"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, dir + "/late.goal: warning: 1 receives wait for other ops; VEF receptions "
                         "are implicit in their messages, so those waits are dropped\n");
  EXPECT_EQ(readFile(dir + "/o.vef"), "VEF3 2 2 1 0 0 0 1000\nC0 0 1\n0 0 1 8 4 0 -1\n"
                                      "1 1 1 0 0 9 -1\n");
}

TEST(VefReader, Errors) {
  std::string dir = makeTempDir("vef-bad");
  auto run = [&](const std::string &text) {
    writeFile(dir + "/t.vef", text);
    return runInfracc({dir + "/t.vef", "-emit=goal-extended"});
  };
  const std::string head = "VEF3 2 1 1 0 0 0 1000\nC0 0 1\n";
  RunResult r = run("VEF3 2 1 1\nC0 0 1\n0 0 1 8 4 0 -1\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/t.vef:1:1: error: the VEF3 header has 6 or 7 numbers after VEF3, "
                         "this one 3\nVEF3 2 1 1\n^\n");
  r = run(head + "0 0 2 8 4 0 -1\n");
  EXPECT_EQ(r.err, dir + "/t.vef:3:5: error: destination task 2 is not a task of this trace (it "
                         "has 2: 0..1)\n0 0 2 8 4 0 -1\n    ^\n");
  r = run(head + "0 0 1 8 4 0\n");
  EXPECT_EQ(r.err, dir + "/t.vef:3:1: error: a message record has 7 fields (<id> <src> <dst> "
                         "<bytes> <dep> <time> <ref>), this one 6\n0 0 1 8 4 0\n^\n");
  r = run(head + "0 0 1 8 4 0 -1\n0 1 0 8 4 0 -1\n");
  EXPECT_EQ(r.err, dir + "/t.vef:4:1: error: message id 0 is used twice\n0 1 0 8 4 0 -1\n^\n");
  r = run(head + "0 0 1 8 5 0 7\n");
  EXPECT_EQ(r.err, dir + "/t.vef:3:13: error: there is no message 7\n0 0 1 8 5 0 7\n"
                         "            ^\n");
  r = run(head + "0 0 1 8 4 0 -1\n1 1 0 8 5 0 0\n");
  EXPECT_EQ(r.err, dir + "/t.vef:4:13: error: task 1 depends on the send of message 0, which "
                         "task 0 sends\n1 1 0 8 5 0 0\n            ^\n");
  r = run(head + "0 0 1 8 6 0 -1\n");
  EXPECT_EQ(r.err, dir + "/t.vef:3:13: error: dependency kind 6 (after a reception) needs a "
                         "reference, not -1\n0 0 1 8 6 0 -1\n            ^\n");
  r = run(head + "G0 C0 9 0 8 8 0 0 -1\n");
  EXPECT_EQ(r.err, dir + "/t.vef:3:7: error: unknown collective op 9 (VEF's ops: 0 bcast, 1 "
                         "reduce, 2 allreduce, 3 gather, 4 scatter, 5 allgather, 6 barrier, 7 "
                         "alltoall)\nG0 C0 9 0 8 8 0 0 -1\n      ^\n");
  r = run(head + "G0 C4 2 0 8 8 0 0 -1\n");
  EXPECT_EQ(r.err, dir + "/t.vef:3:4: error: communicator C4 is not declared\n"
                         "G0 C4 2 0 8 8 0 0 -1\n   ^\n");
  r = run("VEF3 128 2000000 0 0 0 0 1000\nEXT DCNW\nGOOGLE_ALL GAUSS LOAD 0.5\n");
  EXPECT_EQ(r.err, dir + "/t.vef:2:1: error: extended VEF traces (EXT DCNW, CDCNW, FLOWS, "
                         "HOROVOD) are not read yet; only VEF3 MPI traces are\nEXT DCNW\n^\n");
  r = run("VEF3 99999999999 1 1 0 0 0 1000\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/t.vef:1:6: error: the task count 99999999999 is too large (at most "
                         "1073741824)\nVEF3 99999999999 1 1 0 0 0 1000\n     ^\n");
  // Counts in the header that disagree with the trace are warnings.
  r = run("VEF3 2 5 1 0 0 0 1000\nC0 0 1\n0 0 1 8 4 0 -1\n");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, dir + "/t.vef:1:8: warning: the header announces 5 message record(s); the "
                         "trace has 1\nVEF3 2 5 1 0 0 0 1000\n       ^\n");
}
