// lower-collectives -coll-target=kernels: every algorithm, form, group size and
// workgroup count passes the kernel verifier and computes its collective when run by
// the symbolic executor.
#include "ir/Kernels.h"
#include "passes/KernelVerifier.h"
#include "passes/collectives/KernelLowering.h"
#include "support/Diagnostics.h"
#include "tests/collectives/CollTestUtil.h"
#include "tests/loadstore/KernelExec.h"

#include <gtest/gtest.h>

namespace infracc::test {
namespace {

std::string lowerAndRun(CollectiveKind kind, CollAlgorithm algo, coll::Transfer t, uint32_t P,
                        uint32_t W, uint64_t B) {
  CollCase c;
  c.kind = kind;
  c.algo = algo;
  c.members = P;
  c.bytes = B;
  Schedule s = makeCollectiveSchedule(c);
  std::string text;
  llvm::raw_string_ostream os(text);
  DiagEngine diags(os);
  coll::KernelLoweringOptions o;
  o.transfer = t;
  o.workgroups = W;
  std::optional<Schedule> k = coll::lowerToKernels(s, o, diags, "t");
  if (!k)
    return "lowering failed: " + text;
  if (!verifyKernels(*k, diags, "t"))
    return "verifier: " + text;
  return checkCollective(execute(*k->kernels()), collectiveKindName(kind).str(), B);
}

TEST(CollectiveKernels, EveryFormComputesItsCollective) {
  unsigned cases = 0;
  for (CollectiveKind kind : {CollectiveKind::Allreduce, CollectiveKind::Allgather,
                              CollectiveKind::Reducescatter, CollectiveKind::Alltoall})
    for (CollAlgorithm a : {CollAlgorithm::Ring, CollAlgorithm::Direct}) {
      if (kind == CollectiveKind::Alltoall && a == CollAlgorithm::Ring)
        continue;
      for (coll::Transfer t : {coll::Transfer::Put, coll::Transfer::Get})
        for (uint32_t P : {1u, 2u, 3u, 4u, 5u})
          for (uint32_t W : {1u, 2u, 3u}) {
            uint64_t B = 13;   // uneven splits over workgroups and (allreduce) members
            std::string why = lowerAndRun(kind, a, t, P, W, B);
            EXPECT_EQ(why, "") << collectiveKindName(kind).str() << " "
                               << collAlgorithmName(a).str()
                               << (t == coll::Transfer::Put ? " put" : " get") << " P=" << P
                               << " W=" << W;
            ++cases;
          }
    }
  EXPECT_EQ(cases, 210u);
}

} // namespace
} // namespace infracc::test
