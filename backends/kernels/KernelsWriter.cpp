// -emit=kernels: the kernel level as text, in the syntax the .kernels reader takes back.
#include "backends/kernels/KernelsWriter.h"

#include "formats/KernelsText.h"
#include "ir/Module.h"
#include "ir/TargetRegistry.h"
#include "support/Diagnostics.h"

#include <fmt/format.h>

namespace infracc::kerneltext {

std::string formatRef(const BufferRef &r, uint32_t self) {
  std::string s;
  if (r.multicast)
    s = fmt::format("{}{}.", kw::GroupPrefix.data(), r.gpu);
  else if (r.gpu != self)
    s = fmt::format("{}{}.", kw::GpuPrefix.data(), r.gpu);
  s += fmt::format("{}+{}", bufferKindName(r.buffer).data(), r.offset);
  if (r.packet)
    s += kw::PacketSuffix;
  return s;
}

std::string formatOp(const GpuOp &op, uint32_t self) {
  std::string s = gpuOpKindName(op.kind).str();
  switch (op.kind) {
  case GpuOpKind::Load:
    s += fmt::format(" {} {}", op.bytes, formatRef(op.src, self));
    break;
  case GpuOpKind::Store:
    s += fmt::format(" {} {}", op.bytes, formatRef(op.dst, self));
    break;
  case GpuOpKind::Memcpy:
    s += fmt::format(" {} {} {} {}", op.bytes, formatRef(op.src, self), kw::Arrow.data(),
                     formatRef(op.dst, self));
    break;
  case GpuOpKind::Reduce:
    s += fmt::format(" {} {} {}", op.bytes, kw::Inputs.data(), op.id);
    break;
  case GpuOpKind::SemAcquire:
  case GpuOpKind::SemRelease:
    s += fmt::format(" {}{}", kw::SemPrefix.data(), op.id);
    break;
  case GpuOpKind::Nop:
    break;
  case GpuOpKind::Barrier:
    s += fmt::format(" {} {} {}", op.id, kw::WorkgroupsWord.data(), op.count);
    break;
  case GpuOpKind::Flush:
    s += fmt::format(" {}{}", kw::GpuPrefix.data(), op.id);
    break;
  case GpuOpKind::Loop:
    s += fmt::format(" {} {} {} {} {}", op.count, kw::UnitWord.data(), op.bytes, kw::Ops.data(), op.id);
    break;
  }
  if (op.flags & gpuop::FusedWithNext)
    s += fmt::format(" {}", kw::Fused.data());
  if (op.flags & gpuop::Proxy)
    s += fmt::format(" {}", kw::Proxy.data());
  if (op.flags & gpuop::Relaxed)
    s += fmt::format(" {}", kw::Relaxed.data());
  return s;
}

void printKernels(const KernelLevel &k, llvm::raw_ostream &os) {
  os << "# infracc kernel level (docs/loadstore.md)\n";
  os << kw::Gpus << ' ' << k.numGpus << '\n';
  if (!k.name.empty())
    os << kw::Name << " \"" << k.name << "\"\n";
  if (!k.collective.empty())
    os << kw::Collective << " \"" << k.collective << "\"\n";
  if (k.inPlace)
    os << kw::InPlace << '\n';
  if (k.loadStore)
    os << kw::LoadStore << ' ' << kw::CacheLine << ' ' << k.loadStore->cacheLine << ' ' << kw::Unroll << ' '
       << k.loadStore->unroll << '\n';
  for (uint32_t i = 0; i < k.groups.size(); ++i) {
    const MulticastGroup &g = k.groups[i];
    os << kw::Multicast << ' ' << kw::GroupPrefix << i << ' ' << kw::Instance << ' ' << g.instance << ' '
       << bufferKindName(g.buffer) << ' ' << kw::Gpus;
    for (uint32_t m : g.gpus)
      os << ' ' << m;
    os << '\n';
  }
  for (uint32_t i = 0; i < k.semaphores.size(); ++i) {
    const infracc::Semaphore &s = k.semaphores[i];
    os << kw::Semaphore << ' ' << kw::SemPrefix << i << ' ' << kw::Gpu << ' ' << s.gpu << ' ' << kw::Instance
       << ' ' << s.instance << ' ' << semaphoreKindName(s.kind);
    if (s.kind != SemaphoreKind::Device)
      os << ' ' << kw::From << ' ' << s.peer;
    os << ' ' << kw::Index << ' ' << s.index << ' ' << kw::Init << ' ' << s.init << '\n';
  }
  for (uint32_t kn = 0; kn < k.kernels.size(); ++kn) {
    const infracc::Kernel &K = k.kernels[kn];
    os << '\n' << kw::Kernel << ' ' << kn << ' ' << kw::Gpu << ' ' << K.gpu << ' ' << kw::Instance << ' '
       << K.instance;
    if (K.wavefronts)
      os << ' ' << kw::Wavefronts << ' ' << K.wavefronts;
    for (unsigned b = 0; b < NumBufferKinds; ++b)
      os << ' ' << bufferKindName(BufferKind(b)) << ' ' << K.bufferBytes[b];
    if (K.scratchWrap)
      os << ' ' << kw::Wrap << ' ' << K.scratchWrap;
    os << '\n';
    for (uint32_t w = 0; w < K.numWorkgroups; ++w) {
      const infracc::Workgroup &wg = k.workgroups[K.firstWorkgroup + w];
      os << "  " << kw::Workgroup << ' ' << w << '\n';
      uint32_t loopEnd = 0;
      llvm::ArrayRef<GpuOp> ops = k.opsOf(wg);
      for (uint32_t i = 0; i < ops.size(); ++i) {
        if (i == loopEnd)
          loopEnd = 0;
        os << (loopEnd ? "      " : "    ") << formatOp(ops[i], K.gpu) << '\n';
        if (ops[i].kind == GpuOpKind::Loop)
          loopEnd = i + 1 + ops[i].id;
      }
    }
  }
}

namespace {

llvm::Error emitKernels(TargetContext &ctx) {
  const Schedule &s = *ctx.module.schedule;
  if (!s.kernels())
    return usageError("-emit=kernels needs a schedule with GPU kernels: an MSCCL++ plan, a "
                      ".kernels file, or collectives lowered with -passes=lower-collectives "
                      "-coll-target=kernels");
  auto os = ctx.output.stream();
  if (!os)
    return os.takeError();
  printKernels(*s.kernels(), *os);
  return llvm::Error::success();
}

RegisterTarget kernelsTarget({.name = "kernels",
                              .description = "the kernel level (GPU kernels, workgroups, GPU "
                                             "operations) as text, readable back as .kernels",
                              .needs = TargetNeeds::Workload,
                              .defaultPipeline = {},
                              .run = emitKernels});

} // namespace
} // namespace infracc::kerneltext
