#include "visualize/ScheduleView.h"

#include "tests/support/TestSchedules.h"
#include "tests/support/TestUtil.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::viz;
using infracc::test::nbp2p;

TEST(ScheduleView, LabelsReadLikeGoal) {
  ScheduleBuilder b(4);
  b.beginRank(0);
  b.addSend(1024, 3);
  b.addRecv(8, 2, 5);
  b.addCalc(500);
  b.addOp(OpKind::Send, 1, 1, 0, 1, 2);
  b.addRecv(4, AnySource, AnyTag);
  b.endRank();
  for (uint32_t r = 1; r < 4; ++r) {
    b.beginRank(r);
    b.endRank();
  }
  Schedule s = b.finish();
  EXPECT_EQ(opLabel(s, 0), "send 1024b → 3");
  EXPECT_EQ(opLabel(s, 1), "recv 8b ← 2 tag 5");
  EXPECT_EQ(opLabel(s, 2), "calc 500");
  EXPECT_EQ(opLabel(s, 3), "send 1b → 1 cpu 1 nic 2");
  EXPECT_EQ(opLabel(s, 4), "recv 4b ← any tag any");
}

TEST(ScheduleView, MessagesMatchInOrderPerSourceDestinationAndTag) {
  ScheduleBuilder b(2);
  b.beginRank(0);
  b.addSend(10, 1, 1);   // 0
  b.addSend(20, 1, 2);   // 1
  b.addSend(30, 1, 1);   // 2
  b.addSend(40, 1, 9);   // 3: nobody receives tag 9
  b.endRank();
  b.beginRank(1);
  b.addRecv(20, 0, 2);            // 4 <- 1
  b.addRecv(10, 0, 1);            // 5 <- 0 (first tag-1 send)
  b.addRecv(30, 0, 1);            // 6 <- 2
  b.addRecv(5, AnySource, 1);     // 7: wildcard, not matched
  b.addRecv(5, 0, 3);             // 8: no such send
  b.endRank();
  MessageMatching m = matchMessages(b.finish());
  ASSERT_EQ(m.matches.size(), 3u);
  EXPECT_EQ(m.matches[0].send, 1u);
  EXPECT_EQ(m.matches[0].recv, 4u);
  EXPECT_EQ(m.matches[1].send, 0u);
  EXPECT_EQ(m.matches[1].recv, 5u);
  EXPECT_EQ(m.matches[2].send, 2u);
  EXPECT_EQ(m.matches[2].recv, 6u);
  EXPECT_EQ(m.wildcardRecvs, 1u);
  EXPECT_EQ(m.unmatchedRecvs, 1u);
  EXPECT_EQ(m.unmatchedSends, 1u);
}

TEST(ScheduleView, DrawsRanksAsClustersWithDependencyStyles) {
  ScheduleViewOptions o;
  o.title = "test-nbp2p.goal";
  auto d = drawSchedule(nbp2p(), o);
  ASSERT_TRUE(bool(d)) << llvm::toString(d.takeError());
  EXPECT_EQ(d->clusters.size(), 2u);
  EXPECT_EQ(d->nodes.size(), 8u);
  // 4 dependencies per rank, then the one message.
  ASSERT_EQ(d->edges.size(), 9u);
  auto out = render(*d, "dot");
  ASSERT_TRUE(bool(out));
  EXPECT_EQ(infracc::test::compareGolden("visualize/nbp2p-schedule.dot", *out), "");
}

TEST(ScheduleView, RefusesLargeSchedules) {
  ScheduleViewOptions o;
  o.maxOps = 7;
  auto d = drawSchedule(nbp2p(), o);
  ASSERT_FALSE(bool(d));
  EXPECT_EQ(llvm::toString(d.takeError()),
            "the schedule has 8 ops, more than -max-ops=7; a picture that large cannot be read "
            "(raise -max-ops to draw it anyway)");
}
