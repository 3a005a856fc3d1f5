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

TEST(Schedule, LabelsAreKeptCompactly) {
  ScheduleBuilder b(3, /*keepLabels=*/true);
  b.beginRank(0);
  b.addOp(OpKind::Calc, 0, 1, 0, 0, 0, "l1");
  b.addOp(OpKind::Calc, 0, 1, 0, 0, 0, "l0");
  b.addOp(OpKind::Calc, 0, 1, 0, 0, 0, "l007");         // leading zeros: kept as text
  b.addOp(OpKind::Calc, 0, 1, 0, 0, 0, "l2147483648");  // above 2^31-1: kept as text
  b.addOp(OpKind::Calc, 0, 1, 0, 0, 0, "");             // unlabelled
  b.addOp(OpKind::Calc, 0, 1, 0, 0, 0, "requires");
  b.endRank();
  b.beginRank(2);
  b.addOp(OpKind::Calc, 0, 1, 0, 0, 0, "l2147483647");
  b.endRank();
  Schedule s = b.finish();
  EXPECT_TRUE(s.hasLabels());
  EXPECT_EQ(s.label(0), "l1");
  EXPECT_EQ(s.label(1), "l0");
  EXPECT_EQ(s.label(2), "l007");
  EXPECT_EQ(s.label(3), "l2147483648");
  EXPECT_EQ(s.label(4), "");
  EXPECT_EQ(s.label(5), "requires");
  EXPECT_EQ(s.label(6), "l2147483647");
  EXPECT_EQ(s.opName(0), "'l1'");
  EXPECT_EQ(s.opName(4), "#4");
  EXPECT_EQ(s.opName(6), "'l2147483647'");
  EXPECT_EQ(s.rankOf(0), 0u);
  EXPECT_EQ(s.rankOf(5), 0u);
  EXPECT_EQ(s.rankOf(6), 2u);   // rank 1 is empty
  s.dropLabels();
  EXPECT_FALSE(s.hasLabels());
  EXPECT_EQ(s.opName(6), "#0");
}

TEST(Schedule, BulkRanksMatchTheOpByOpBuilder) {
  // The same rank through addOp/addDependency and through appendRank/commitRank.
  ScheduleBuilder a(1);
  a.beginRank(0);
  a.addOp(OpKind::Send, 0, 8, 3, 2, 1);
  a.addOp(OpKind::Recv, AnySource, 8, AnyTag, 0, 300);
  a.addCalc(5, 7);
  a.addDependency(2, 0, DepKind::IRequires);
  a.addDependency(1, 0, DepKind::Requires);
  a.addDependency(2, 1, DepKind::Requires);
  a.endRank();
  Schedule sa = a.finish();

  ScheduleBuilder b(1);
  ScheduleBuilder::RankArrays r = b.appendRank(0, 3, 3);
  OpKind kinds[] = {OpKind::Send, OpKind::Recv, OpKind::Calc};
  uint32_t peers[] = {0, AnySource, 0}, tags[] = {3, AnyTag, 0}, counts[] = {2, 1, 0};
  uint64_t sizes[] = {8, 8, 5};
  uint16_t cpus[] = {2, 0, 7}, nics[] = {1, 300, 0};
  for (int i = 0; i < 3; ++i) {
    r.kind[i] = kinds[i];
    r.peer[i] = peers[i];
    r.size[i] = sizes[i];
    r.tag[i] = tags[i];
    r.cpu[i] = cpus[i];
    r.nic[i] = nics[i];
    r.succCount[i] = counts[i];
  }
  r.succ[0] = 1;
  r.succ[1] = 2 | Schedule::IRequiresBit;
  r.succ[2] = 2;
  b.commitRank();
  Schedule sb = b.finish();
  ASSERT_EQ(sb.numOps(), sa.numOps());
  for (uint32_t g = 0; g < 3; ++g) {
    EXPECT_EQ(sb.kind(g), sa.kind(g));
    EXPECT_EQ(sb.peer(g), sa.peer(g));
    EXPECT_EQ(sb.tag(g), sa.tag(g));
    EXPECT_EQ(sb.cpu(g), sa.cpu(g));
    EXPECT_EQ(sb.nic(g), sa.nic(g));
    EXPECT_EQ(sb.successorsRaw(g).vec(), sa.successorsRaw(g).vec());
  }
  EXPECT_EQ(sa.successorsRaw(0).vec(), (std::vector<uint32_t>{1, 2 | Schedule::IRequiresBit}));
  EXPECT_EQ(sb.maxCpu(), 7u);
  EXPECT_EQ(sb.maxNic(), 300u);
}
