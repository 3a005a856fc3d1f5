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

TEST(Schedule, PackedCopyMatchesTheOwnedSchedule) {
  // Every accessor, by global index and through RankOps, on both storages; nic 300
  // does not fit a record's byte and is kept beside the records.
  ScheduleBuilder a(3);
  a.beginRank(0);
  a.addOp(OpKind::Send, 2, 8, 3, 2, 1);
  a.addOp(OpKind::Recv, AnySource, 8, AnyTag, 0, 300);
  a.addCalc(5, 7);
  a.addDependency(2, 0, DepKind::IRequires);
  a.addDependency(1, 0, DepKind::Requires);
  a.addDependency(2, 1, DepKind::Requires);
  a.endRank();
  a.beginRank(2);
  a.addOp(OpKind::Recv, 0, 8, 3, 0, 0);
  a.addCalc(1);
  a.addDependency(1, 0, DepKind::Requires);
  a.endRank();
  Schedule sa = a.finish();
  Schedule sb = sa.packedCopy();
  EXPECT_FALSE(sa.isPacked());
  ASSERT_TRUE(sb.isPacked());
  ASSERT_EQ(sb.numOps(), sa.numOps());
  ASSERT_EQ(sb.numRanks(), 3u);
  EXPECT_EQ(sb.numOps(1), 0u);
  EXPECT_EQ(sb.numDependencies(), 4u);
  for (uint32_t g = 0; g < 5; ++g) {
    EXPECT_EQ(sb.kind(g), sa.kind(g));
    EXPECT_EQ(sb.peer(g), sa.peer(g));
    EXPECT_EQ(sb.size(g), sa.size(g));
    EXPECT_EQ(sb.tag(g), sa.tag(g));
    EXPECT_EQ(sb.cpu(g), sa.cpu(g));
    EXPECT_EQ(sb.nic(g), sa.nic(g));
    EXPECT_EQ(sb.rankOf(g), sa.rankOf(g));
    EXPECT_EQ(sb.successorsRaw(g).vec(), sa.successorsRaw(g).vec());
  }
  for (uint32_t r = 0; r < 3; ++r) {
    RankOps pa = sa.ops(r), pb = sb.ops(r);
    ASSERT_EQ(pb.size(), pa.size());
    for (uint32_t i = 0; i < pa.size(); ++i) {
      EXPECT_EQ(pb.globalIndex(i), pa.globalIndex(i));
      EXPECT_EQ(pb.kind(i), pa.kind(i));
      EXPECT_EQ(pb.peer(i), pa.peer(i));
      EXPECT_EQ(pb.opSize(i), pa.opSize(i));
      EXPECT_EQ(pb.tag(i), pa.tag(i));
      EXPECT_EQ(pb.cpu(i), pa.cpu(i));
      EXPECT_EQ(pb.nic(i), pa.nic(i));
      EXPECT_EQ(pb.successorsRaw(i).vec(), pa.successorsRaw(i).vec());
    }
  }
  EXPECT_EQ(sa.successorsRaw(0).vec(), (std::vector<uint32_t>{1, 2 | Schedule::IRequiresBit}));
  EXPECT_EQ(sb.successorKind(0, 1), DepKind::IRequires);
  EXPECT_EQ(sb.successor(0, 1), 2u);
  EXPECT_EQ(sb.nic(1), 300u);
  EXPECT_EQ(sb.maxCpu(), 7u);
  EXPECT_EQ(sb.maxNic(), 300u);
}

TEST(Schedule, PackedRankLookupSkipsEmptyRanks) {
  // More ops than one lookup chunk (256), with runs of empty ranks between: rankOf by
  // table and binary search must agree with the owned schedule's binary search.
  ScheduleBuilder b(1000);
  for (uint32_t r = 0; r < 1000; r += (r % 7 == 0 ? 13 : 1)) {
    b.beginRank(r);
    for (uint32_t i = 0; i < r % 5; ++i)
      b.addCalc(i);
    b.endRank();
  }
  Schedule owned = b.finish();
  Schedule packed = owned.packedCopy();
  ASSERT_GT(owned.numOps(), 256u);
  for (uint32_t g = 0; g < owned.numOps(); ++g)
    ASSERT_EQ(packed.rankOf(g), owned.rankOf(g)) << g;
}
