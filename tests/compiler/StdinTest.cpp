// "-" as an input reads standard input: recognised by its first bytes, read once,
// named <stdin> in diagnostics.
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

using namespace infracc::test;

TEST(Stdin, FabricFromStandardInputHasTheFilesDigest) {
  std::string file = sourcePath("examples/single-switch.yaml");
  RunResult fromFile = runInfracc({file, "-emit=digest"});
  ASSERT_EQ(fromFile.status, 0) << fromFile.err;
  RunResult fromStdin = runInfracc({"-", "-emit=digest"}, "", file);
  EXPECT_EQ(fromStdin.status, 0) << fromStdin.err;
  EXPECT_EQ(fromStdin.out, fromFile.out);
  // JSON is told from YAML by its first character.
  fromStdin = runInfracc({"-", "-emit=digest"}, "", sourcePath("examples/single-switch.json"));
  EXPECT_EQ(fromStdin.status, 0) << fromStdin.err;
  EXPECT_EQ(fromStdin.out, fromFile.out);
}

TEST(Stdin, GoalTextAndBinaryFromStandardInput) {
  std::string goal = sourcePath("examples/ring-allreduce-16.goal");
  RunResult expected = runInfracc({goal, "-emit=sim"});
  ASSERT_EQ(expected.status, 0) << expected.err;
  RunResult text = runInfracc({"-", "-emit=sim"}, "", goal);
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(text.out, expected.out);

  std::string dir = makeTempDir("stdin");
  std::string bin = dir + "/ring.bin";
  ASSERT_EQ(runInfracc({goal, "-emit=goal-bin", "-o", bin}).status, 0);
  RunResult binary = runInfracc({"-", "-emit=sim"}, "", bin);
  EXPECT_EQ(binary.status, 0) << binary.err;
  EXPECT_EQ(binary.out, expected.out);
}

TEST(Stdin, ErrorsNameStdin) {
  std::string dir = makeTempDir("stdin");
  std::string bad = dir + "/bad.goal";
  writeFile(bad, "num_ranks 2\nrank 0 {\nl1: send 8b to 5\n}\nrank 1 {\n}\n");
  RunResult r = runInfracc({"-", "-emit=sim"}, "", bad);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "<stdin>:3:16: error: destination rank 5 is out of range: num_ranks is 2, "
                   "so ranks are 0..1\n"
                   "l1: send 8b to 5\n"
                   "               ^\n");
}

TEST(Stdin, GivenTwiceOrUnrecognisable) {
  RunResult r = runInfracc({"-", "-", "-emit=sim"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err, "infracc: error: standard input ('-') is given more than once\n");

  std::string dir = makeTempDir("stdin");
  std::string junk = dir + "/junk";
  writeFile(junk, "x: [\n");
  r = runInfracc({"-", "-emit=stats"}, "", junk);
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.err.rfind("infracc: error: cannot tell what standard input ('-') holds: it is "
                        "recognised by its first bytes only, as one of:\n  Chakra execution "
                        "traces",
                        0),
            0u)
      << r.err;
}
