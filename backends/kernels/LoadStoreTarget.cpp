// -emit=loadstore: the instruction streams of one workgroup's wavefronts, readable, in
// the style of ASTRA-sim 3.0's Figure 7 (a MemcpyOp unrolled: Loads, Waitcnt, Stores).
#include "backends/kernels/KernelsWriter.h"
#include "ir/LoadStore.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <fmt/format.h>

namespace infracc::kerneltext {
namespace {

namespace cl = llvm::cl;

cl::opt<std::string> WhichWorkgroup(
    "wg", cl::init("0:0:0"), cl::value_desc("gpu:kernel:workgroup"),
    cl::desc("-emit=loadstore: the workgroup to show, as GPU, kernel of that GPU (counting "
             "from 0 in launch order) and workgroup; default 0:0:0"),
    cl::cat(opts::backendCategory()));

std::string formatInstruction(const Instruction &x, uint32_t self) {
  auto ref = [&] {
    BufferRef r;
    r.gpu = x.gpu;
    r.buffer = x.buffer;
    r.multicast = x.flags & instr::Multicast;
    r.packet = x.flags & instr::Packet;
    r.offset = x.address;
    return formatRef(r, self);
  };
  std::string name = instrKindName(x.kind).str();
  switch (x.kind) {
  case InstrKind::Load:
  case InstrKind::Store:
    return fmt::format("{:<17}{:<24}{:>5} B{}", name, ref(), x.bytes,
                       x.flags & instr::Proxy ? "  proxy" : "");
  case InstrKind::SemaphoreAcquire:
  case InstrKind::SemaphoreRelease:
    return fmt::format("{:<17}s{}{}", name, x.arg,
                       x.gpu == self ? std::string() : fmt::format(" on gpu {}", x.gpu));
  case InstrKind::Reduce:
    return fmt::format("{:<17}{} B of {} inputs", name, x.bytes, x.arg);
  case InstrKind::Waitcnt: {
    auto lim = [](uint32_t v) { return v == instr::Unlimited ? std::string("any") : std::to_string(v); };
    return fmt::format("{:<17}loads<={} stores<={}", name, lim(x.arg), lim(x.arg2));
  }
  case InstrKind::Nop:
    return name;
  case InstrKind::Barrier:
    return fmt::format("{:<17}{} ({} workgroups)", name, x.arg, x.arg2);
  }
  return name;
}

llvm::Error emitLoadStore(TargetContext &ctx) {
  const Schedule &s = *ctx.module.schedule;
  const KernelLevel *k = s.kernels();
  if (!k)
    return usageError("-emit=loadstore needs a schedule with GPU kernels: an MSCCL++ plan, a "
                      ".kernels file, or collectives lowered with -coll-target=kernels");
  if (!k->loadStore)
    return usageError("-emit=loadstore shows unrolled streams; run unroll-loadstore (add it to "
                      "-passes)");
  llvm::SmallVector<llvm::StringRef, 3> parts;
  llvm::StringRef(WhichWorkgroup).split(parts, ':');
  uint32_t gpu = 0, kernel = 0, wg = 0;
  if (parts.size() != 3 || parts[0].getAsInteger(10, gpu) || parts[1].getAsInteger(10, kernel) ||
      parts[2].getAsInteger(10, wg))
    return usageError("-wg takes gpu:kernel:workgroup, e.g. -wg=0:0:1 (got '" + WhichWorkgroup +
                      "')");
  if (gpu >= k->numGpus)
    return usageError("-wg=" + WhichWorkgroup + ": there are " + llvm::Twine(k->numGpus) +
                      " GPUs (0.." + llvm::Twine(k->numGpus - 1) + ")");
  std::vector<uint32_t> kernels = k->kernelsOfGpu(gpu);
  if (kernel >= kernels.size())
    return usageError("-wg=" + WhichWorkgroup + ": gpu " + llvm::Twine(gpu) + " runs " +
                      llvm::Twine(kernels.size()) + " kernels");
  const Kernel &K = k->kernels[kernels[kernel]];
  if (wg >= K.numWorkgroups)
    return usageError("-wg=" + WhichWorkgroup + ": that kernel has " +
                      llvm::Twine(K.numWorkgroups) + " workgroups");
  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  const LoadStoreParams &p = *k->loadStore;
  *os << fmt::format("# gpu {}, kernel {}, workgroup {}: {} operations, {} wavefronts, {}-byte "
                     "cache lines, unroll {}\n",
                     gpu, kernel, wg, k->workgroups[K.firstWorkgroup + wg].numOps, K.wavefronts,
                     p.cacheLine, p.unroll);
  Segment seg;
  for (uint32_t wf = 0; wf < K.wavefronts; ++wf) {
    *os << fmt::format("\nwavefront {}\n", wf);
    WavefrontStream stream(*k, p, kernels[kernel], wg, wf);
    uint32_t lastOp = ~0u;
    uint64_t lastIter = ~0ull;
    while (stream.next(seg)) {
      if (seg.op != lastOp || seg.loopIteration != lastIter) {
        uint32_t local = seg.op - k->workgroups[K.firstWorkgroup + wg].firstOp;
        *os << fmt::format("  op {}: {}", local, formatOp(k->ops[seg.op], K.gpu));
        if (seg.loopIteration)
          *os << fmt::format("  (loop iteration {})", seg.loopIteration);
        *os << "\n";
        lastOp = seg.op;
        lastIter = seg.loopIteration;
      }
      bool loop = seg.iterations > 1;
      if (loop) {
        uint64_t step = 0;
        for (uint64_t st : seg.stride)
          step = std::max(step, st);
        *os << fmt::format("    {} x {{   # addresses advance by {} bytes each time\n",
                           seg.iterations, step);
      }
      for (const Instruction &x : seg.body)
        *os << (loop ? "      " : "    ") << formatInstruction(x, K.gpu) << "\n";
      if (loop)
        *os << "    }\n";
    }
    InstructionCounts c = countInstructions(WavefrontStream(*k, p, kernels[kernel], wg, wf));
    std::string parts;
    for (unsigned i = 0; i < 8; ++i)
      if (c.byKind[i])
        parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", c.byKind[i],
                             instrKindName(InstrKind(i)).str());
    *os << fmt::format("  = {} instructions{}{}\n", c.total(), parts.empty() ? "" : ": ", parts);
  }
  return llvm::Error::success();
}

RegisterTarget loadStoreTarget({
    .name = "loadstore",
    .description = "one workgroup's per-wavefront instruction streams (-wg=gpu:kernel:wg), "
                   "Figure 7 style",
    .needs = TargetNeeds::Workload,
    .defaultPipeline = [](const Module &) { return std::vector<std::string>{"unroll-loadstore"}; },
    .run = emitLoadStore,
});

} // namespace
} // namespace infracc::kerneltext
