// VEF3 MPI traces: reading (records to ops, dependencies, collectives kept), writing
// (-emit=vef), the round trip, and the errors of both directions.
#include "compiler/frontends/vef/DcnDistributions.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringRef.h>

#include <filesystem>
#include <map>
#include <set>

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
  r = run("VEF3 99999999999 1 1 0 0 0 1000\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/t.vef:1:6: error: the task count 99999999999 is too large (at most "
                         "1073741824)\nVEF3 99999999999 1 1 0 0 0 1000\n     ^\n");
  // The verifier's messages point at the records the ops came from.
  r = run("VEF3 2 0 1 1 2 0 1000\nC0 0 1\nG0 C0 2 0 1024 1024 0 0 -1\n"
          "G0 C0 2 1 2048 2048 0 0 -1\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/t.vef:4:1: error: collective mismatch on communicator 0: rank 1 "
                         "(communicator 0 rank 1) issues 'allreduce 2048b algo auto' as its 1st "
                         "collective there, but rank 0 (its rank 0) issues 'allreduce 1024b algo "
                         "auto'\nG0 C0 2 1 2048 2048 0 0 -1\n^\n" +
                       dir + "/t.vef:3:1: note: the 1st collective of rank 0 on communicator 0\n"
                             "G0 C0 2 0 1024 1024 0 0 -1\n^\n");
  // Counts in the header that disagree with the trace are warnings.
  r = run("VEF3 2 5 1 0 0 0 1000\nC0 0 1\n0 0 1 8 4 0 -1\n");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, dir + "/t.vef:1:8: warning: the header announces 5 message record(s); the "
                         "trace has 1\nVEF3 2 5 1 0 0 0 1000\n       ^\n");
}

namespace {

struct SendLine {
  uint32_t rank, to, tag;
  uint64_t bytes;
};

// The sends of a GOAL text ("l2: send 8276b to 46 tag 295"), with their ranks.
std::vector<SendLine> sendsOf(const std::string &goal) {
  std::vector<SendLine> out;
  uint32_t rank = 0;
  llvm::StringRef text = goal;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    llvm::SmallVector<llvm::StringRef, 8> t;
    line.split(t, ' ', -1, false);
    if (t.size() >= 2 && t[0] == "rank")
      t[1].getAsInteger(10, rank);
    if (t.size() >= 7 && t[1] == "send") {
      SendLine s{rank, 0, 0, 0};
      t[2].drop_back().getAsInteger(10, s.bytes);
      t[4].getAsInteger(10, s.to);
      t[6].getAsInteger(10, s.tag);
      out.push_back(s);
    }
  }
  return out;
}


} // namespace

// FLOWS: the generated flows follow the parameters: class shares, uniform sizes in
// [MIN, MAX] KB (1 KB = 1000 bytes), exponential gaps of mean TIME / #Msgs cycles.
TEST(VefGenerators, FlowsMatchTheirParameters) {
  std::string dir = makeTempDir("vef-flows");
  writeFile(dir + "/f.vef", "VEF3 64 20000 0 0 0 0 1000\nEXT FLOWS\n"
                            "CLASSES 2 TIME 40000000 UNIFORM\n"
                            "0 MAX 10 MIN 1 PERC 80.0\n"
                            "1 PERC 20 MIN 1000 MAX 10000 GAUSS\n");
  RunResult r = runInfracc({dir + "/f.vef", "-emit=goal-extended"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<SendLine> sends = sendsOf(r.out);
  ASSERT_EQ(sends.size(), 20000u);
  double small = 0, smallBytes = 0, bigBytes = 0;
  std::set<uint32_t> tags;
  for (const SendLine &s : sends) {
    EXPECT_NE(s.rank, s.to);
    tags.insert(s.tag);
    if (s.bytes <= 10000) {
      ++small;
      smallBytes += double(s.bytes);
      EXPECT_GE(s.bytes, 1000u);
    } else {
      bigBytes += double(s.bytes);
      EXPECT_GE(s.bytes, 1000000u);
      EXPECT_LE(s.bytes, 10000000u);
    }
  }
  EXPECT_EQ(tags.size(), 20000u);   // one tag per flow
  EXPECT_NEAR(small / 20000, 0.80, 0.015);
  EXPECT_NEAR(smallBytes / small / 5500, 1.0, 0.02);
  EXPECT_NEAR(bigBytes / (20000 - small) / 5.5e6, 1.0, 0.03);
  // The arrival clock: the calcs of all ranks (cpu 1) add up to each rank's last start;
  // the latest start is close to TIME (40 ms at 1000 ps per cycle).
  uint64_t latest = 0, now = 0;
  llvm::StringRef text = r.out;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    if (line.starts_with("rank "))
      now = 0;
    llvm::SmallVector<llvm::StringRef, 6> t;
    line.split(t, ' ', -1, false);
    uint64_t ns = 0;
    if (t.size() == 5 && t[1] == "calc" && t[3] == "cpu" && !t[2].getAsInteger(10, ns))
      latest = std::max(latest, now += ns);
  }
  EXPECT_NEAR(double(latest) / 40e6, 1.0, 0.03);
  // The same seed gives the same schedule; another seed another one.
  EXPECT_EQ(runInfracc({dir + "/f.vef", "-emit=goal-extended"}).out, r.out);
  EXPECT_NE(runInfracc({dir + "/f.vef", "-emit=goal-extended", "-seed=2"}).out, r.out);
  EXPECT_EQ(runInfracc({dir + "/f.vef", "-emit=sim"}).status, 0);
}

// HOROVOD: per batch and layer a compute, negotiation rounds until every worker has
// sent GATV_TOTAL_BYTES, then the bcast of BCAST_BYTES and the allreduce of ARED_KBYTES.
TEST(VefGenerators, HorovodLoop) {
  std::string dir = makeTempDir("vef-horovod");
  writeFile(dir + "/h.vef", "VEF3 4 0 0 0 0 1000\nEXT HOROVOD\nBATCHES 2 LAYERS 3\n"
                            "DEFAULT COMPUTE_MS 2 NEGOTIATION_LOOP_MS 0.5\n"
                            "   GATV_BYTES 100 GATV_TOTAL_BYTES 300 GATV_PROB 0.5\n"
                            "   BCAST_BYTES 1000 ARED_KBYTES 500\n"
                            "1 BCAST_BYTES 2000 ARED_KBYTES 1500\n");
  RunResult r = runInfracc({dir + "/h.vef", "-emit=goal-extended"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // Every rank: 6 allreduces, layer 1's of 1.5 MB; the big bcasts once per layer.
  EXPECT_EQ(countOf(r.out, "allreduce 500000b"), 4u * 4);
  EXPECT_EQ(countOf(r.out, "allreduce 1500000b"), 4u * 2);
  EXPECT_EQ(countOf(r.out, "bcast 2000b"), 4u * 2);
  EXPECT_EQ(countOf(r.out, "bcast 1000b"), 4u * 4);
  EXPECT_EQ(countOf(r.out, "calc 2000000\n"), 4u * 6);
  // Each round: a gather of 4 bytes and a bcast of 4 bytes per rank; the workers' gatherv
  // sends are 100 bytes (with GATV_PROB) or 25; each worker sent 300 bytes per layer.
  const size_t rounds = countOf(r.out, "gather 4b") / 4;
  EXPECT_EQ(countOf(r.out, "bcast 4b"), 4 * rounds);
  EXPECT_EQ(countOf(r.out, "bcast 25b"), 4 * (rounds - 6));
  uint64_t full = 0;
  for (const SendLine &s : sendsOf(r.out)) {
    EXPECT_EQ(s.to, 0u);
    EXPECT_TRUE(s.bytes == 100 || s.bytes == 25) << s.bytes;
    full += s.bytes == 100;
  }
  EXPECT_EQ(full, 3u * 3 * 6);   // 3 workers x 3 sends x 6 (batch, layer)
  RunResult sim = runInfracc({dir + "/h.vef", "-emit=sim"});
  EXPECT_EQ(sim.status, 0) << sim.err;
  EXPECT_EQ(sim.err, "");   // not timed: its compute is on the cpu that sends
}

TEST(VefGenerators, Errors) {
  std::string dir = makeTempDir("vef-gen-bad");
  auto run = [&](const std::string &text) {
    writeFile(dir + "/t.vef", text);
    return runInfracc({dir + "/t.vef", "-emit=goal-extended"}).err;
  };
  const std::string flows = "VEF3 8 100 0 0 0 0 1000\nEXT FLOWS\n";
  EXPECT_EQ(run(flows + "CLASSES 2 TIME 1000\n0 MAX 10 MIN 1 PERC 80\n1 MAX 10 MIN 1 PERC 30\n"),
            dir + "/t.vef:3:1: error: the classes' PERC add up to 110, not 100\n"
                  "CLASSES 2 TIME 1000\n^\n");
  EXPECT_EQ(run(flows + "CLASSES 1 TIME 1000 ZIPF\n0 MAX 10 MIN 1 PERC 100\n"),
            dir + "/t.vef:3:21: error: unknown destination distribution 'ZIPF' (valid: UNIFORM, "
                  "POISSON, GAUSS)\nCLASSES 1 TIME 1000 ZIPF\n                    ^\n");
  EXPECT_EQ(run(flows + "CLASSES 1 TIME 1000\n0 MAX 10 MIN -1 PERC 100\n"),
            dir + "/t.vef:4:14: error: MIN (KB) -1 is out of range: it must be in [0, "
                  "1000000000000]\n"
                  "0 MAX 10 MIN -1 PERC 100\n             ^\n");
  EXPECT_EQ(run(flows + "CLASSES 1 TIME 1000\n0 MAX 1 MIN 10 PERC 100\n"),
            dir + "/t.vef:4:1: error: class 0: MIN 10 is above MAX 1\n0 MAX 1 MIN 10 PERC 100\n^\n");
  EXPECT_EQ(run(flows + "CLASSES 1 TIME 1000\n0 MAX 1 MIN 0 PERCENT 100\n"),
            dir + "/t.vef:4:15: error: unknown FLOWS class key 'PERCENT' (valid: MAX, MIN, PERC, "
                  "or a destination distribution: UNIFORM, POISSON, GAUSS)\n"
                  "0 MAX 1 MIN 0 PERCENT 100\n              ^\n");
  const std::string horovod = "VEF3 4 0 0 0 0 1000\nEXT HOROVOD\nBATCHES 1 LAYERS 2\n";
  EXPECT_EQ(run(horovod + "DEFAULT COMPUTE_MS 1 NEGOTIATION_LOOP_MS 1 GATV_BYTES 1 "
                          "GATV_TOTAL_BYTES 1 GATV_PROB 1.5 BCAST_BYTES 1 ARED_KBYTES 1\n"),
            dir + "/t.vef:4:86: error: GATV_PROB 1.5 is out of range: it must be in [0, 1]\n"
                  "DEFAULT COMPUTE_MS 1 NEGOTIATION_LOOP_MS 1 GATV_BYTES 1 GATV_TOTAL_BYTES 1 "
                  "GATV_PROB 1.5 BCAST_BYTES 1 ARED_KBYTES 1\n" +
                std::string(85, ' ') + "^\n");
  EXPECT_EQ(run(horovod + "DEFAULT COMPUTE_MS 1\n"),
            dir + "/t.vef:4:1: error: DEFAULT has no NEGOTIATION_LOOP_MS (it needs all of: "
                  "COMPUTE_MS, NEGOTIATION_LOOP_MS, GATV_BYTES, GATV_TOTAL_BYTES, GATV_PROB, "
                  "BCAST_BYTES, ARED_KBYTES)\nDEFAULT COMPUTE_MS 1\n^\n");
  EXPECT_EQ(run("VEF3 128 2000000 0 0 0 0 1000\nEXT DCNW\nGOOGLE_WEB GAUSS LOAD 0.5\n"),
            dir + "/t.vef:3:1: error: unknown DCNW model 'GOOGLE_WEB' (models: DCTCP (web search "
                  "(DCTCP)), FACEBOOK_KEY_VALUE (Facebook key-value store (memcached)), "
                  "FACEBOOK_CACHE_FOLLOWER (Facebook cache follower), FACEBOOK_WEB_SERVER "
                  "(Facebook web server), FACEBOOK_HADOOP (Facebook Hadoop), GOOGLE_ALL (Google, "
                  "all RPCs), GOOGLE_SEARCH (Google search RPCs); or EXT CDCNW with a "
                  "distribution file)\nGOOGLE_WEB GAUSS LOAD 0.5\n^\n");
  EXPECT_EQ(run("VEF3 128 2000000 0 0 0 0 1000\nEXT DCNW\nGOOGLE_ALL GAUSS LOAD -1\n"),
            dir + "/t.vef:3:23: error: LOAD (Gb/s per task) -1 is out of range: it must be in "
                  "[1e-09, 1000000]\nGOOGLE_ALL GAUSS LOAD -1\n                      ^\n");
  EXPECT_EQ(run("VEF3 128 2000000 0 0 0 0 1000\nEXT DCNW\n"),
            dir + "/t.vef:3:1: error: DCNW: expected '<model> [<destination distribution>] [LOAD "
                  "<Gb/s per task>]'\n\n^\n");
  EXPECT_EQ(run("VEF3 8 1 0 0 0 0 1000\nEXT STORAGE\n"),
            dir + "/t.vef:2:5: error: unknown extended VEF model 'STORAGE' (models: DCNW, CDCNW, "
                  "FLOWS, HOROVOD)\nEXT STORAGE\n    ^\n");
}

// CDCNW: sizes drawn from the given distribution, each task's messages at LOAD Gb/s on
// average (exponential gaps of mean size x 8 / LOAD ns), #Msgs messages in all.
TEST(VefGenerators, CustomDistribution) {
  std::string dir = makeTempDir("vef-cdcnw");
  // Mean of the distribution: 1000 x 0.5 + 10^4 x 0.3 + 10^5 x 0.15 + 10^6 x 0.05 = 68,500
  // bytes (the first line is the file's own statement of it, not used).
  writeFile(dir + "/sizes.cdf", "68500\n1000 0.5\n10000 0.8\n100000 0.95\n1000000 1.0\n");
  writeFile(dir + "/c.vef", "VEF3 16 20000 0 0 0 0 1000\nEXT CDCNW\nsizes.cdf GAUSS LOAD 2\n");
  RunResult r = runInfracc({dir + "/c.vef", "-emit=goal-extended"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const std::vector<SendLine> sends = sendsOf(r.out);
  ASSERT_EQ(sends.size(), 20000u);
  std::map<uint64_t, double> shares;
  double bytes = 0;
  for (const SendLine &s : sends) {
    EXPECT_NE(s.rank, s.to);
    shares[s.bytes] += 1.0 / 20000;
    bytes += double(s.bytes);
  }
  EXPECT_EQ(shares.size(), 4u);
  EXPECT_NEAR(shares[1000], 0.50, 0.015);
  EXPECT_NEAR(shares[10000], 0.30, 0.015);
  EXPECT_NEAR(shares[100000], 0.15, 0.01);
  EXPECT_NEAR(shares[1000000], 0.05, 0.006);
  EXPECT_NEAR(bytes / 20000 / 68500, 1.0, 0.07);
  // Per task, the last start over the messages sent: the mean gap, 68,500 x 8 / 2 ns.
  double spans = 0;
  uint64_t now = 0;
  llvm::StringRef text = r.out;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    text = rest;
    if (line.starts_with("rank ")) {
      spans += double(now);
      now = 0;
    }
    llvm::SmallVector<llvm::StringRef, 6> t;
    line.split(t, ' ', -1, false);
    uint64_t ns = 0;
    if (t.size() == 5 && t[1] == "calc" && t[3] == "cpu" && !t[2].getAsInteger(10, ns))
      now += ns;
  }
  spans += double(now);
  EXPECT_NEAR(spans / 20000 / 274000, 1.0, 0.03);
  // Generated arrivals: lgs cannot keep them and says so; atlahs can.
  r = runInfracc({dir + "/c.vef", "-emit=sim"});
  EXPECT_EQ(r.err, dir + "/c.vef: warning: the workload's messages start at generated times, "
                         "which -sim-model=lgs does not keep: LogGOPSim v1 does not carry a "
                         "time to another cpu, so a message starts as soon as its own cpu is "
                         "free; -sim-model=atlahs or flow keeps the times (docs/workloads.md, "
                         "\"Timed workloads\")\n");
  r = runInfracc({dir + "/c.vef", "-emit=sim", "-sim-model=atlahs"});
  EXPECT_EQ(r.err, "");
  // A distribution that is not one.
  writeFile(dir + "/bad.cdf", "10\n5 0.5\n7 0.4\n");
  writeFile(dir + "/b.vef", "VEF3 4 10 0 0 0 0 1000\nEXT CDCNW\nbad.cdf\n");
  r = runInfracc({dir + "/b.vef", "-emit=sim"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/bad.cdf:3:3: error: cumulative probabilities must not decrease: 0.4 "
                         "follows 0.5\n7 0.4\n  ^\n");
  writeFile(dir + "/short.cdf", "10\n5 0.5\n7 0.9\n");
  writeFile(dir + "/s.vef", "VEF3 4 10 0 0 0 0 1000\nEXT CDCNW\nshort.cdf LOAD 0\n");
  r = runInfracc({dir + "/s.vef", "-emit=sim"});
  EXPECT_EQ(r.err, dir + "/s.vef:3:16: error: LOAD (Gb/s per task) 0 is out of range: it must be "
                         "in [1e-09, 1000000]\nshort.cdf LOAD 0\n               ^\n");
  writeFile(dir + "/s.vef", "VEF3 4 10 0 0 0 0 1000\nEXT CDCNW\nshort.cdf\n");
  r = runInfracc({dir + "/s.vef", "-emit=sim"});
  EXPECT_EQ(r.err, dir + "/s.vef:3:1: error: the size distribution '" + dir +
                       "/short.cdf' must end at cumulative probability 1 (it ends at 0.9)\n"
                       "short.cdf\n^\n");
}

// DCNW: the seven built-in distributions. The tables are the sources' own (their stated
// means are the tables' means, so nothing was lost copying them), and what the generator
// draws follows them: every size is a table entry (or in the key-value store's Pareto
// tail), the empirical CDF stays within the Kolmogorov-Smirnov bound of the table at every
// point (1.8/sqrt(n): exceeded by chance with probability 0.3 %), the mean size within
// 4.5 standard errors of the distribution's, and each task offers LOAD Gb/s on average.
TEST(VefGenerators, DataCentreWorkloads) {
  using infracc::vef::dcnModels;
  ASSERT_EQ(dcnModels().size(), 7u);
  std::string dir = makeTempDir("vef-dcnw");
  const int n = 40000;
  for (const infracc::vef::DcnModel &m : dcnModels()) {
    SCOPED_TRACE(m.name);
    // The distribution's mean and variance, tail included.
    double mean = 0, square = 0, prev = 0;
    for (const auto &p : m.table) {
      const double bytes = double(p.size * m.bytesPerUnit);
      mean += bytes * (p.cumulative - prev);
      square += bytes * bytes * (p.cumulative - prev);
      prev = p.cumulative;
    }
    if (m.tail) {
      const double k = m.tail->k, sigma = m.tail->sigma;
      const double offset = double(m.table.back().size);
      const double tailMean = offset + sigma / (1 - k);
      const double tailVar = sigma * sigma / ((1 - k) * (1 - k) * (1 - 2 * k));
      mean += (1 - prev) * tailMean;
      square += (1 - prev) * (tailVar + tailMean * tailMean);
    } else {
      EXPECT_DOUBLE_EQ(prev, 1.0);
    }
    EXPECT_NEAR(mean / m.statedMean, 1.0, m.tail ? 2e-3 : 1e-5);
    const double stderror = std::sqrt((square - mean * mean) / n);

    writeFile(dir + "/d.vef", fmt::format("VEF3 32 {} 0 0 0 0 1000\nEXT DCNW\n{} LOAD 0.5\n", n,
                                          m.name));
    RunResult r = runInfracc({dir + "/d.vef", "-emit=goal-extended"});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::vector<SendLine> sends = sendsOf(r.out);
    ASSERT_EQ(sends.size(), size_t(n));
    std::vector<uint64_t> sizes;
    double sum = 0;
    for (const SendLine &s : sends) {
      sizes.push_back(s.bytes);
      sum += double(s.bytes);
    }
    std::sort(sizes.begin(), sizes.end());
    double worst = 0;
    for (const auto &p : m.table) {
      const uint64_t bytes = p.size * m.bytesPerUnit;
      const double below = double(std::upper_bound(sizes.begin(), sizes.end(), bytes) -
                                  sizes.begin()) / n;
      worst = std::max(worst, std::fabs(below - p.cumulative));
    }
    EXPECT_LT(worst, 1.8 / std::sqrt(double(n)));
    for (uint64_t size : sizes) {
      if (m.tail && size > m.table.back().size)
        continue;
      auto at = std::find_if(m.table.begin(), m.table.end(), [&](const auto &p) {
        return p.size * m.bytesPerUnit == size;
      });
      ASSERT_NE(at, m.table.end()) << size << " is not in the table";
    }
    EXPECT_NEAR(sum / n, mean, 4.5 * stderror);
    // Offered load: the calcs that space a task's sends add up, over all tasks, to n mean
    // gaps of mean x 8 / 0.5 ns (the stated mean: the generator's rate is set from it).
    double gaps = 0;
    llvm::StringRef text = r.out;
    while (!text.empty()) {
      auto [line, rest] = text.split('\n');
      text = rest;
      llvm::SmallVector<llvm::StringRef, 6> t;
      line.split(t, ' ', -1, false);
      uint64_t ns = 0;
      if (t.size() == 5 && t[1] == "calc" && t[3] == "cpu" && !t[2].getAsInteger(10, ns))
        gaps += double(ns);
    }
    EXPECT_NEAR(gaps / n / (m.statedMean * 8 / 0.5), 1.0, 0.03);
  }
}
