// Outputs: devices are written directly, never replaced by a renamed temporary file.
#include "tests/support/TestUtil.h"

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
