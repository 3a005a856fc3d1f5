#include "ir/Schedule.h"

#include <gtest/gtest.h>

using namespace infracc;

TEST(Schedule, BuilderOrdersSuccessorsRequiresFirst) {
  ScheduleBuilder b(2);
  b.beginRank(0);
  auto l1 = b.addCalc(1);
  auto l2 = b.addSend(1, 1);
  auto l3 = b.addCalc(2);
  auto l4 = b.addCalc(3);
  b.addDependency(l2, l1, DepKind::Requires);
  b.addDependency(l3, l2, DepKind::IRequires);
  b.addDependency(l4, l2, DepKind::Requires);
  b.addDependency(l4, l3, DepKind::Requires);
  b.endRank();
  b.beginRank(1);
  b.addRecv(1, 0);
  b.endRank();
  Schedule s = b.finish();
  ASSERT_EQ(s.numRanks(), 2u);
  EXPECT_EQ(s.numOps(0), 4u);
  EXPECT_EQ(s.numOps(1), 1u);
  uint32_t send = s.globalIndex(0, l2);
  ASSERT_EQ(s.numSuccessors(send), 2u);
  EXPECT_EQ(s.successor(send, 0), l4);   // requires first
  EXPECT_EQ(s.successorKind(send, 0), DepKind::Requires);
  EXPECT_EQ(s.successor(send, 1), l3);
  EXPECT_EQ(s.successorKind(send, 1), DepKind::IRequires);
  EXPECT_EQ(s.kind(s.globalIndex(1, 0)), OpKind::Recv);
  EXPECT_EQ(s.peer(s.globalIndex(1, 0)), 0u);
}

TEST(Schedule, SkippedRanksAreEmpty) {
  ScheduleBuilder b(4);
  b.beginRank(2);
  b.addCalc(5);
  b.endRank();
  Schedule s = b.finish();
  EXPECT_EQ(s.numOps(0), 0u);
  EXPECT_EQ(s.numOps(1), 0u);
  EXPECT_EQ(s.numOps(2), 1u);
  EXPECT_EQ(s.numOps(3), 0u);
}
