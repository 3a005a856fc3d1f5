// treeProblem: a communicator's given tree (parent per member, -1 for the root) must have
// one root that every member reaches. Each path is walked once, so a chain of a million
// members is checked in linear time (walking every member to the root was quadratic:
// a 939 KB GOAL file with a 150,000-member chain took 21 s).
#include "ir/Collectives.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace {

std::vector<int32_t> chain(int32_t n) {   // member i's parent is i - 1
  std::vector<int32_t> up(static_cast<size_t>(n));
  std::iota(up.begin(), up.end(), -1);
  return up;
}

TEST(TreeProblem, RootsAndCycles) {
  EXPECT_EQ(infracc::treeProblem({-1, 0, 0, 1}), "");
  EXPECT_EQ(infracc::treeProblem({0, 0}), "has 0 roots ('-'), not one");
  EXPECT_EQ(infracc::treeProblem({-1, -1}), "has 2 roots ('-'), not one");
  // 1 -> 2 -> 1 is a cycle; 3 leads into it and is named only if it comes first.
  EXPECT_EQ(infracc::treeProblem({-1, 2, 1, 2}), "has a cycle through communicator rank 1");
  EXPECT_EQ(infracc::treeProblem({-1, 3, 1, 2}), "has a cycle through communicator rank 1");
  EXPECT_EQ(infracc::treeProblem({-1, 0, 3, 4, 3}), "has a cycle through communicator rank 2");
  // A member whose path was decided by an earlier walk, either way.
  EXPECT_EQ(infracc::treeProblem({1, -1, 0, 2}), "");
}

TEST(TreeProblem, LongChainsInLinearTime) {
  const int32_t n = 1000000;
  std::vector<int32_t> up = chain(n);
  EXPECT_EQ(infracc::treeProblem(up), "");
  // Reversed: every member's parent is the next one, the root last.
  for (int32_t i = 0; i < n; ++i)
    up[size_t(i)] = i + 1 < n ? i + 1 : -1;
  EXPECT_EQ(infracc::treeProblem(up), "");
  // The last two members point at each other: the first member on no path to the root
  // is named, after a million members that reach it.
  up = chain(n);
  up[size_t(n - 2)] = n - 1;
  EXPECT_EQ(infracc::treeProblem(up), "has a cycle through communicator rank 999998");
  up[5] = n - 1;   // an earlier member leading into the cycle
  EXPECT_EQ(infracc::treeProblem(up), "has a cycle through communicator rank 5");
}

} // namespace
