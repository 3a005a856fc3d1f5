// NCCL runs traced with Nsight Systems: the exports tests/nccl/make_nsys_exports.py
// writes (2 nodes x 4 GPUs unless said otherwise) read into schedules whose collectives
// follow NCCL's ring and tree loops, checked by the semantic checker, against golden
// GOAL, and for located errors on broken exports.
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>

#include <sqlite3.h>

#include <cstdlib>
#include <mutex>
#include <set>

using namespace infracc::test;

namespace {

/// A fixture scenario's folder, written on first use in this test process.
std::string scenario(const std::string &name) {
  static std::string dir = makeTempDir("nccl");
  static std::mutex mutex;
  static std::set<std::string> written;
  std::lock_guard<std::mutex> lock(mutex);
  if (written.insert(name).second) {
    auto python = llvm::sys::findProgramByName("python3");
    if (!python) {
      ADD_FAILURE() << "python3 is needed to write the NCCL fixtures (README's install line)";
      return dir + "/" + name;
    }
    std::string script = sourcePath("tests/nccl/make_nsys_exports.py");
    llvm::StringRef args[] = {*python, script, dir, name};
    std::string err;
    int rc = llvm::sys::ExecuteAndWait(*python, args, std::nullopt, {}, 0, 0, &err);
    if (rc != 0)
      ADD_FAILURE() << "make_nsys_exports.py " << name << " failed (" << rc << "): " << err;
  }
  return dir + "/" + name;
}

/// Runs `sql` on a copy of a fixture export and returns the copy's path.
std::string editedCopy(const std::string &from, const std::string &sql, const std::string &name) {
  std::string dir = makeTempDir("nccl-edit");
  std::string to = dir + "/" + name;
  EXPECT_FALSE(llvm::sys::fs::copy_file(from, to));
  sqlite3 *db = nullptr;
  EXPECT_EQ(sqlite3_open(to.c_str(), &db), SQLITE_OK);
  char *msg = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg), SQLITE_OK) << (msg ? msg : "");
  sqlite3_free(msg);
  sqlite3_close(db);
  return to;
}

/// A copy of a fixture export whose NVTX strings matching `like` (SQL LIKE) have `was`
/// replaced by `now`, whether nsys stored them inline or through StringIds.
std::string replacedInNvtx(const std::string &from, const std::string &like,
                           const std::string &was, const std::string &now,
                           const std::string &name) {
  std::string text = "COALESCE(text, (SELECT value FROM StringIds WHERE id = textId))";
  return editedCopy(from,
                    "UPDATE NVTX_EVENTS SET text = replace(" + text + ", '" + was + "', '" + now +
                        "'), textId = NULL WHERE " + text + " LIKE '" + like + "';",
                    name);
}

const char *const Scenarios[] = {"allreduce-ring-simple", "allreduce-ring-ll",
                                 "allreduce-tree-ll128",  "allgather-ring-ll128",
                                 "reducescatter-ring-simple", "broadcast-ring-ll",
                                 "sendrecv-simple",       "sendrecv-ll",
                                 "one-node"};

class NcclScenario : public ::testing::TestWithParam<const char *> {};

// Golden GOAL, lowered; the semantic checker proves every collective (every rank ends
// with the reduced, gathered or broadcast data) and the verifier finds no cycle.
TEST_P(NcclScenario, LowersToGoldenGoalAndIsProven) {
  std::string dir = scenario(GetParam());
  RunResult r = runInfracc({dir, "-passes=lower-collectives", "-verify-collectives", "-emit=goal"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(compareGolden(std::string("nccl/") + GetParam() + ".goal", r.out), "");
}

// The extended dialect keeps NCCL's choices (proto, chunk, rings as communicator
// orders, trees) and reads back to the same schedule.
TEST_P(NcclScenario, ExtendedDialectRoundTrips) {
  std::string dir = scenario(GetParam());
  RunResult a = runInfracc({dir, "-emit=goal-extended"});
  ASSERT_EQ(a.status, 0) << a.err;
  std::string tmp = makeTempDir("nccl-rt") + "/x.goal";
  writeFile(tmp, a.out);
  RunResult b = runInfracc({tmp, "-emit=goal-extended"});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  RunResult la = runInfracc({dir, "-emit=goal"});
  RunResult lb = runInfracc({tmp, "-emit=goal"});
  EXPECT_EQ(la.out, lb.out);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, NcclScenario, ::testing::ValuesIn(Scenarios),
                         [](const ::testing::TestParamInfo<const char *> &i) {
                           std::string n = i.param;
                           for (char &c : n)
                             if (c == '-')
                               c = '_';
                           return n;
                         });

// What the trace says becomes the statement: per channel, the work element's elements
// times the type size, NCCL's chunk, the protocol, the channel's ring as the
// communicator's order and the channel's cpu; compute gaps from the kernel table.
TEST(Nccl, StatementsCarryWhatTheTraceSays) {
  RunResult r = runInfracc({scenario("allreduce-ring-simple"), "-emit=goal-extended"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Channel 0's ring is 0..7; channel 1's runs each node's GPUs backwards.
  EXPECT_NE(r.out.find("comm 1 ranks 0..7\ncomm 2 ranks 0,7..1\n"), std::string::npos) << r.out;
  // 1 MiB of floats over 2 channels: 131072 elements each; chunk of 16384 elements;
  // Simple's 2 slices per chunk (chunkSteps 4 / sliceSteps 2), aligned to 16 floats, at
  // least a 32nd of 2 steps of 131072 floats (stepSize 524288 bytes).
  EXPECT_EQ(countOf(r.out, "allreduce 524288b comm 1 algo ring proto simple chunk 65536b slices 2 "
                           "64b 32768b\n"), 16u);
  EXPECT_EQ(countOf(r.out, "allreduce 524288b comm 2 algo ring proto simple chunk 65536b slices 2 "
                           "64b 32768b cpu 1\n"), 16u);
  RunResult g = runInfracc({scenario("allreduce-ring-simple"), "-emit=goal"});
  // Rank 0 sends to rank 1 on channel 0's ring: each 65536-byte chunk step as two
  // 32768-byte slices, 14 steps, 2 collectives.
  std::string rank0 = g.out.substr(g.out.find("rank 0 {"), g.out.find("rank 1 {") - g.out.find("rank 0 {"));
  EXPECT_EQ(countOf(rank0, ": send 32768b to 1 "), 2u * 14 * 2);
  EXPECT_EQ(countOf(rank0, ": send 65536b"), 0u);
  // Rank 0 (the fixture's clock): profiling starts at 1,000,000 ns, its first NCCL kernel
  // at 1,055,800 ns (its call after a 50,000 ns gap, then 5,000 ns of launch); the second
  // kernel starts 200,000 + 5,000 ns after the first one ends.
  EXPECT_NE(r.out.find("rank 0 {\nl1: calc 55800\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("l5: calc 205000\n"), std::string::npos) << r.out;
}

TEST(Nccl, PointToPointTagsAreCommunicatorAndSequence) {
  RunResult r = runInfracc({scenario("sendrecv-ll"), "-emit=goal"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Each 65536-byte send goes as two elements of 32768 payload bytes, 65536 on the
  // wire with LL; tags 0 and 1 (communicator 0, transfers 0 and 1 of the pair).
  EXPECT_NE(r.out.find("send 65536b to 1 tag 0 cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("send 65536b to 1 tag 1 cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("recv 65536b from 7 tag 1 cpu"), std::string::npos) << r.out;
}

// remap-gpus learns the nodes from the exports' host names: no fabric, no -gpus-per-node.
TEST(Nccl, RemapGpusGroupsByTheTracedHosts) {
  std::string dir = scenario("allreduce-ring-ll");
  RunResult r = runInfracc({dir + "/node1.sqlite", dir + "/node0.sqlite",
                            "-passes=lower-collectives,remap-gpus,intranode-calc", "-emit=sim",
                            "-stats"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("2 remap-gpus        - Nodes (ranks) after remap-gpus"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("4 remap-gpus        - Most GPUs on one node"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("size: 2 "), std::string::npos) << r.out;
}

// Collectives name their members by rank: regrouping before lowering is refused.
TEST(Nccl, RemapGpusWantsCollectivesLoweredFirst) {
  std::string dir = scenario("allreduce-ring-ll");
  RunResult r = runInfracc({dir, "-passes=remap-gpus,intranode-calc", "-emit=sim"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + ": error: remap-gpus regroups ranks of sends, recvs and calcs, but this "
                         "workload still has 32 collective operations: lower them first "
                         "(-passes=lower-collectives,remap-gpus,...)\n");
}

// Files, a folder, and the files in another order give the same schedule.
TEST(Nccl, FilesAndFolderAreTheSameRun) {
  std::string dir = scenario("broadcast-ring-ll");
  RunResult a = runInfracc({dir, "-emit=goal-extended"});
  RunResult b = runInfracc({dir + "/node1.sqlite", dir + "/node0.sqlite", "-emit=goal-extended"});
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  // Broadcast from NCCL rank 5, which is position 3 of channel 1's ring 0,7,6,5,...
  EXPECT_EQ(countOf(a.out, "bcast 4096b comm 2 root 3 algo ring proto ll"), 16u) << a.out;
}

// The Llama-like example's run (4 nodes x 8 GPUs, tensor parallelism in a node, data
// parallelism across nodes on a second stream) traced: every GPU moves exactly the bytes
// of examples/llama_like.goal (NCCL's 2 MiB chunks split the 12 MiB data-parallel
// blocks of the example into six messages each).
TEST(Nccl, LlamaLikeTraceMovesTheExamplesBytes) {
  RunResult t = runInfracc({scenario("llama"), "-emit=goal"});
  ASSERT_EQ(t.status, 0) << t.err;
  RunResult e = runInfracc({sourcePath("examples/llama_like.goal"), "-emit=goal"});
  ASSERT_EQ(e.status, 0) << e.err;
  auto sentPerRank = [](const std::string &goal) {
    std::vector<uint64_t> v;
    size_t pos = 0;
    while ((pos = goal.find("\nrank ", pos)) != std::string::npos) {
      size_t end = goal.find("\n}", pos);
      uint64_t sum = 0;
      for (size_t at = goal.find(": send ", pos); at < end; at = goal.find(": send ", at + 1))
        // Not stoull(substr(at + 7)): that copied the rest of the text for every send,
        // quadratic, and took minutes under the sanitizers.
        sum += std::strtoull(goal.c_str() + at + 7, nullptr, 10);
      v.push_back(sum);
      pos = end;
    }
    return v;
  };
  std::vector<uint64_t> traced = sentPerRank(t.out), example = sentPerRank(e.out);
  ASSERT_EQ(traced.size(), 32u);
  EXPECT_EQ(traced, example);
  RunResult s = runInfracc({scenario("llama"), "-passes=lower-collectives,remap-gpus,intranode-calc",
                            "-emit=sim"});
  EXPECT_EQ(s.status, 0) << s.err;
}

// An export without the host's name stands for a node named after the file.
TEST(Nccl, ExportWithoutHostNameIsNamedByItsFile) {
  std::string node0 = scenario("allreduce-ring-ll") + "/node0.sqlite";
  std::string node1 = scenario("allreduce-ring-ll") + "/node1.sqlite";
  std::string x = editedCopy(node0, "DELETE FROM TARGET_INFO_SYSTEM_ENV;", "rack7.sqlite");
  RunResult r = runInfracc({x, node1, "-passes=lower-collectives,remap-gpus", "-emit=goal",
                            "-stats"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find(x + ": warning: the export names no host (no 'Hostname' in "
                           "TARGET_INFO_SYSTEM_ENV); its GPUs are taken as one node, 'rack7'"),
            std::string::npos) << r.err;
  // node1 sorts before rack7: its GPUs are ranks 0-3 now.
  EXPECT_NE(r.err.find("2 remap-gpus        - Nodes (ranks) after remap-gpus"), std::string::npos)
      << r.err;
}

TEST(Nccl, BrokenExportsGetLocatedErrors) {
  std::string node0 = scenario("allreduce-ring-ll") + "/node0.sqlite";
  std::string node1 = scenario("allreduce-ring-ll") + "/node1.sqlite";
  {  // Half of the run: rank 4 of the communicator is missing.
    RunResult r = runInfracc({node0, "-emit=goal"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(node0 + ": error: communicator 0x1234 has 8 ranks, but no export given "
                                 "holds its rank 4: give the exports of every node of the run"),
              std::string::npos) << r.err;
  }
  {  // The same report twice.
    RunResult r = runInfracc({node0, node0, node1, "-emit=goal"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("error: process 4000 of host 'node0' is also in '" + node0 +
                         "': give each report once"), std::string::npos) << r.err;
  }
  {  // Not SQLite at all.
    std::string bad = makeTempDir("nccl-bad") + "/x.sqlite";
    writeFile(bad, "hello\n");
    RunResult r = runInfracc({bad, "-emit=goal"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(bad + ": error: cannot open it as an SQLite database (file is not a "
                               "database)"), std::string::npos) << r.err;
  }
  {  // A database without NVTX events.
    std::string x = editedCopy(node0, "DROP TABLE NVTX_EVENTS;", "n.sqlite");
    RunResult r = runInfracc({x, "-emit=goal"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(x + ": error: not an Nsight Systems export with NVTX events: it has no "
                             "NVTX_EVENTS table"), std::string::npos) << r.err;
  }
  {  // A kernel lost: NVTX says more launches than the kernel table has.
    std::string x = editedCopy(node0,
                               "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE rowid = (SELECT "
                               "MIN(rowid) FROM CUPTI_ACTIVITY_KIND_KERNEL);", "node0.sqlite");
    RunResult r = runInfracc({x, node1, "-emit=goal"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(x + ": error: process 4000 launched 2 NCCL kernels by its NVTX events "
                             "(ncclLaunchKernel) but the kernel table has 1 NCCL kernels of it"),
              std::string::npos) << r.err;
  }
  {  // An annotation that does not read.
    std::string x = editedCopy(node0,
                               "UPDATE NVTX_EVENTS SET text = 'commHash 0x1234 Rings [0] 3->x->1 "
                               "pid 4000', textId = NULL WHERE rowid = 3;", "node0.sqlite");
    RunResult r = runInfracc({x, node1, "-emit=goal"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(x + ": error: NVTX event 3 ('commHash 0x1234 Rings [0] 3->x->1 pid "
                             "4000') does not read as NCCL's annotation 'commHash 0x%llx Rings "
                             "[%d] %d->%d->%d pid %d'"), std::string::npos) << r.err;
  }
  {  // A ring that closes early: rank 0's next on channel 0 is itself.
    std::string x = replacedInNvtx(node0, "%Rings [0] 7->0->1 pid 4000", "7->0->1", "7->0->0",
                                   "node0.sqlite");
    RunResult r = runInfracc({x, node1, "-emit=goal"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(x + ": error: the ring of channel 0 of communicator 0x1234 closes after 1 "
                             "of its 8 ranks"), std::string::npos) << r.err;
  }
  {  // Too large for -max-memory: refused before the NVTX table is read.
    RunResult r = runInfracc({node0, node1, "-emit=goal", "-max-memory=4K"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find(node0 + ": error: reading its "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("NVTX events would need about "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("more than -max-memory (4.0 KiB); raise it with -max-memory="),
              std::string::npos) << r.err;
  }
  {  // A protocol NCCL does not have, on a point-to-point piece.
    std::string s0 = scenario("sendrecv-simple") + "/node0.sqlite";
    std::string s1 = scenario("sendrecv-simple") + "/node1.sqlite";
    std::string x = replacedInNvtx(s0, "Bytes %", " proto 2 ", " proto 7 ", "node0.sqlite");
    RunResult r = runInfracc({x, s1, "-emit=goal"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("): protocol 7, which NCCL 2.20 does not have (0 LL, 1 LL128, 2 "
                         "Simple)\n"), std::string::npos) << r.err;
    EXPECT_EQ(countOf(r.err, "error:"), 1u) << r.err;
  }
  {  // An algorithm infracc does not lower (NVLS).
    std::string x = replacedInNvtx(node0, "collType%", " algo 1 ", " algo 4 ", "node0.sqlite");
    RunResult r = runInfracc({x, node1, "-emit=goal"});
    EXPECT_EQ(r.status, 1);
    EXPECT_NE(r.err.find("the AllReduce of 8192 bytes uses NCCL's NVLS algorithm; infracc lowers "
                         "Ring and Tree (docs/nccl.md)"), std::string::npos) << r.err;
  }
}

} // namespace
