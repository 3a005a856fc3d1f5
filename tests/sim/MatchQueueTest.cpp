// The matching queues against the plain list LogGOPSim searches (LIST_MATCH: front to
// back, the first entry matching (source, tag) wins, a wildcard on either side matches
// anything) and against ATLAHS's exact-key FIFOs, on random sequences that drive queues
// far past ListLimit (hashed mode), back to empty (list mode again) and through both
// several times.
#include "backends/sim/MatchQueue.h"

#include <gtest/gtest.h>

#include <list>
#include <random>

using namespace infracc::sim;

namespace {

struct Ref {
  uint32_t src, tag, op;
};

bool lgsMatches(const Ref &e, uint32_t src, uint32_t tag) {
  return (src == Wildcard || e.src == Wildcard || e.src == src) &&
         (tag == Wildcard || e.tag == Wildcard || e.tag == tag);
}

// Fills one queue to `peak` entries, then drains it with random searches, `rounds` times;
// every take must return the entry the reference list returns (or none when it has none).
void compareWithReference(bool exactOnly, uint32_t peak, unsigned seed) {
  std::mt19937 rng(seed);
  const uint32_t ranks = 3, rank = 1;
  MatchQueues q(ranks, 100000, exactOnly);
  std::list<Ref> ref;
  uint32_t nextOp = 0;
  auto pick = [&](uint32_t n) {
    // Mostly a few sources and tags (so buckets hold several entries), sometimes a
    // wildcard (not for ATLAHS, whose -1 is a plain value: the same thing here).
    return rng() % 8 == 0 ? Wildcard : uint32_t(rng() % n);
  };
  for (int round = 0; round < 4; ++round) {
    while (ref.size() < peak) {
      uint32_t src = pick(5), tag = pick(3), op = nextOp++;
      q.append(MatchQueues::Posted, rank, op, src, tag, op);
      ref.push_back({src, tag, op});
      ASSERT_EQ(q.size(MatchQueues::Posted, rank), ref.size());
    }
    for (int tries = 0; !ref.empty() && tries < 20000; ++tries) {
      uint32_t src = pick(5), tag = pick(3);
      auto it = ref.begin();
      for (; it != ref.end(); ++it)
        if (exactOnly ? (it->src == src && it->tag == tag) : lgsMatches(*it, src, tag))
          break;
      MatchQueues::Entry got;
      bool found = q.take(MatchQueues::Posted, rank, src, tag, got);
      ASSERT_EQ(found, it != ref.end()) << "round " << round << " search " << src << "/" << tag;
      if (found) {
        EXPECT_EQ(got.op, it->op) << "round " << round << " search " << src << "/" << tag;
        ref.erase(it);
      }
      ASSERT_EQ(q.size(MatchQueues::Posted, rank), ref.size());
    }
    ASSERT_TRUE(ref.empty());
    EXPECT_EQ(q.size(MatchQueues::Unexpected, rank), 0u);
    EXPECT_EQ(q.size(MatchQueues::Posted, 0), 0u);
  }
}

} // namespace

TEST(MatchQueues, LongQueuesMatchLikeLogGOPSimsList) {
  for (uint32_t peak : {MatchQueues::ListLimit, MatchQueues::ListLimit + 1, 100u, 1000u})
    for (unsigned seed : {1u, 2u, 3u})
      compareWithReference(false, peak, seed);
}

TEST(MatchQueues, LongQueuesMatchLikeAtlahsExactKeys) {
  for (uint32_t peak : {MatchQueues::ListLimit + 1, 500u})
    for (unsigned seed : {4u, 5u})
      compareWithReference(true, peak, seed);
}
