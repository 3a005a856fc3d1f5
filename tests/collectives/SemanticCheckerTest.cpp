// The semantic checker rejects what is wrong: missing data dependencies (Schedgen's
// own dissemination and allreduce_recdoub graphs), a dropped dependency, a lost
// message, double counting, and messages that cannot be told apart.
#include "tests/collectives/CollTestUtil.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

namespace {

// A copy of `s` without the `which`-th successor edge of global op `g`.
Schedule withoutEdge(const Schedule &s, uint32_t g, uint32_t which) {
  ScheduleBuilder b(s.numRanks());
  for (uint32_t r = 0; r < s.numRanks(); ++r) {
    b.beginRank(r);
    uint32_t first = s.rankBegin(r);
    for (uint32_t i = 0; i < s.numOps(r); ++i)
      b.addOp(s.kind(first + i), s.peer(first + i), s.size(first + i), s.tag(first + i),
              s.cpu(first + i), s.nic(first + i));
    for (uint32_t i = 0; i < s.numOps(r); ++i)
      for (uint32_t k = 0; k < s.numSuccessors(first + i); ++k)
        if (!(first + i == g && k == which))
          b.addDependency(s.successor(first + i, k), i, s.successorKind(first + i, k));
    b.endRank();
  }
  return b.finish();
}

TEST(SemanticChecker, SchedgenDisseminationLacksDataDependencies) {
  // With only Schedgen's edges, rank 3's third send (round dist=4) forwards what it
  // learnt from rank 2 in the first round without waiting for it: rank 3's ops are
  // send, recv, send (after recv #1), recv, send #4 (after recv #3 only).
  CollCase c;
  c.kind = CollectiveKind::Barrier;
  c.algo = CollAlgorithm::Dissemination;
  c.members = 8;
  c.schedgenDeps = true;
  Lowered l = lowerAndCheck(c);
  ASSERT_TRUE(l.schedule);
  ASSERT_FALSE(l.check.ok());
  EXPECT_EQ(l.check.errors[0],
            "barrier 0b on 8 ranks (communicator 0, algorithm dissemination): rank 3 send #4 "
            "(to rank 7) reads bytes [2,3) that rank 3 recv #1 (from rank 2) also accesses, but "
            "nothing orders the two");
  c.schedgenDeps = false;
  EXPECT_TRUE(lowerAndCheck(c).check.ok());
}

TEST(SemanticChecker, SchedgenRecdoubLacksDataDependencies) {
  CollCase c;
  c.kind = CollectiveKind::Allreduce;
  c.algo = CollAlgorithm::Rabenseifner;
  c.members = 8;
  c.bytes = 1024;
  c.schedgenDeps = true;
  Lowered l = lowerAndCheck(c);
  ASSERT_FALSE(l.check.ok());
  // Rank 3 (binary 011) keeps blocks 4-7, then 6-7, then sends block 7 ([896,1024))
  // to rank 7 after its second recv only; its first recv (from rank 2) reduced into
  // those bytes too.
  EXPECT_EQ(l.check.errors[0],
            "allreduce 1024b on 8 ranks (communicator 0, algorithm rabenseifner): rank 3 send "
            "#4 (to rank 7) reads bytes [896,1024) that rank 3 recv #1 (from rank 2) also "
            "accesses, but nothing orders the two");
  c.schedgenDeps = false;
  EXPECT_TRUE(lowerAndCheck(c).check.ok());
}

TEST(SemanticChecker, ADroppedDependencyIsARace) {
  CollCase c;
  c.kind = CollectiveKind::Allreduce;
  c.algo = CollAlgorithm::Ring;
  c.members = 3;
  c.bytes = 300;
  Lowered l = lowerAndCheck(c);
  ASSERT_TRUE(l.check.ok()) << l.checkText();
  // Rank 1's second send (#2) requires its first recv (#1): drop that edge.
  Schedule broken = withoutEdge(*l.schedule, l.schedule->rankBegin(1) + 1, 0);
  coll::CheckResult r = coll::checkCollectives(broken, l.rec, makeCollectiveSchedule(c).communicators());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0], "allreduce 300b on 3 ranks (communicator 0, algorithm ring): rank 1 "
                         "recv #1 (from rank 0) writes bytes [0,100) that rank 1 send #2 (to "
                         "rank 2) also accesses, but nothing orders the two");
}

TEST(SemanticChecker, DoubleCountingIsCaught) {
  CollCase c;
  c.kind = CollectiveKind::Allreduce;
  c.algo = CollAlgorithm::Ring;
  c.members = 2;
  c.bytes = 100;
  Lowered l = lowerAndCheck(c);
  ASSERT_TRUE(l.check.ok()) << l.checkText();
  // Rank 0: send block 0, recv block 1 (reduce), send block 1, recv block 0 (copy).
  // Make the last recv reduce: block 0 then counts rank 0 twice.
  ASSERT_EQ(l.rec.records[3].mode, coll::DataMode::Copy);
  l.rec.records[3].mode = coll::DataMode::Reduce;
  coll::CheckResult r =
      coll::checkCollectives(*l.schedule, l.rec, makeCollectiveSchedule(c).communicators());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0], "allreduce 100b on 2 ranks (communicator 0, algorithm ring): afterwards "
                         "rank 0 (member 0) holds contributions of members {0x2,1} in bytes "
                         "[0,50) of the result, but should hold contributions of members {0,1}");
}

TEST(SemanticChecker, PayloadAndWireSizeMustAgree) {
  CollCase c;
  c.kind = CollectiveKind::Bcast;
  c.algo = CollAlgorithm::Binomial;
  c.members = 4;
  c.bytes = 64;
  Lowered l = lowerAndCheck(c);
  ASSERT_TRUE(l.check.ok()) << l.checkText();
  // Root 0 sends to 1 and 2; rank 1 forwards to 3. Pretend rank 1's forward carries
  // only half of the buffer (on both ends).
  uint32_t fwd = l.schedule->rankBegin(1) + 1, recv3 = l.schedule->rankBegin(3);
  ASSERT_EQ(l.schedule->kind(fwd), OpKind::Send);
  ASSERT_EQ(l.schedule->kind(recv3), OpKind::Recv);
  l.rec.intervals[l.rec.records[fwd].intervalsBegin].hi = 32;
  l.rec.intervals[l.rec.records[recv3].intervalsBegin].hi = 32;
  l.rec.records[fwd].payload = l.rec.records[recv3].payload = 32;
  coll::CheckResult r =
      coll::checkCollectives(*l.schedule, l.rec, makeCollectiveSchedule(c).communicators());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0], "rank 1 send #1 (to rank 3) has size 64 and its recv 64, but 32 bytes "
                         "of data take 32 on the wire");
}

TEST(SemanticChecker, AmbiguousTagsAreCaught) {
  // Two messages between the same ranks with the same tag: matching would depend on
  // timing. Build the schedule by hand with a recording that claims both.
  CollCase c;
  c.kind = CollectiveKind::Allgather;
  c.algo = CollAlgorithm::Direct;
  c.members = 2;
  c.bytes = 8;
  Lowered l = lowerAndCheck(c);
  ASSERT_TRUE(l.check.ok()) << l.checkText();
  ScheduleBuilder b(2);
  for (uint32_t r = 0; r < 2; ++r) {
    b.beginRank(r);
    const Schedule &s = *l.schedule;
    uint32_t g = s.rankBegin(r);
    for (int twice = 0; twice < 2; ++twice) {
      b.addOp(s.kind(g), s.peer(g), s.size(g), s.tag(g));
      b.addOp(s.kind(g + 1), s.peer(g + 1), s.size(g + 1), s.tag(g + 1));
    }
    b.endRank();
  }
  Schedule doubled = b.finish();
  coll::Recording rec = l.rec;
  rec.records = {l.rec.records[0], l.rec.records[1], l.rec.records[0], l.rec.records[1],
                 l.rec.records[2], l.rec.records[3], l.rec.records[2], l.rec.records[3]};
  coll::CheckResult r =
      coll::checkCollectives(doubled, rec, makeCollectiveSchedule(c).communicators());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors[0], "rank 0 send #2 (to rank 1) and rank 0 send #0 (to rank 1) share "
                         "source, destination and tag 2147483648, so which message each gets "
                         "depends on timing");
}

} // namespace
