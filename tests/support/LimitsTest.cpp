// -max-memory: sizes read from input are checked before memory is reserved.
#include "support/Limits.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

TEST(Limits, ByteSizes) {
  EXPECT_EQ(parseByteSize("512"), 512u);
  EXPECT_EQ(parseByteSize("512B"), 512u);
  EXPECT_EQ(parseByteSize("4K"), 4096u);
  EXPECT_EQ(parseByteSize("512M"), 512ull << 20);
  EXPECT_EQ(parseByteSize("512MiB"), 512ull << 20);
  EXPECT_EQ(parseByteSize("512MB"), 512ull << 20);
  EXPECT_EQ(parseByteSize("8g"), 8ull << 30);
  EXPECT_EQ(parseByteSize("2 TiB"), 2ull << 40);
  EXPECT_EQ(parseByteSize(""), std::nullopt);
  EXPECT_EQ(parseByteSize("M"), std::nullopt);
  EXPECT_EQ(parseByteSize("1.5G"), std::nullopt);
  EXPECT_EQ(parseByteSize("8Gb"), std::nullopt);
  EXPECT_EQ(parseByteSize("8X"), std::nullopt);
  EXPECT_EQ(parseByteSize("16777216T"), std::nullopt);   // 2^64: does not fit
}

TEST(Limits, FormatBytes) {
  EXPECT_EQ(formatBytes(12), "12 bytes");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(224ull << 20), "224.0 MiB");
  EXPECT_EQ(formatBytes(3ull << 40), "3.0 TiB");
}

TEST(Limits, FabricLargerThanMaxMemoryIsRefusedBeforeExpansion) {
  RunResult r = runInfracc({"-fabric=clos:radix=1024,levels=2", "-max-memory=200M", "-emit=stats"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "-fabric: error: the fabric's 3671552 nodes would need about 224.1 MiB "
                   "(3671552 x 64 bytes), more than -max-memory (200.0 MiB); raise it with "
                   "-max-memory=\n");
  // A smaller one fits.
  r = runInfracc({"-fabric=clos:radix=64,levels=2", "-max-memory=200M", "-emit=digest"});
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(Limits, Many2ManyEdgeIsCheckedBeforeItsPairsAreMade) {
  std::string dir = makeTempDir("limits");
  writeFile(dir + "/m.yaml", R"(name: m2m
devices:
- name: box
  components:
  - {name: port, count: 100000, choice: port}
  links:
  - name: l
  edges:
  - {ep1: {component: port}, ep2: {component: port}, scheme: many2many, link: l}
instances:
- {name: box, device: box, count: 1}
links: []
edges: []
)");
  RunResult r = runInfracc({dir + "/m.yaml", "-max-memory=1G"});
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("m.yaml:9:5: error: this many2many edge's 100000 x 100000 pairs would "
                       "need about 372.5 GiB (10000000000 x 40 bytes), more than -max-memory "
                       "(1.0 GiB); raise it with -max-memory=\n"),
            std::string::npos)
      << r.err;
}

TEST(Limits, MaxMemoryMustBeASize) {
  RunResult r = runInfracc({"-fabric=clos:radix=8", "-max-memory=lots"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: for the --max-memory option: 'lots' is not a memory size; write a "
                   "number of bytes with an optional K, M, G or T (binary: 512M, 8G, 8GiB)\n");
}

// Found by fuzzing (tests/fuzz/corpus/goal-text/regress-huge-world): a collective made
// the world communicator of num_ranks ranks before the missing blocks were noticed.
TEST(Limits, NumRanksBeyondWhatTheFileCanHoldIsRefusedAtTheHeader) {
  std::string dir = makeTempDir("limits");
  writeFile(dir + "/big.goal", "num_ranks 321048576\nrank 0 {\nl1: allreduce 8b\n}\n");
  RunResult r = runInfracc({dir + "/big.goal"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, dir + "/big.goal:1:11: error: num_ranks is 321048576, but this file of 48 "
                         "bytes has room for at most 6 rank blocks (every rank needs one, e.g. "
                         "'rank 5 {}')\nnum_ranks 321048576\n          ^\n");
}
