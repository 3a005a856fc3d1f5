// crashInChild: a crash in the dry run is reported, not suffered; anything else is not
// a crash, and the dry run's effects stay in the child.
#include "support/Isolation.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <unistd.h>

TEST(Isolation, CrashInChild) {
  EXPECT_EQ(infracc::crashInChild([] { std::raise(SIGSEGV); }), "Segmentation fault");
  EXPECT_EQ(infracc::crashInChild([] { std::abort(); }), "Aborted");
  EXPECT_EQ(infracc::crashInChild([] { _exit(3); }), std::nullopt);
  int touched = 0;
  EXPECT_EQ(infracc::crashInChild([&] { touched = 1; }), std::nullopt);
  EXPECT_EQ(touched, 0);
}
