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
  CollCase c;
  c.kind = CollectiveKind::Allgather;
  c.algo = CollAlgorithm::Direct;
  c.members = 3;
  c.bytes = 10;
  Schedule s = makeCollectiveSchedule(c);
  std::string text;
  llvm::raw_string_ostream os(text);
  DiagEngine diags(os);
  auto describe = [](const KernelLevel &k, uint32_t kernel) {
    std::string out;
    auto ref = [](const BufferRef &r) {
      return "g" + std::to_string(r.gpu) + "." + bufferKindName(r.buffer).str() + "+" +
             std::to_string(r.offset);
    };
    const Kernel &K = k.kernels[kernel];
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
  coll::KernelLoweringOptions o;
  o.workgroups = 4;
  o.transfer = coll::Transfer::Put;
  std::optional<Schedule> put = coll::lowerToKernels(s, o, diags, "t");
  ASSERT_TRUE(put) << text;
  EXPECT_EQ(describe(*put->kernels(), 0),
            "wg0: copy g0.input+0 g0.output+0 3; copy g0.input+0 g1.output+0 5; release g1 ch0; "
            "acquire g2 ch0;\n"
            "wg1: copy g0.input+3 g0.output+3 3; copy g0.input+0 g2.output+0 5; release g2 ch0; "
            "acquire g1 ch0;\n"
            "wg2: copy g0.input+6 g0.output+6 2; copy g0.input+5 g1.output+5 5; release g1 ch1; "
            "acquire g2 ch1;\n"
            "wg3: copy g0.input+8 g0.output+8 2; copy g0.input+5 g2.output+5 5; release g2 ch1; "
            "acquire g1 ch1;\n");
  o.transfer = coll::Transfer::Get;
  std::optional<Schedule> get = coll::lowerToKernels(s, o, diags, "t");
  ASSERT_TRUE(get) << text;
  EXPECT_EQ(describe(*get->kernels(), 0),
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
