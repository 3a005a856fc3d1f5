// MPI trace import: liballprof traces written here (one file per rank) read into the
// IR: computation between calls as calc (µs -> ns), blocking calls chained,
// nonblocking requests as irequires with MPI_Wait/Waitall as a calc 0, collectives on
// the world and on communicators rebuilt from MPI_Comm_split, and the errors.
#include "tests/support/TestUtil.h"

#include <llvm/Support/FileSystem.h>

#include <gtest/gtest.h>

using namespace infracc::test;

namespace {

std::string writeTrace(const std::string &dir, const std::vector<std::string> &ranks,
                       const std::string &stem = "pmpi-trace-rank-") {
  for (size_t r = 0; r < ranks.size(); ++r)
    writeFile(dir + "/" + stem + std::to_string(r) + ".txt",
              "# collprof 0.9 output file\n# host: test\n" + ranks[r]);
  return dir + "/" + stem + "0.txt";
}

TEST(Liballprof, NonblockingOverlapBecomesIrequires) {
  std::string dir = makeTempDir("mpi-nb");
  // Rank 0 posts an Irecv, computes 4 µs while it is in flight, sends, then waits.
  std::string r0 = "MPI_Init:-:1:2:10.0\n"
                   "MPI_Irecv:12.0:4000:64:3,1,1:1:7:0,0,2:9000:12.5\n"
                   "MPI_Send:16.5:4100:32:3,4,4:1:8:0,0,2:17.0\n"
                   "MPI_Wait:20.0:9000:500:21.0\n"
                   "MPI_Finalize:23.0:-\n";
  std::string r1 = "MPI_Init:-:1:2:10.0\n"
                   "MPI_Isend:11.0:4000:64:3,1,1:0:7:0,1,2:9008:11.25\n"
                   "MPI_Recv:11.5:4100:128:3,1,1:0:8:0,1,2:600:13.0\n"
                   "MPI_Waitall:13.0:1:9008:700:13.5\n"
                   "MPI_Finalize:14.0:-\n";
  std::string rank0 = writeTrace(dir, {r0, r1});
  RunResult r = runInfracc({rank0, "-emit=goal-extended"});
  ASSERT_EQ(r.status, 0) << r.err;
  // Rank 0: calc 2000 (10.0 -> 12.0), the irecv, calc 4000 (12.5 -> 16.5) which only
  // irequires the irecv, the send after it, calc 3000, the wait (calc 0) requiring the
  // irecv and the chain, calc 2000 up to MPI_Finalize. (The writer lists each op's
  // requires-successors before its irequires-successors.)
  EXPECT_EQ(r.out, "num_ranks 2\n\n"
                   "rank 0 {\nl1: calc 2000\nl2: recv 64b from 1 tag 7\nl3: calc 4000\n"
                   "l4: send 128b to 1 tag 8\nl5: calc 3000\nl6: calc 0\nl7: calc 2000\n"
                   "l2 requires l1\nl6 requires l2\nl3 irequires l2\nl4 requires l3\n"
                   "l5 requires l4\nl6 requires l5\nl7 requires l6\n}\n\n"
                   "rank 1 {\nl1: calc 1000\nl2: send 64b to 0 tag 7\nl3: calc 250\n"
                   "l4: recv 128b from 0 tag 8\nl5: calc 0\nl6: calc 500\n"
                   "l2 requires l1\nl5 requires l2\nl3 irequires l2\nl4 requires l3\n"
                   "l5 requires l4\nl6 requires l5\n}\n");
  // Plain GOAL that LogGOPSim's parser reads (no collectives to lower here).
  r = runInfracc({rank0, "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(Liballprof, CollectivesOnSplitCommunicators) {
  std::string dir = makeTempDir("mpi-split");
  std::vector<std::string> ranks;
  for (int me = 0; me < 4; ++me) {
    std::string c = std::to_string(me);
    // Colors me%2, keys reversed: comm of color 0 is ranks 2,0; of color 1 ranks 3,1.
    // The new handle (77 on every rank) is not in the split record itself.
    std::string sub = std::to_string(me < 2 ? 1 : 0);
    ranks.push_back("MPI_Init:-:1:2:0.0\n"
                    "MPI_Comm_size:0.0:5," + c + ",4:555:0.0\n"
                    "MPI_Comm_split:1.0:5," + c + ",4:" + std::to_string(me % 2) + ":" +
                    std::to_string(10 - me) + ":4242:2.0\n"
                    "MPI_Allreduce:2.0:1:2:100:4,8,8:3:77," + sub + ",2:3.0\n"
                    "MPI_Bcast:3.0:5000:16:4,4,4:3:5," + c + ",4:4.0\n"
                    "MPI_Barrier:4.0:77," + sub + ",2:5.0\n");
  }
  std::string rank0 = writeTrace(dir, ranks, "t-");
  RunResult r = runInfracc({rank0, "-emit=goal-extended"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find("\nrank 1 {")),
            "num_ranks 4\ncomm 1 ranks 2,0\ncomm 2 ranks 3,1\n\n"
            "rank 0 {\nl1: calc 1000\nl2: allreduce 800b comm 1\nl3: bcast 64b root 3\n"
            "l4: barrier comm 1\nl2 requires l1\nl3 requires l2\nl4 requires l3\n}\n");
  // Lowered, proven, and accepted by the verifier.
  r = runInfracc({dir, "-passes=lower-collectives", "-verify-collectives", "-emit=goal", "-o",
                  dir + "/out.goal"});
  EXPECT_EQ(r.status, 0) << r.err;
}

// A chain of dups (each of the one before) is resolved event by event: rebuilding every
// rank's groups for each link of the chain was quadratic (60,000 dups: 44 s). Each dup
// is a communicator of its own; the barrier is on the last.
TEST(Liballprof, ChainsOfDupsResolveOneLinkAtATime) {
  std::string dir = makeTempDir("mpi-dups");
  const int n = 20000;
  std::vector<std::string> ranks;
  for (int me = 0; me < 2; ++me) {
    const std::string m = std::to_string(me);
    std::string t = "MPI_Init:-:1:2:0.0\nMPI_Comm_size:0.0:5," + m + ",2:555:0.0\n";
    for (int i = 0; i < n; ++i)   // the new handle is the next dup's parent
      t += "MPI_Comm_dup:1.0:" + std::to_string(i ? 99 + i : 5) + "," + m + ",2:0:1.0\n";
    t += "MPI_Barrier:2.0:" + std::to_string(99 + n) + "," + m + ",2:3.0\n";
    ranks.push_back(t);
  }
  std::string rank0 = writeTrace(dir, ranks, "t-");
  RunResult r = runInfracc({rank0, "-emit=goal-extended"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string comms;
  for (int c = 1; c <= n; ++c)
    comms += "comm " + std::to_string(c) + " ranks 0,1\n";
  EXPECT_EQ(r.out.substr(0, r.out.find("\nrank 1 {")),
            "num_ranks 2\n" + comms + "\nrank 0 {\nl1: calc 1000\nl2: calc 1000\n" +
                "l3: barrier comm " + std::to_string(n) +
                "\nl2 requires l1\nl3 requires l2\n}\n");
}

TEST(Liballprof, WorldRankFieldIsNotTrusted) {
  // Old liballprof versions wrote rank 0 in every rank's world communicator (as in
  // the bcast sample of Schedgen's repository); the world is recognised by its size.
  std::string dir = makeTempDir("mpi-world");
  std::vector<std::string> ranks;
  for (int me = 0; me < 3; ++me)
    ranks.push_back("MPI_Init:-:1:2:1.0\nMPI_Bcast:3.0:56:12:13,1,1:0:5641280,0,3:4.0\n");
  std::string rank0 = writeTrace(dir, ranks, "trace_bcast-");
  RunResult r = runInfracc({rank0, "-emit=goal-extended"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find("\nrank 1 {")),
            "num_ranks 3\n\nrank 0 {\nl1: calc 2000\nl2: bcast 12b\nl2 requires l1\n}\n");
}

TEST(Liballprof, Errors) {
  std::string dir = makeTempDir("mpi-err");
  std::string rank0 = writeTrace(dir, {"MPI_Init:-:1:2:0.0\nMPI_Send:1.0:4:x:3,1,1:1:0:0,0,2:2.0\n",
                                       "MPI_Init:-:1:2:0.0\nMPI_Recv:1.0:4:1:3,1,1:0:0:9,1,3:0:2.0\n"});
  RunResult r = runInfracc({rank0, "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("pmpi-trace-rank-0.txt:4:16: error: expected a whole number (count) in "
                       "MPI_Send, found 'x'"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("pmpi-trace-rank-1.txt:4:28: error: cannot tell which ranks form "
                       "communicator 9 (rank 1 of 3) in the trace of rank 1"),
            std::string::npos)
      << r.err;
  writeFile(dir + "/lonely.txt", "# collprof 0.9\nMPI_Init:-:1:2:0.0\n");
  r = runInfracc({dir + "/lonely.txt", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("lonely.txt: error: the name of rank 0's trace must hold '-0' exactly "
                       "once"),
            std::string::npos)
      << r.err;
}

} // namespace

namespace {

// Found by fuzzing (tests/fuzz/corpus/liballprof/regress-*): an absurd request count
// used to loop 2^40 times, a gap of 10^18 us overflowed the calc's 64 bits.
TEST(Liballprof, WaitallWithAnAbsurdCountWaitsForTheOutstandingRequests) {
  std::string dir = makeTempDir("mpi-waitall");
  std::string r0 = "MPI_Init:-:1:2:10.0\n"
                   "MPI_Isend:11.0:4000:64:3,1,1:1:7:0,0,2:9000:11.5\n"
                   "MPI_Waitall:12.0:1099511627776:9000:700:13.0\n"
                   "MPI_Finalize:14.0:-\n";
  std::string r1 = "MPI_Init:-:1:2:10.0\n"
                   "MPI_Recv:11.0:4000:64:3,1,1:0:7:0,1,2:600:12.0\n"
                   "MPI_Finalize:14.0:-\n";
  RunResult r = runInfracc({writeTrace(dir, {r0, r1}), "-emit=goal-extended"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "num_ranks 2\n\n"
                   "rank 0 {\nl1: calc 1000\nl2: send 64b to 1 tag 7\nl3: calc 500\nl4: calc 0\n"
                   "l5: calc 1000\nl2 requires l1\nl4 requires l2\nl3 irequires l2\n"
                   "l4 requires l3\nl5 requires l4\n}\n\n"
                   "rank 1 {\nl1: calc 1000\nl2: recv 64b from 0 tag 7\nl3: calc 2000\n"
                   "l2 requires l1\nl3 requires l2\n}\n");
  r = runInfracc({writeTrace(dir, {r0 + "", r1}), "-emit=sim"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(Liballprof, GapPastSixtyFourBitsOfNanosecondsIsAnError) {
  std::string dir = makeTempDir("mpi-gap");
  std::string r0 = "MPI_Init:-:1:2:10.0\n"
                   "MPI_Barrier:1e18:1,0,1:11e17\n"
                   "MPI_Finalize:2e18:-\n";
  RunResult r = runInfracc({writeTrace(dir, {r0}), "-emit=goal-extended"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("pmpi-trace-rank-0.txt:4:13: error: this call starts 1e+18 us after "
                       "the previous one ended; a gap must be shorter than 2^63 ns (292 "
                       "years)\nMPI_Barrier:1e18:1,0,1:11e17\n            ^\n"),
            std::string::npos)
      << r.err;
}

} // namespace

TEST(Liballprof, VerifierErrorsNameTheTraceFileAndLine) {
  // Rank 0 sends with tag 7, rank 1 receives tag 8: both are reported at their call.
  std::string dir = makeTempDir("mpi-unmatched");
  std::string rank0 = writeTrace(dir, {"MPI_Init:-:1:2:0.0\nMPI_Send:1.0:4:1:3,4,4:1:7:0,0,2:2.0\n",
                                       "MPI_Init:-:1:2:0.0\nMPI_Recv:1.0:4:1:3,4,4:0:8:0,1,2:0:2.0\n"});
  RunResult r = runInfracc({rank0, "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/pmpi-trace-rank-1.txt:4:1: error: rank 1: recv #1 (4 bytes from rank "
                         "0, tag 8) has no matching send\n"
                         "MPI_Recv:1.0:4:1:3,4,4:0:8:0,1,2:0:2.0\n^\n" +
                     dir + "/pmpi-trace-rank-0.txt:4:1: error: rank 0: send #1 (4 bytes to rank "
                           "1, tag 7) has no matching recv in rank 1\n"
                           "MPI_Send:1.0:4:1:3,4,4:1:7:0,0,2:2.0\n^\n" +
                     dir + "/pmpi-trace-rank-0.txt: note: with -allow-unmatched these are "
                           "warnings\n");
}

TEST(Liballprof, RequestHandlesInHex) {
  // The nonblocking test's traces with the request addresses written as %p writes them
  // (liballprof2): the same schedule.
  std::string dir = makeTempDir("mpi-hex"), hexDir = dir + "/hex", decDir = dir + "/dec";
  llvm::sys::fs::create_directories(hexDir);
  llvm::sys::fs::create_directories(decDir);
  auto ranks = [](const std::string &req0, const std::string &req1) {
    return std::vector<std::string>{
        "MPI_Init:-:1:2:10.0\nMPI_Irecv:12.0:4000:64:3,1,1:1:7:0,0,2:" + req0 + ":12.5\n"
        "MPI_Send:16.5:4100:32:3,4,4:1:8:0,0,2:17.0\nMPI_Wait:20.0:" + req0 + ":500:21.0\n",
        "MPI_Init:-:1:2:10.0\nMPI_Isend:11.0:4000:64:3,1,1:0:7:0,1,2:" + req1 + ":11.25\n"
        "MPI_Recv:11.5:4100:128:3,1,1:0:8:0,1,2:600:13.0\nMPI_Waitall:13.0:1:" + req1 +
            ":700:13.5\n"};
  };
  std::string hex0 = writeTrace(hexDir, ranks("0x2328", "0X7ffd1a2b3c40"));
  std::string dec0 = writeTrace(decDir, ranks("9000", "140725043264576"));
  RunResult h = runInfracc({hex0, "-emit=goal-extended"});
  RunResult d = runInfracc({dec0, "-emit=goal-extended"});
  ASSERT_EQ(h.status, 0) << h.err;
  EXPECT_EQ(h.out, d.out);
  // Each wait requires its request: rank 0's l6 (the wait) requires l2 (the irecv).
  EXPECT_NE(h.out.find("l6 requires l2\n"), std::string::npos) << h.out;
  writeTrace(hexDir, ranks("0xZZ", "0x1"));
  RunResult bad = runInfracc({hex0, "-emit=goal"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("pmpi-trace-rank-0.txt:4:40: error: expected a request handle (a whole "
                         "number, or hex with 0x) in MPI_Irecv, found '0xZZ'"),
            std::string::npos)
      << bad.err;
}

TEST(Liballprof, DirectoriesAreRecognisedByTheirFiles) {
  std::string dir = makeTempDir("mpi-dir");
  // Traces among other files: recognised by content, read through rank 0's name.
  std::string traces = dir + "/run";
  llvm::sys::fs::create_directories(traces);
  writeFile(traces + "/README", "traces of a ping\n");
  writeTrace(traces, {"MPI_Init:-:1:2:0.0\nMPI_Send:1.0:4:1:3,4,4:1:7:0,0,2:2.0\n",
                      "MPI_Init:-:1:2:0.0\nMPI_Recv:1.0:4:1:3,4,4:0:7:0,1,2:0:2.0\n"});
  RunResult r = runInfracc({traces, "-emit=goal"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 12), "num_ranks 2\n");
  // A directory of anything else: what it would have to hold, and what it holds.
  std::string other = dir + "/other";
  llvm::sys::fs::create_directories(other);
  writeFile(other + "/a.goal", "num_ranks 1\nrank 0 {\n}\n");
  writeFile(other + "/notes.txt", "hello\n");
  r = runInfracc({other, "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: cannot tell what directory '" + other +
                       "' holds: infracc reads a directory as\n"
                       "  Chakra execution traces (<prefix>.<rank>.et, one per rank; a file, or "
                       "a directory of them)\n"
                       "  MPI trace, liballprof text (rank 0's file, or a directory of rank "
                       "files)\n"
                   "  NCCL run traced with Nsight Systems, exported to SQLite (a file or a "
                   "folder per node; docs/nccl.md)\n"
                   "(recognised by its files' content), and none of its 2 files "
                       "(a.goal, notes.txt) looks like one\n");
  llvm::sys::fs::remove(other + "/a.goal");
  llvm::sys::fs::remove(other + "/notes.txt");
  r = runInfracc({other, "-emit=goal"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("(recognised by its files' content), and it has no files\n"),
            std::string::npos)
      << r.err;
}
