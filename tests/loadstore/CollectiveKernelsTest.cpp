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

/// The kernels of one collective over P members with W workgroups each, verified; on
/// failure nothing, and `why` says what failed.
std::optional<Schedule> lower(CollectiveKind kind, CollAlgorithm algo, coll::Transfer t,
                              uint32_t P, uint32_t W, uint64_t B, std::string &why) {
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
    why = "lowering failed: " + text;
  else if (!verifyKernels(*k, diags, "t"))
    why = "verifier: " + text;
  else
    return k;
  return std::nullopt;
}

std::string lowerAndRun(CollectiveKind kind, CollAlgorithm algo, coll::Transfer t, uint32_t P,
                        uint32_t W, uint64_t B) {
  std::string why;
  std::optional<Schedule> k = lower(kind, algo, t, P, W, B, why);
  if (!k)
    return why;
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
          for (uint32_t W : {1u, 2u, 3u, 4u, 7u}) {
            uint64_t B = 13;   // uneven splits over workgroups and (allreduce) members
            std::string why = lowerAndRun(kind, a, t, P, W, B);
            EXPECT_EQ(why, "") << collectiveKindName(kind).str() << " "
                               << collAlgorithmName(a).str()
                               << (t == coll::Transfer::Put ? " put" : " get") << " P=" << P
                               << " W=" << W;
            ++cases;
          }
    }
  EXPECT_EQ(cases, 350u);
}

// The direct all-gather deals workgroups to peers as MSCCL++'s kernels deal thread
// blocks: with 3 members and 4 workgroups, workgroup w serves the peer at distance
// w % 2 + 1 with half w / 2 of the 10-byte block, read from the input (the copy into
// the member's own output is every workgroup's quarter), and synchronises with that
// peer only, on the channel of its half.
TEST(CollectiveKernels, DirectAllgatherDealsWorkgroupsToPeers) {
  // Member 0's kernel, a line per workgroup.
  auto member0 = [](coll::Transfer t) {
    std::string why;
    std::optional<Schedule> s =
        lower(CollectiveKind::Allgather, CollAlgorithm::Direct, t, 3, 4, 10, why);
    if (!s)
      return why;
    const KernelLevel &k = *s->kernels();
    auto ref = [](const BufferRef &r) {
      return "g" + std::to_string(r.gpu) + "." + bufferKindName(r.buffer).str() + "+" +
             std::to_string(r.offset);
    };
    std::string out;
    const Kernel &K = k.kernels[0];
    for (uint32_t w = 0; w < K.numWorkgroups; ++w) {
      const Workgroup &W = k.workgroups[K.firstWorkgroup + w];
      out += "wg" + std::to_string(w) + ":";
      for (uint32_t i = 0; i < W.numOps; ++i) {
        const GpuOp &o = k.ops[W.firstOp + i];
        // A release names the GPU it signals, an acquire the GPU it waits for.
        auto sem = [&](bool release) {
          const Semaphore &m = k.semaphores.at(o.id);
          return " g" + std::to_string(release ? m.gpu : m.peer) + " ch" +
                 std::to_string(m.index) + ";";
        };
        if (o.kind == GpuOpKind::Memcpy)
          out += " copy " + ref(o.src) + " " + ref(o.dst) + " " + std::to_string(o.bytes) + ";";
        else if (o.kind == GpuOpKind::SemRelease)
          out += " release" + sem(true);
        else if (o.kind == GpuOpKind::SemAcquire)
          out += " acquire" + sem(false);
        else
          out += " " + gpuOpKindName(o.kind).str() + ";";
      }
      out += "\n";
    }
    return out;
  };
  EXPECT_EQ(member0(coll::Transfer::Put),
            "wg0: copy g0.input+0 g0.output+0 3; copy g0.input+0 g1.output+0 5; release g1 ch0; "
            "acquire g2 ch0;\n"
            "wg1: copy g0.input+3 g0.output+3 3; copy g0.input+0 g2.output+0 5; release g2 ch0; "
            "acquire g1 ch0;\n"
            "wg2: copy g0.input+6 g0.output+6 2; copy g0.input+5 g1.output+5 5; release g1 ch1; "
            "acquire g2 ch1;\n"
            "wg3: copy g0.input+8 g0.output+8 2; copy g0.input+5 g2.output+5 5; release g2 ch1; "
            "acquire g1 ch1;\n");
  EXPECT_EQ(member0(coll::Transfer::Get),
            "wg0: copy g0.input+0 g0.output+0 3; release g2 ch0; acquire g1 ch0; "
            "copy g1.input+0 g0.output+10 5;\n"
            "wg1: copy g0.input+3 g0.output+3 3; release g1 ch0; acquire g2 ch0; "
            "copy g2.input+0 g0.output+20 5;\n"
            "wg2: copy g0.input+6 g0.output+6 2; release g2 ch1; acquire g1 ch1; "
            "copy g1.input+5 g0.output+15 5;\n"
            "wg3: copy g0.input+8 g0.output+8 2; release g1 ch1; acquire g2 ch1; "
            "copy g2.input+5 g0.output+25 5;\n");
}

} // namespace
} // namespace infracc::test
