// The selection policy: the default table's choices, rules from a file in front of
// it, and the file's errors.
#include "tests/collectives/CollTestUtil.h"
#include "tests/goal/GoalTestUtil.h"
#include "tests/support/TestUtil.h"

#include "passes/collectives/Selection.h"
#include "support/Diagnostics.h"

#include <llvm/Support/raw_ostream.h>

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;
using coll::SelectionPolicy;

namespace {

using K = CollectiveKind;
using A = CollAlgorithm;

TEST(Selection, DefaultTable) {
  const SelectionPolicy &d = SelectionPolicy::defaults();
  EXPECT_EQ(d.choose(K::Allreduce, 2048, 16, false), A::RecDoub);
  EXPECT_EQ(d.choose(K::Allreduce, 2049, 16, false), A::Rabenseifner);
  EXPECT_EQ(d.choose(K::Allreduce, 1 << 21, 16, false), A::Ring);
  EXPECT_EQ(d.choose(K::Allgather, 1024, 16, false), A::RecDoub);
  EXPECT_EQ(d.choose(K::Allgather, 1024, 12, false), A::Bruck);
  EXPECT_EQ(d.choose(K::Allgather, 1 << 20, 12, false), A::Ring);
  EXPECT_EQ(d.choose(K::Bcast, 100000, 7, false), A::Binomial);
  EXPECT_EQ(d.choose(K::Bcast, 100000, 8, false), A::Ring);
  EXPECT_EQ(d.choose(K::Alltoall, 256, 8, false), A::Bruck);
  EXPECT_EQ(d.choose(K::Alltoall, 256, 7, false), A::Linear);
  EXPECT_EQ(d.choose(K::Alltoall, 1 << 20, 7, false), A::Pairwise);
  EXPECT_EQ(d.choose(K::Barrier, 0, 7, false), A::Dissemination);
  std::string head = "# collective   size           ranks   algorithm\n"
                     "allreduce      ..2048         *       recdoub\n"
                     "allreduce      ..1048576      *       rabenseifner\n";
  EXPECT_EQ(d.describe().substr(0, head.size()), head);
}

TEST(Selection, FileRulesComeFirst) {
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagEngine diags(os);
  std::optional<SelectionPolicy> p = SelectionPolicy::parse(
      diags,
      "# mine\nallreduce 0..64KiB * ring   # comment\nalltoall * pow2 pairwise\n"
      "bcast 1MiB.. 4..8 linear\n",
      "sel.txt");
  ASSERT_TRUE(p) << out;
  EXPECT_EQ(p->choose(K::Allreduce, 100, 16, false), A::Ring);
  EXPECT_EQ(p->choose(K::Allreduce, 65537, 16, false), A::Rabenseifner);   // the defaults
  EXPECT_EQ(p->choose(K::Alltoall, 8, 16, false), A::Pairwise);
  EXPECT_EQ(p->choose(K::Alltoall, 8, 12, false), A::Bruck);
  EXPECT_EQ(p->choose(K::Bcast, 1 << 20, 8, false), A::Linear);
  EXPECT_EQ(p->choose(K::Bcast, 1 << 20, 9, false), A::Ring);

  // Through the driver: the file decides what a statement without `algo` becomes.
  std::string dir = makeTempDir("coll-sel");
  writeFile(dir + "/sel.txt", "allreduce * * direct\n");
  writeFile(dir + "/w.goal", "num_ranks 3\nrank 0 {\nl1: allreduce 300b\n}\nrank 1 {\n"
                             "l1: allreduce 300b\n}\nrank 2 {\nl1: allreduce 300b\n}\n");
  RunResult r = runInfracc({dir + "/w.goal", "-passes=lower-collectives",
                            "-coll-selection=" + dir + "/sel.txt", "-emit=goal", "-stats"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("3 lower-collectives - Collectives lowered with direct"),
            std::string::npos)
      << r.err;
}

TEST(Selection, FileErrors) {
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagEngine diags(os);
  diags.setErrorLimit(0);
  std::optional<SelectionPolicy> p = SelectionPolicy::parse(
      diags,
      "allreduce * *\nallreduse * * ring\nallreduce 10x * ring\nallreduce 9..3 * ring\n"
      "alltoall * * ring\nbarrier * * quick\nbcast * ** binomial\nbcast * * binomial extra\n",
      "sel.txt");
  os.flush();
  EXPECT_FALSE(p);
  EXPECT_EQ(messageLines(out),
            (std::vector<std::string>{
                "sel.txt:1:13: error: a rule is <collective> <size> <ranks> <algorithm>; this "
                "line has 3 fields",
                "sel.txt:2:1: error: unknown collective 'allreduse' (collectives are allreduce, "
                "allgather, reducescatter, bcast, reduce, alltoall, alltoallv, barrier, gather, "
                "scatter)",
                "sel.txt:3:11: error: '10x' is not a size in bytes (a whole number, optionally "
                "with KiB, MiB or GiB)",
                "sel.txt:4:11: error: the range '9..3' is empty; write low..high",
                "sel.txt:5:14: error: algorithm 'ring' does not implement alltoall (alltoall "
                "has: linear, pairwise, bruck, direct)",
                "sel.txt:6:13: error: unknown algorithm 'quick' (algorithms are ring, recdoub, "
                "rabenseifner, binomial, binary, dbtree, dissemination, linear, pairwise, bruck, "
                "direct, hierarchical, tree)",
                "sel.txt:7:9: error: '**' is not a rank count (a whole number)",
                "sel.txt:8:20: error: unexpected 'extra': a rule is <collective> <size> <ranks> "
                "<algorithm>"}));
}

TEST(Selection, AlgorithmThatCannotLowerIsReportedAtTheStatement) {
  std::string dir = makeTempDir("coll-why");
  writeFile(dir + "/w.goal", "num_ranks 2\nrank 0 {\nl1: alltoall 8b algo ring\n}\nrank 1 {\n"
                             "l1: alltoall 8b algo ring\n}\n");
  RunResult r = runInfracc({dir + "/w.goal", "-passes=lower-collectives", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("w.goal:3:5: error: algorithm 'ring' does not implement alltoall "
                       "(alltoall has: linear, pairwise, bruck, direct)"),
            std::string::npos)
      << r.err;
  writeFile(dir + "/h.goal", "num_ranks 2\nrank 0 {\nl1: allreduce 8b algo hierarchical\n}\n"
                             "rank 1 {\nl1: allreduce 8b algo hierarchical\n}\n");
  r = runInfracc({dir + "/h.goal", "-passes=lower-collectives", "-emit=goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("h.goal:3:5: error: algorithm 'hierarchical' needs to know which host "
                       "each rank is on: give a fabric and place the ranks"),
            std::string::npos)
      << r.err;
}

} // namespace

namespace {

// Eight ranks, each an allgather then a reduce-scatter of 4096 bytes.
const char *const BlocksGoal =
    "num_ranks 8\n"
    "rank 0 {\nl1: allgather 4096b\nl2: reducescatter 4096b\nl2 requires l1\n}\n"
    "rank 1 {\nl1: allgather 4096b\nl2: reducescatter 4096b\nl2 requires l1\n}\n"
    "rank 2 {\nl1: allgather 4096b\nl2: reducescatter 4096b\nl2 requires l1\n}\n"
    "rank 3 {\nl1: allgather 4096b\nl2: reducescatter 4096b\nl2 requires l1\n}\n"
    "rank 4 {\nl1: allgather 4096b\nl2: reducescatter 4096b\nl2 requires l1\n}\n"
    "rank 5 {\nl1: allgather 4096b\nl2: reducescatter 4096b\nl2 requires l1\n}\n"
    "rank 6 {\nl1: allgather 4096b\nl2: reducescatter 4096b\nl2 requires l1\n}\n"
    "rank 7 {\nl1: allgather 4096b\nl2: reducescatter 4096b\nl2 requires l1\n}\n";

TEST(Selection, HierarchicalRulesLowerAllgatherAndReducescatterOnAFabric) {
  std::string dir = makeTempDir("coll-hier");
  writeFile(dir + "/w.goal", BlocksGoal);
  writeFile(dir + "/sel.txt", "allgather * * hierarchical\nreducescatter * * hierarchical\n");
  // Round-robin over the 4 hosts of the DGX example: 2 ranks per host.
  RunResult r = runInfracc({sourcePath("examples/dgx_cluster.yaml"), "w.goal",
                            "-coll-selection=sel.txt", "-place=round-robin",
                            "-passes=place,lower-collectives", "-verify-collectives",
                            "-emit=goal", "-o", "plain.goal", "-stats"},
                           dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("16 lower-collectives - Collectives lowered with hierarchical"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(" 2 lower-collectives - Collectives proven by the semantic checker"),
            std::string::npos)
      << r.err;
}

TEST(Selection, HierarchicalRuleWithoutHostsIsAnErrorAtTheRule) {
  std::string dir = makeTempDir("coll-hier");
  writeFile(dir + "/w.goal", BlocksGoal);
  writeFile(dir + "/sel.txt", "allgather * * hierarchical\n");
  RunResult r = runInfracc({"w.goal", "-coll-selection=sel.txt", "-passes=lower-collectives",
                            "-emit=goal"},
                           dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "sel.txt:1:1: error: this rule matches the allgather of 4096 bytes on 8 ranks, "
                   "but algorithm 'hierarchical' needs to know which host each rank is on: give "
                   "a fabric and place the ranks (-passes=place,...)\n"
                   "allgather * * hierarchical\n^\n"
                   "w.goal:3:5: note: the collective is here\nl1: allgather 4096b\n    ^\n");
}

} // namespace
