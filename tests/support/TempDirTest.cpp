// Test runs leave nothing in the temp directory: a few tests that make temporary
// directories and run infracc are run again in a child process whose TMPDIR is a
// fresh directory, which must be empty afterwards.
#include "tests/support/TestUtil.h"

#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Program.h>

#include <gtest/gtest.h>

extern char **environ;

using namespace infracc::test;

namespace {
int anchor;
}

TEST(TestSupport, TestsLeaveNothingInTheTempDirectory) {
  std::string tmp = makeTempDir("tmpdir");
  std::string self = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  ASSERT_FALSE(self.empty());
  std::vector<std::string> env = {"TMPDIR=" + tmp};
  for (char **e = environ; *e; ++e)
    if (!llvm::StringRef(*e).starts_with("TMPDIR=") &&
        !llvm::StringRef(*e).starts_with("INFRACC_KEEP_TEMP="))
      env.push_back(*e);
  std::vector<llvm::StringRef> envRefs(env.begin(), env.end());
  std::string out = makeTempDir("tmpdir-log") + "/out.txt";
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(out),
                                                llvm::StringRef(out)};
  // Tests that make directories, write outputs there and run infracc.
  int status = llvm::sys::ExecuteAndWait(
      self,
      {self, "--gtest_filter=Output.DevNullStaysADevice:Liballprof.RequestHandlesInHex:"
             "VisualizeCli.FullViewBeyondMaxNodesDrawsTheOverview"},
      envRefs, redirects);
  ASSERT_EQ(status, 0) << readFile(out);
  EXPECT_NE(readFile(out).find("[  PASSED  ] 3 tests."), std::string::npos) << readFile(out);
  std::vector<std::string> left;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(tmp, ec), end; it != end && !ec; it.increment(ec))
    left.push_back(it->path());
  EXPECT_EQ(left, std::vector<std::string>{});
}
