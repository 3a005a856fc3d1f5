// unroll-loadstore: fixes the load-store model's parameters (cache line, unroll
// factor, wavefronts per workgroup), checks every wavefront's instruction stream and
// counts its instructions. The streams themselves stay lazy (ir/LoadStore.h): a
// consumer (-emit=loadstore, a GPU model) expands them as it goes.
#include "ir/Kernels.h"
#include "ir/LoadStore.h"
#include "ir/Module.h"
#include "passes/Pass.h"
#include "support/Diagnostics.h"
#include "support/Options.h"

#include <llvm/ADT/Twine.h>
#include <llvm/Support/MathExtras.h>

namespace infracc {
namespace {

namespace cl = llvm::cl;

cl::opt<unsigned> CacheLine("cache-line", cl::init(128), cl::value_desc("bytes"),
                            cl::desc("unroll-loadstore: bytes per Load/Store request, a power "
                                     "of two from 16 to 4096; default 128"),
                            cl::cat(opts::passCategory()));
cl::opt<unsigned> Wavefronts("wavefronts", cl::init(4), cl::value_desc("n"),
                             cl::desc("unroll-loadstore: wavefronts per workgroup (1..1024), for "
                                      "kernels that do not give their own; given explicitly, "
                                      "for every kernel; default 4"),
                             cl::cat(opts::passCategory()));
cl::opt<unsigned> Unroll("unroll", cl::init(1), cl::value_desc("n"),
                         cl::desc("unroll-loadstore: cache lines a wavefront loads before it "
                                  "waits (Figure 7's unroll factor, 1..256); default 1"),
                         cl::cat(opts::passCategory()));

class UnrollLoadStorePass : public Pass {
public:
  llvm::StringRef name() const override { return "unroll-loadstore"; }
  llvm::Error run(Module &m, PassContext &ctx) override {
    if (CacheLine < 16 || CacheLine > 4096 || !llvm::isPowerOf2_32(CacheLine))
      return usageError("-cache-line must be a power of two from 16 to 4096 bytes (got " +
                        llvm::Twine(unsigned(CacheLine)) + ")");
    if (Wavefronts < 1 || Wavefronts > 1024)
      return usageError("-wavefronts must be between 1 and 1024 (got " +
                        llvm::Twine(unsigned(Wavefronts)) + ")");
    if (Unroll < 1 || Unroll > 256)
      return usageError("-unroll must be between 1 and 256 (got " +
                        llvm::Twine(unsigned(Unroll)) + ")");
    if (!m.schedule || !m.schedule->kernels())
      return usageError("unroll-loadstore works on GPU kernels: give an MSCCL++ plan or a "
                        ".kernels file, or lower collectives with -passes=lower-collectives,"
                        "unroll-loadstore -coll-target=kernels");
    auto k = std::make_shared<KernelLevel>(*m.schedule->kernels());
    bool everyKernel = Wavefronts.getNumOccurrences() > 0;
    for (Kernel &K : k->kernels)
      if (everyKernel || K.wavefronts == 0)
        K.wavefronts = Wavefronts;
    k->loadStore = LoadStoreParams{CacheLine, Unroll};
    if (!check(*k, ctx, m.workloadSource))
      return reportedError();
    m.schedule->setKernels(std::move(k));
    return llvm::Error::success();
  }

private:
  /// Walks every wavefront's stream: each request fits a cache line and lies inside
  /// the buffer it names (all iterations of a counted loop), and counts instructions.
  bool check(const KernelLevel &k, PassContext &ctx, llvm::StringRef where) {
    KernelLookup lookup(k);
    InstructionCounts total;
    uint64_t wavefronts = 0;
    Segment seg;
    for (uint32_t kn = 0; kn < k.kernels.size(); ++kn) {
      const Kernel &K = k.kernels[kn];
      for (uint32_t wg = 0; wg < K.numWorkgroups; ++wg)
        for (uint32_t wf = 0; wf < K.wavefronts; ++wf) {
          ++wavefronts;
          WavefrontStream s(k, *k.loadStore, kn, wg, wf);
          while (s.next(seg)) {
            ++total.segments;
            for (size_t j = 0; j < seg.body.size(); ++j) {
              const Instruction &x = seg.body[j];
              total.byKind[unsigned(x.kind)] += seg.iterations;
              if (x.kind != InstrKind::Load && x.kind != InstrKind::Store)
                continue;
              uint32_t owner = x.flags & instr::Multicast ? k.groups[x.gpu].gpus.front() : x.gpu;
              uint64_t size = k.kernels[lookup.find(owner, K.instance)].buffer(x.buffer);
              uint64_t last = x.address + (seg.iterations - 1) * seg.stride[j] + x.bytes;
              if (x.bytes == 0 || x.bytes > k.loadStore->cacheLine || last > size) {
                uint32_t local = seg.op - k.workgroups[K.firstWorkgroup + wg].firstOp;
                ctx.diags.error(where, describeGpuOp(k, kn, wg, local) + ", wavefront " +
                                           llvm::Twine(wf) + ": a " + instrKindName(x.kind) +
                                           " of " + llvm::Twine(x.bytes) + " bytes reaches byte " +
                                           llvm::Twine(last) + " of a " + llvm::Twine(size) +
                                           "-byte buffer (an internal error of the unrolling)");
                return false;
              }
            }
          }
        }
    }
    auto add = [&](llvm::StringRef name, llvm::StringRef desc, uint64_t v) {
      ctx.stats.add("unroll-loadstore", name, desc, v);
    };
    add("wavefronts", "Wavefront instruction streams checked", wavefronts);
    add("segments", "Counted loops in the streams", total.segments);
    add("instructions", "Instructions, loops expanded", total.total());
    for (unsigned i = 0; i < 8; ++i)
      if (total.byKind[i]) {
        std::string n = instrKindName(InstrKind(i)).str();
        add(n, n + " instructions", total.byKind[i]);
      }
    return true;
  }
};

RegisterPass<UnrollLoadStorePass> X("unroll-loadstore",
                                    "GPU operations into per-wavefront cache-line instruction "
                                    "streams (-cache-line, -wavefronts, -unroll)");

} // namespace
} // namespace infracc
