// Outputs: devices are written directly, never replaced by a renamed temporary file.
#include "tests/support/TestUtil.h"

#include "ir/TargetRegistry.h"

#include <llvm/Support/FileSystem.h>

#include <gtest/gtest.h>

using namespace infracc::test;

TEST(Output, DevNullStaysADevice) {
  std::string dir = makeTempDir("output");
  writeFile(dir + "/x.goal", "num_ranks 1\nrank 0 {\nl1: calc 5\n}\n");
  RunResult r = runInfracc({dir + "/x.goal", "-emit=goal", "-o", "/dev/null"});
  EXPECT_EQ(r.status, 0) << r.err;
  llvm::sys::fs::file_status st;
  ASSERT_FALSE(llvm::sys::fs::status("/dev/null", st));
  EXPECT_EQ(st.type(), llvm::sys::fs::file_type::character_file);
}

TEST(Output, DirectoryTargetsWithoutDashOAreUsageErrors) {
  // Every target that writes a directory (htsim today) needs -o; without it the run
  // stops before reading anything (the input need not even exist).
  unsigned seen = 0;
  for (const infracc::Target *t : infracc::TargetRegistry::all()) {
    if (!t->writesDirectory)
      continue;
    ++seen;
    for (std::vector<std::string> args : {std::vector<std::string>{"missing.goal"},
                                          std::vector<std::string>{"missing.goal", "-o", "-"}}) {
      args.push_back("-emit=" + t->name);
      RunResult r = runInfracc(args);
      EXPECT_EQ(r.status, 2) << t->name;
      EXPECT_EQ(r.err, "infracc: error: -emit=" + t->name +
                           " writes a directory of files; name it with -o <dir> (e.g. -o out/)\n");
      EXPECT_EQ(r.out, "");
    }
  }
  EXPECT_GE(seen, 1u);
}
