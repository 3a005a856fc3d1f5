// The extended GOAL dialect: communicator declarations, collective statements with
// their clauses, the writer printing them back, every parse error, the verifier's
// check that communicator members issue the same collectives, and the point-to-point
// targets lowering collectives by default.
#include "tests/goal/GoalTestUtil.h"
#include "tests/support/TestUtil.h"

#include "backends/goal/GoalWriter.h"
#include "compiler/frontends/goal/GoalTextParser.h"
#include "ir/Collectives.h"
#include "passes/Verify.h"
#include "support/Diagnostics.h"

#include <llvm/Support/MemoryBuffer.h>

#include <llvm/Support/raw_ostream.h>

#include <gtest/gtest.h>

#include <regex>

using namespace infracc;
using namespace infracc::test;

namespace {

std::string printExtended(const Schedule &s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  goal::printText(s, os, /*extended=*/true);
  os.flush();
  return out;
}

// Parses the extended dialect and verifies with the same DiagEngine, so that the
// verifier can point into the text.
std::string parseAndVerify(const std::string &text, const std::string &name) {
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagEngine diags(os);
  diags.setErrorLimit(0);
  unsigned id = diags.addBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name));
  std::optional<Schedule> s = goal::TextParser(diags, id, goal::Dialect::extended()).parse();
  if (s)
    verifySchedule(*s, diags, name, VerifyOptions{});
  os.flush();
  return out;
}

std::string verifyMessages(const Schedule &s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagEngine diags(os);
  verifySchedule(s, diags, "w.goal", VerifyOptions{});
  os.flush();
  return out;
}

const char *Program = "num_ranks 4\n"
                      "comm 1 ranks 0,2\n"
                      "comm 2 ranks 3..0\n"
                      "comm 3 ranks 1..3:2, 0\n"
                      "rank 0 {\n"
                      "l1: allreduce 1048576b comm 1 algo ring cpu 1\n"
                      "l2: bcast 4096b comm 3 root 2 algo binomial nic 2\n"
                      "l3: alltoallv 10b,0b comm 1\n"
                      "l4: barrier\n"
                      "l5: gather 8b root 3 // a comment\n"
                      "l2 requires l1\n"
                      "l3 irequires l2\n"
                      "}\n"
                      "rank 1 {\n"
                      "l1: bcast 4096b comm 3 root 2 algo binomial\n"
                      "l4: barrier\n"
                      "l5: gather 8b root 3\n"
                      "}\n"
                      "rank 2 {\n"
                      "l1: allreduce 1048576b comm 1 algo ring\n"
                      "l3: alltoallv 1b,2b comm 1\n"
                      "l4: barrier\n"
                      "l5: gather 8b root 3\n"
                      "}\n"
                      "rank 3 {\n"
                      "l1: bcast 4096b comm 3 root 2 algo binomial\n"
                      "l4: barrier\n"
                      "l5: gather 8b root 3\n"
                      "}\n";

TEST(CollectiveDialect, ParsesAndPrintsBack) {
  Parsed p = parseGoalText(Program, "c.goal", true);
  ASSERT_TRUE(p.schedule) << p.diags;
  const Schedule &s = *p.schedule;
  // comm 0 (all ranks) is added when first used.
  ASSERT_EQ(s.communicators().size(), 4u);
  EXPECT_EQ(s.communicators()[1].ranks, (std::vector<uint32_t>{3, 2, 1, 0}));
  EXPECT_EQ(s.communicators()[2].ranks, (std::vector<uint32_t>{1, 3, 0}));
  EXPECT_EQ(s.communicators()[3].ranks, (std::vector<uint32_t>{0, 1, 2, 3}));
  const CollectiveInfo &a = s.collectives()[s.peer(0)];
  EXPECT_EQ(a.kind, CollectiveKind::Allreduce);
  EXPECT_EQ(a.bytes, 1048576u);
  EXPECT_EQ(a.algorithm, uint32_t(CollAlgorithm::Ring));
  EXPECT_EQ(s.cpu(0), 1u);
  const CollectiveInfo &v = s.collectives()[s.peer(2)];
  EXPECT_EQ(v.kind, CollectiveKind::Alltoallv);
  EXPECT_EQ(v.bytes, 10u);
  EXPECT_EQ(s.vsizes()[v.vsizesBegin + 1], 0u);
  std::string printed = printExtended(s);
  EXPECT_EQ(printed.substr(0, printed.find("rank 1 {")),
            "num_ranks 4\ncomm 1 ranks 0,2\ncomm 2 ranks 3..0\ncomm 3 ranks 1,3,0\n\n"
            "rank 0 {\nl1: allreduce 1048576b comm 1 algo ring cpu 1\n"
            "l2: bcast 4096b comm 3 root 2 algo binomial nic 2\n"
            "l3: alltoallv 10b,0b comm 1\nl4: barrier\nl5: gather 8b root 3\n"
            "l2 requires l1\nl3 irequires l2\n}\n\n");
  // Reading the printed text gives the same schedule.
  Parsed again = parseGoalText(printed, "again.goal", true);
  ASSERT_TRUE(again.schedule) << again.diags;
  EXPECT_EQ(printExtended(*again.schedule), printed);
  EXPECT_EQ(verifyMessages(s), "");
}

TEST(CollectiveDialect, ParseErrors) {
  Parsed p = parseGoalText("num_ranks 4\n"
                           "comm 0 ranks 0\n"
                           "comm 1 ranks 0,0\n"
                           "comm 2 ranks 5\n"
                           "comm 4 ranks 0..3:0\n"
                           "comm 5 rank 1\n"
                           "comm 6 ranks 1\n"
                           "comm 6 ranks 2\n"
                           "rank 0 {\n"
                           "l1: allreduce 10b comm 9\n"
                           "l2: allreduce 10 comm 6\n"
                           "l3: bcast 10b root 7\n"
                           "l4: allreduce 10b root 1\n"
                           "l5: allreduce 10b algo fast\n"
                           "l6: allreduce 10b cpu 1 comm 6\n"
                           "l7: alltoallv 1b,2b\n"
                           "l8: barrier 5b\n"
                           "l9: reduce 8b comm 6 comm 6\n"
                           "}\nrank 1 {\n}\nrank 2 {\n}\nrank 3 {\n}\n",
                           "e.goal", true);
  EXPECT_EQ(messageLines(p.diags),
            (std::vector<std::string>{
                "e.goal:2:6: error: communicator 0 is predeclared as all ranks (0..3); declare "
                "others with ids from 1",
                "e.goal:3:16: error: rank 0 is listed twice in communicator 1",
                "e.goal:4:14: error: rank 5 is too large (at most 3)",
                "e.goal:5:19: error: a range step must be at least 1",
                "e.goal:6:8: error: expected 'ranks' after the communicator id: comm <id> ranks "
                "<list>, found 'rank'",
                "e.goal:8:6: error: communicator 6 is declared twice",
                "e.goal:10:19: error: communicator 9 is not declared; declare it after "
                "num_ranks: comm 9 ranks <list>",
                "e.goal:11:18: error: expected 'b' after the size (sizes are written like "
                "1024b), found 'comm'",
                "e.goal:12:15: error: root 7 is not a rank of communicator 0, which has 4 ranks "
                "(roots are communicator ranks 0..3)",
                "e.goal:13:19: error: allreduce has no root (only bcast, reduce, gather and "
                "scatter do)",
                "e.goal:14:24: error: unknown algorithm 'fast'; algorithms are auto, ring, "
                "recdoub, rabenseifner, binomial, binary, dbtree, dissemination, linear, "
                "pairwise, bruck, direct, hierarchical, tree",
                "e.goal:15:25: error: 'comm' must come before 'cpu' (clauses go in the order "
                "comm, root, algo, proto, chunk, slices, cpu, nic)",
                "e.goal:16:15: error: alltoallv gives 2 sizes, but communicator 0 has 4 ranks "
                "(one size per rank, in communicator order)",
                "e.goal:17:13: error: expected 'comm', 'algo', 'proto', 'chunk', 'slices', 'cpu', "
                "'nic', or the end of the line after the barrier, found '5b'",
                "e.goal:18:22: error: 'comm' is given twice"}));
}

// What a trace says NCCL chose (proto, chunk, slices) and a communicator's tree read,
// print back, and are checked.
TEST(CollectiveDialect, NcclClausesAndTrees) {
  const char *text = "num_ranks 4\n"
                     "comm 1 ranks 0..3 tree 1,-,1,2\n"
                     "\n"
                     "rank 0 {\n"
                     "l1: allreduce 4096b comm 1 algo tree proto ll128 chunk 1024b\n"
                     "l2: allgather 512b algo ring proto simple chunk 256b slices 2 64b 128b cpu 1\n"
                     "}\n";
  std::string full = text;
  for (int r = 1; r < 4; ++r)
    full += "\nrank " + std::to_string(r) + " {\nl1: allreduce 4096b comm 1 algo tree proto ll128 "
            "chunk 1024b\nl2: allgather 512b algo ring proto simple chunk 256b slices 2 64b 128b "
            "cpu 1\n}\n";
  Parsed p = parseGoalText(full, "n.goal", true);
  ASSERT_TRUE(p.schedule) << p.diags;
  const Schedule &s = *p.schedule;
  EXPECT_EQ(s.communicators()[s.collectives()[s.peer(0)].communicator].treeUp,
            (std::vector<int32_t>{1, -1, 1, 2}));
  const CollectiveInfo &ag = s.collectives()[s.peer(1)];
  EXPECT_EQ(ag.protocol, uint8_t(CollProtocol::Simple));
  EXPECT_EQ(ag.chunkBytes, 256u);
  EXPECT_EQ(ag.slices, 2u);
  EXPECT_EQ(ag.sliceAlign, 64u);
  EXPECT_EQ(ag.sliceMin, 128u);
  EXPECT_EQ(printExtended(s), full);

  Parsed e = parseGoalText("num_ranks 4\n"
                           "comm 1 ranks 0..3 tree -,0,-,1\n"
                           "comm 2 ranks 0..3 tree 1,2,0,-\n"
                           "comm 3 ranks 0..3 tree -,0\n"
                           "comm 4 ranks 0..3 tree -,1,1,1\n"
                           "rank 0 {\n"
                           "l1: allreduce 10b proto fast\n"
                           "l2: allreduce 10b chunk 0b\n"
                           "l3: allreduce 10b slices 0 64b 8b\n"
                           "l4: allreduce 10b chunk 8b proto ll\n"
                           "}\nrank 1 {\n}\nrank 2 {\n}\nrank 3 {\n}\n",
                           "e.goal", true);
  EXPECT_EQ(messageLines(e.diags),
            (std::vector<std::string>{
                "e.goal:2:19: error: the tree has 2 roots ('-'), not one",
                "e.goal:3:19: error: the tree has a cycle through communicator rank 0",
                "e.goal:4:19: error: the tree gives 2 parents for 4 ranks (one per communicator "
                "rank, '-' for the root)",
                "e.goal:5:26: error: communicator rank 1 is its own parent",
                "e.goal:7:25: error: unknown protocol 'fast'; protocols are simple, ll and ll128",
                "e.goal:8:19: error: a chunk of 0 bytes; leave 'chunk' out to use "
                "-coll-chunk-size",
                "e.goal:9:19: error: slices need a count and an alignment of at least 1",
                "e.goal:10:28: error: 'proto' must come before 'chunk' (clauses go in the order "
                "comm, root, algo, proto, chunk, slices, cpu, nic)"}));
  // Members must agree on NCCL's choices too: the lowered messages' sizes depend on them.
  Parsed m = parseGoalText("num_ranks 2\nrank 0 {\nl1: allreduce 64b proto ll\n}\n"
                           "rank 1 {\nl1: allreduce 64b proto ll128\n}\n",
                           "m.goal", true);
  ASSERT_TRUE(m.schedule) << m.diags;
  EXPECT_EQ(verifyMessages(*m.schedule),
            "infracc: error: collective mismatch on communicator 0: rank 1 (communicator 0 "
            "rank 1) issues 'allreduce 64b algo auto proto ll128' as its 1st collective there, "
            "but rank 0 (its rank 0) issues 'allreduce 64b algo auto proto ll'\n"
            "infracc: note: the 1st collective of rank 0 on communicator 0\n");
  // A tree algorithm on a communicator without a tree is refused at the statement.
  std::string path = makeTempDir("tree") + "/t.goal";
  writeFile(path, "num_ranks 2\nrank 0 {\nl1: allreduce 8b algo tree\n}\n"
                  "rank 1 {\nl1: allreduce 8b algo tree\n}\n");
  RunResult r = runInfracc({path, "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find(":3:5: error: algorithm 'tree' runs on the tree its communicator "
                       "declares, and communicator 0 declares none (comm <id> ranks <list> tree "
                       "<parents>)"), std::string::npos) << r.err;
}

TEST(CollectiveDialect, VerifierReportsTheFirstMismatch) {
  // Rank 2 issues a different size as its first collective on communicator 1.
  std::string text = Program;
  text.replace(text.find("l1: allreduce 1048576b comm 1 algo ring\n"),
               std::string("l1: allreduce 1048576b comm 1 algo ring\n").size(),
               "l1: allreduce 2048b comm 1 algo ring\n");
  std::string out = parseAndVerify(text, "m.goal");
  EXPECT_EQ(messageLines(out),
            (std::vector<std::string>{
                "m.goal:20:5: error: collective mismatch on communicator 1: rank 2 "
                "(communicator 1 rank 1) issues 'allreduce 2048b algo ring' as its 1st "
                "collective there, but rank 0 (its rank 0) issues 'allreduce 1048576b algo ring'",
                "m.goal:6:5: note: the 1st collective of rank 0 on communicator 1"}));

  // Rank 3 skips its gather; rank 1 issues a collective on a communicator it is not in.
  text = Program;
  text.replace(text.rfind("l5: gather 8b root 3\n"), 21, "");
  text.replace(text.find("l4: barrier\nl5: gather 8b root 3\n}\nrank 2"), 11,
               "l4: barrier\nl6: barrier comm 1");
  out = parseAndVerify(text, "n.goal");
  EXPECT_EQ(messageLines(out),
            (std::vector<std::string>{
                "n.goal:17:5: error: rank 1 issues barrier algo auto on communicator 1, but it "
                "is not one of that communicator's 2 ranks",
                "n.goal:10:5: error: collective mismatch on communicator 0: rank 0 (its rank 0) "
                "issues 'gather 8b root 3 algo auto' as its 2nd collective there, but rank 3 "
                "(communicator 0 rank 3) issues only 1"}));
}

TEST(CollectiveDialect, PointToPointTargetsLowerCollectivesByDefault) {
  // Without -passes, every target that takes sends, recvs and calcs only runs
  // lower-collectives itself: the same output as asking for it.
  std::string dir = makeTempDir("coll-p2p");
  writeFile(dir + "/c.goal", Program);
  for (const char *target : {"goal", "goal-bin", "sim", "timeline"}) {
    SCOPED_TRACE(target);
    std::string emit = std::string("-emit=") + target;
    RunResult byDefault = runInfracc({dir + "/c.goal", emit, "-sim-batch"});
    RunResult asked = runInfracc({dir + "/c.goal", "-passes=lower-collectives", emit, "-sim-batch"});
    ASSERT_EQ(byDefault.status, 0) << byDefault.err;
    EXPECT_EQ(byDefault.err, "");
    EXPECT_EQ(byDefault.out, asked.out);
  }
  RunResult r = runInfracc({dir + "/c.goal", "-emit=goal"});
  EXPECT_EQ(r.out.find("allreduce"), std::string::npos);
  // With -passes the pipeline is exactly what was asked: a collective left is refused.
  r = runInfracc({dir + "/c.goal", "-passes=verify", "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: -emit=goal takes sends, recvs and calcs, but rank 0's 'l1' "
                   "is an allreduce: add lower-collectives to -passes (without -passes it runs "
                   "by itself)\n");
  // The extended dialect keeps them.
  r = runInfracc({dir + "/c.goal", "-emit=goal-extended"});
  EXPECT_NE(r.out.find("allreduce"), std::string::npos);
}

} // namespace

namespace {

std::string everyRank(uint32_t ranks, const std::string &statement) {
  std::string text = "num_ranks " + std::to_string(ranks) + "\n";
  for (uint32_t r = 0; r < ranks; ++r)
    text += "rank " + std::to_string(r) + " {\nl1: " + statement + "\n}\n";
  return text;
}

TEST(CollectiveLimits, LoweringThatWouldNotFitIsRefused) {
  std::string dir = makeTempDir("coll-limits");
  // Symmetric collectives are sized before anything is lowered: 256 x 510 ops (+ the 256
  // collectives) x 40 bytes.
  writeFile(dir + "/a.goal", everyRank(256, "alltoall 1024b"));
  RunResult r = runInfracc({dir + "/a.goal", "-max-memory=1M", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, dir + "/a.goal:3:5: error: lowering the collectives (the largest: alltoall "
                         "of 1024 bytes on 256 ranks, linear, 510 operations per rank) would "
                         "need about 5.0 MiB (130816 x 40 bytes), more than -max-memory (1.0 "
                         "MiB); raise it with -max-memory=\nl1: alltoall 1024b\n    ^\n");
  r = runInfracc({dir + "/a.goal", "-max-memory=8M", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  // A rooted one (the root does more than the others) is caught rank by rank: a chain
  // broadcast of 1024 chunks of 64 bytes.
  writeFile(dir + "/b.goal", everyRank(64, "bcast 65536b algo ring"));
  r = runInfracc({dir + "/b.goal", "-max-memory=1M", "-coll-chunk-size=64", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/b.goal: error: lowering the collectives (27648 operations after 14 "
                         "of 64 ranks) would need about 1.1 MiB (27648 x 40 bytes), more than "
                         "-max-memory (1.0 MiB); raise it with -max-memory=\n");
  r = runInfracc({dir + "/b.goal", "-coll-chunk-size=64", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
}

// One collective of a few bytes can mean 2^40 ops for a single rank (1 TiB in chunks of
// a byte): the ops of one rank are not all made to find that out (before, 60 s and more
// than 6 GB under -max-memory=64M). Symmetric ones are caught while being sized, rooted
// ones while being lowered.
TEST(CollectiveLimits, OneRanksOpsPastTheLimitAreNotAllMade) {
  std::string dir = makeTempDir("coll-one");
  writeFile(dir + "/a.goal", everyRank(2, "allreduce 1099511627776b algo ring"));
  RunResult r = runInfracc({dir + "/a.goal", "-max-memory=1M", "-coll-chunk-size=1",
                            "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/a.goal:3:5: error: lowering the collectives (allreduce of "
                         "1099511627776 bytes on 2 ranks, ring: more than 26214 operations for "
                         "one rank) would need more than -max-memory (1.0 MiB); raise it with "
                         "-max-memory=\nl1: allreduce 1099511627776b algo ring\n    ^\n");
  writeFile(dir + "/b.goal", everyRank(2, "bcast 1099511627776b algo ring"));
  r = runInfracc({dir + "/b.goal", "-max-memory=1M", "-coll-chunk-size=1", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/b.goal: error: lowering the collectives (one collective of rank 0 "
                         "alone makes more than 26214 operations) would need more than "
                         "-max-memory (1.0 MiB); raise it with -max-memory=\n");
}

// Dissemination and Bruck send one message per round, and their sizes are known without
// listing the blocks they carry (listing and sorting them for every message made a
// 25,000-rank barrier take 34 s to lower, 99.9 % of it there). Rank 0's sends on 6000
// ranks, against the blocks counted one by one.
TEST(CollectiveLimits, DisseminationAndBruckSizesWithoutListingBlocks) {
  std::string dir = makeTempDir("coll-bruck");
  const uint32_t P = 6000;
  auto rank0Sends = [&](const std::string &statement) {
    writeFile(dir + "/x.goal", everyRank(P, statement));
    RunResult r = runInfracc({dir + "/x.goal", "-passes=lower-collectives", "-emit=goal"});
    EXPECT_EQ(r.status, 0) << r.err;
    std::vector<uint64_t> sizes;
    const std::string block = r.out.substr(0, r.out.find("rank 1 {"));
    std::regex send("send ([0-9]+)b");
    for (auto it = std::sregex_iterator(block.begin(), block.end(), send);
         it != std::sregex_iterator(); ++it)
      sizes.push_back(std::stoull((*it)[1].str()));
    return sizes;
  };
  std::vector<uint64_t> allgather, alltoall, barrier;
  for (uint64_t dist = 1; dist < P; dist <<= 1) {
    allgather.push_back(8 * std::min<uint64_t>(dist, P - dist));   // the blocks it holds
    uint64_t withBit = 0;   // the indices whose bit `dist` is set travel this round
    for (uint64_t i = 1; i < P; ++i)
      withBit += (i & dist) != 0;
    alltoall.push_back(16 * withBit);
    barrier.push_back(1);
  }
  EXPECT_EQ(rank0Sends("allgather 8b algo bruck"), allgather);
  EXPECT_EQ(rank0Sends("alltoall 16b algo bruck"), alltoall);
  EXPECT_EQ(rank0Sends("barrier"), barrier);
  EXPECT_EQ(allgather.back(), 8u * (P - 4096));
  EXPECT_EQ(alltoall.back(), 16u * (P - 4096));
}

// A `comm` line of a few bytes may list every rank: 20,000 such lines over 50,000 ranks
// (1.2 MB of text) took 30 s and 5 GB before the members were counted against
// -max-memory. Said once, at the first line too many.
TEST(CollectiveLimits, CommunicatorMembersAreCounted) {
  std::string dir = makeTempDir("coll-comms");
  std::string text = "num_ranks 4\n";
  for (int c = 1; c <= 4; ++c)
    text += "comm " + std::to_string(c) + " ranks 0..3\n";
  for (int r = 0; r < 4; ++r)
    text += "rank " + std::to_string(r) + " {}\n";
  writeFile(dir + "/c.goal", text);
  RunResult r = runInfracc({dir + "/c.goal", "-max-memory=130", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/c.goal:4:14: error: the communicators' 12 members would need about "
                         "192 bytes (12 x 16 bytes), more than -max-memory (130 bytes); raise "
                         "it with -max-memory=\ncomm 3 ranks 0..3\n             ^\n");
  r = runInfracc({dir + "/c.goal", "-max-memory=256", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
}

// Many instances are sized one by one: 3,000 all-reduces on 2 ranks lower to 12,000 ops
// (about 0.6 MiB with the collectives); summing each instance's ops with all the ones
// before it (as the estimate once did) made it 18 million, refused under 16 MiB.
TEST(CollectiveLimits, ManyInstancesAreSizedOneByOne) {
  std::string dir = makeTempDir("coll-many");
  std::string text = "num_ranks 2\n";
  for (int r = 0; r < 2; ++r) {
    text += "rank " + std::to_string(r) + " {\n";
    for (int i = 1; i <= 3000; ++i) {
      text += "l" + std::to_string(i) + ": allreduce 8b algo ring\n";
      if (i > 1)
        text += "l" + std::to_string(i) + " requires l" + std::to_string(i - 1) + "\n";
    }
    text += "}\n";
  }
  writeFile(dir + "/m.goal", text);
  RunResult r = runInfracc({dir + "/m.goal", "-max-memory=16M", "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(countOf(r.out, ": send 4b to "), 2u * 2 * 3000);
}

} // namespace
