// The annotation name syntax: the names a spec means, in the reference's order, made
// one at a time.
#include "ir/AnnotationNames.h"

#include <gtest/gtest.h>

using namespace infracc;

namespace {

std::string all(llvm::StringRef spec) {
  std::string out;
  AnnotationNames(spec).forEach([&](const std::string &n) {
    out += (out.empty() ? "" : " ") + n;
    return true;
  });
  return out;
}

} // namespace

TEST(AnnotationNames, SlicesCombineLastFastest) {
  EXPECT_EQ(all("server[0:2]xpu[0:3]"),
            "server.0.xpu.0 server.0.xpu.1 server.0.xpu.2 server.1.xpu.0 server.1.xpu.1 "
            "server.1.xpu.2");
  // [0] is no slice: the 0 is a part of its own.
  EXPECT_EQ(all("host[2:4]nic[0]"), "host.2.nic.0 host.3.nic.0");
  EXPECT_EQ(all("host"), "host");
  EXPECT_EQ(all("host.0.xpu[0:2]"), "host.0.xpu[0:2]");   // a dot: taken as it is
  EXPECT_EQ(all("a b"), "a.b");
}

TEST(AnnotationNames, EmptyOnlyForNothingOrAnEmptySlice) {
  EXPECT_TRUE(AnnotationNames("").empty());
  EXPECT_TRUE(AnnotationNames("host[3:3]").empty());
  EXPECT_TRUE(AnnotationNames("host[0:2]xpu[5:1]").empty());
  EXPECT_EQ(all("host[0:2]xpu[5:1]"), "");
  EXPECT_FALSE(AnnotationNames("host[0:1]").empty());
  // No part at all: one empty name, as the reference's join of nothing.
  EXPECT_FALSE(AnnotationNames("[]").empty());
  EXPECT_EQ(all("!!"), "");
}

// A slice of 2^64 - 1 indices costs only the names looked at: the lookup stops at the
// first name that is no node.
TEST(AnnotationNames, MadeOneAtATime) {
  int calls = 0;
  std::string last;
  AnnotationNames("host[0:18446744073709551615]xpu[0:99999999]")
      .forEach([&](const std::string &n) {
        last = n;
        return ++calls < 5;
      });
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(last, "host.0.xpu.4");
}
