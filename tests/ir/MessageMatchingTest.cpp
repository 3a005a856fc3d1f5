// ir/MessageMatching.h: MPI-order pairing per (source, destination, tag).
#include "ir/MessageMatching.h"

#include <gtest/gtest.h>

using namespace infracc;

TEST(MessageMatching, PairsPerKeyInProgramOrder) {
  // Rank 0: op 0 = send tag 1 that requires op 1 = send tag 1 (so op 1 goes first),
  // op 2 = send tag 2. Rank 1: recvs tag 2, tag 1, tag 1, and a wildcard.
  ScheduleBuilder b(2);
  b.beginRank(0);
  b.addSend(10, 1, 1);
  b.addSend(20, 1, 1);
  b.addSend(30, 1, 2);
  b.addDependency(0, 1, DepKind::Requires);
  b.endRank();
  b.beginRank(1);
  b.addRecv(30, 0, 2);
  b.addRecv(20, 0, 1);
  b.addRecv(10, 0, 1);
  b.addRecv(1, AnySource, 7);
  b.endRank();
  Schedule s = b.finish();
  std::vector<uint32_t> pos;
  programOrder(s, 0, pos);
  EXPECT_EQ(pos, (std::vector<uint32_t>{1, 0, 2}));
  std::vector<uint32_t> p = matchMessages(s);
  const uint32_t r1 = s.rankBegin(1);
  EXPECT_EQ(p[1], r1 + 1);   // the first tag-1 send posted is op 1: the first tag-1 recv
  EXPECT_EQ(p[0], r1 + 2);
  EXPECT_EQ(p[2], r1 + 0);
  EXPECT_EQ(p[r1 + 0], 2u);
  EXPECT_EQ(p[r1 + 3], NoPartner);   // wildcards are left alone
  // Only the selected ops are considered.
  std::vector<uint32_t> some = matchMessages(s, [&](uint32_t g) { return g != 1 && g != r1 + 1; });
  EXPECT_EQ(some[0], r1 + 2);
  EXPECT_EQ(some[1], NoPartner);
}

TEST(MessageMatching, CyclesFollowTheRest) {
  ScheduleBuilder b(1);
  b.beginRank(0);
  b.addCalc(1);
  b.addCalc(2);
  b.addCalc(3);
  b.addDependency(0, 1, DepKind::Requires);
  b.addDependency(1, 0, DepKind::Requires);
  b.endRank();
  Schedule s = b.finish();
  std::vector<uint32_t> pos;
  programOrder(s, 0, pos);
  EXPECT_EQ(pos, (std::vector<uint32_t>{1, 2, 0}));
}
