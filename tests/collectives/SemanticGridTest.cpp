// The semantic checker across the grid: every algorithm for every collective it
// implements, on 1..17 ranks and some larger counts, with roots 0, P/2 and P-1, a
// size that does not divide evenly, a sub-communicator in reverse order, channels
// and chunks, and reduction calcs.
#include "tests/collectives/CollTestUtil.h"

#include "passes/collectives/Algorithms.h"

#include <gtest/gtest.h>

using namespace infracc;
using namespace infracc::test;

namespace {

struct GridParam {
  CollectiveKind kind;
  CollAlgorithm algo;
};

std::vector<GridParam> allPairs() {
  std::vector<GridParam> v;
  for (CollectiveKind k : allCollectiveKinds())
    for (CollAlgorithm a : coll::algorithmsFor(k))
      v.push_back({k, a});
  return v;
}

class SemanticGrid : public ::testing::TestWithParam<GridParam> {};

std::vector<uint32_t> sizes() {
  std::vector<uint32_t> v;
  for (uint32_t p = 1; p <= 17; ++p)
    v.push_back(p);
  for (uint32_t p : {24u, 31u, 32u, 48u, 64u})
    v.push_back(p);
  return v;
}

void expectProven(const CollCase &c) {
  Lowered l = lowerAndCheck(c);
  ASSERT_TRUE(l.schedule) << c.name() << "\n" << l.diags;
  EXPECT_TRUE(l.check.ok()) << c.name() << "\n" << l.checkText();
  EXPECT_EQ(l.check.instancesChecked, 1u) << c.name();
  EXPECT_EQ(l.check.racesChecked, 1u) << c.name();
}

TEST_P(SemanticGrid, EveryCaseIsProven) {
  GridParam gp = GetParam();
  bool rooted = collectiveHasRoot(gp.kind);
  for (uint32_t P : sizes()) {
    CollCase c;
    c.kind = gp.kind;
    c.algo = gp.algo;
    c.members = P;
    if (gp.algo == CollAlgorithm::Hierarchical)
      c.ranksPerHost = 3;
    std::vector<uint32_t> roots{0};
    if (rooted && P > 1)
      roots = {0, P / 2, P - 1};
    for (uint32_t root : roots) {
      c.root = root;
      c.bytes = 1000;
      expectProven(c);
      if (HasFailure())
        return;
    }
    if (P > 40)
      continue;
    // Fewer bytes than ranks: some blocks are empty.
    c.root = roots.back();
    c.bytes = 3;
    expectProven(c);
    // A sub-communicator whose members are not 0..P-1 in order.
    c.bytes = 999;
    c.subCommunicator = true;
    expectProven(c);
    c.subCommunicator = false;
    // Channels, each on its own cpu, and pipelining chunks.
    c.channels = 3;
    c.chunk = 64;
    expectProven(c);
    // Reduction calcs between recv and use.
    c.channels = 1;
    c.chunk = 0;
    c.reduceNsPerByte = 0.5;
    expectProven(c);
    c.reduceNsPerByte = 0;
    if (gp.algo == CollAlgorithm::Ring && P <= 24) {
      // NCCL Simple's slices: 2 or 3 per step, some steps too small to split (up to 24
      // ranks: beyond, the sliced schedules outgrow the race check's limit).
      c.chunk = 96;
      for (uint32_t n : {2u, 3u}) {
        c.slices = n;
        c.sliceAlign = 8;
        c.sliceMin = 16;
        expectProven(c);
      }
      c.slices = 0;
      c.chunk = 0;
    }
    if (gp.algo == CollAlgorithm::Hierarchical) {
      c.ranksPerHost = 4;
      c.scatterHosts = true;
      expectProven(c);
    }
    if (HasFailure())
      return;
  }
}

std::string paramName(const ::testing::TestParamInfo<GridParam> &info) {
  return collectiveKindName(info.param.kind).str() + "_" +
         collAlgorithmName(info.param.algo).str();
}

INSTANTIATE_TEST_SUITE_P(Algorithms, SemanticGrid, ::testing::ValuesIn(allPairs()), paramName);

} // namespace
