#include "ir/Kernels.h"

#include <llvm/ADT/StringSwitch.h>

#include <algorithm>
#include <numeric>
#include <tuple>

namespace infracc {

llvm::StringRef bufferKindName(BufferKind b) {
  switch (b) {
  case BufferKind::Input: return "input";
  case BufferKind::Output: return "output";
  case BufferKind::Scratch: return "scratch";
  }
  return "?";
}

std::optional<BufferKind> parseBufferKind(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<BufferKind>>(name)
      .Case("input", BufferKind::Input)
      .Case("output", BufferKind::Output)
      .Case("scratch", BufferKind::Scratch)
      .Default(std::nullopt);
}

static constexpr GpuOpKind AllGpuOpKinds[] = {
    GpuOpKind::Load,       GpuOpKind::Store, GpuOpKind::Memcpy,  GpuOpKind::Reduce,
    GpuOpKind::SemAcquire, GpuOpKind::SemRelease, GpuOpKind::Nop, GpuOpKind::Barrier,
    GpuOpKind::Flush,      GpuOpKind::Loop};

llvm::StringRef gpuOpKindName(GpuOpKind k) {
  switch (k) {
  case GpuOpKind::Load: return "load";
  case GpuOpKind::Store: return "store";
  case GpuOpKind::Memcpy: return "memcpy";
  case GpuOpKind::Reduce: return "reduce";
  case GpuOpKind::SemAcquire: return "sem_acquire";
  case GpuOpKind::SemRelease: return "sem_release";
  case GpuOpKind::Nop: return "nop";
  case GpuOpKind::Barrier: return "barrier";
  case GpuOpKind::Flush: return "flush";
  case GpuOpKind::Loop: return "loop";
  }
  return "?";
}

std::optional<GpuOpKind> parseGpuOpKind(llvm::StringRef name) {
  for (GpuOpKind k : AllGpuOpKinds)
    if (gpuOpKindName(k) == name)
      return k;
  return std::nullopt;
}

llvm::StringRef semaphoreKindName(SemaphoreKind k) {
  switch (k) {
  case SemaphoreKind::Device: return "device";
  case SemaphoreKind::Channel: return "channel";
  case SemaphoreKind::Proxy: return "proxy";
  }
  return "?";
}

bool operator==(const GpuOp &a, const GpuOp &b) {
  return a.kind == b.kind && a.flags == b.flags && a.id == b.id && a.count == b.count &&
         a.bytes == b.bytes && a.src == b.src && a.dst == b.dst;
}

bool operator==(const KernelLevel &a, const KernelLevel &b) {
  return a.numGpus == b.numGpus && a.kernels == b.kernels && a.workgroups == b.workgroups &&
         a.ops == b.ops && a.semaphores == b.semaphores && a.groups == b.groups &&
         a.name == b.name && a.collective == b.collective && a.inPlace == b.inPlace &&
         a.loadStore == b.loadStore;
}

KernelLookup::KernelLookup(const KernelLevel &k) {
  for (uint32_t i = 0; i < k.kernels.size(); ++i)
    index_.try_emplace((uint64_t(k.kernels[i].instance) << 32) | k.kernels[i].gpu, i);
}

std::vector<uint32_t> KernelLevel::kernelsOfGpu(uint32_t gpu) const {
  std::vector<uint32_t> out;
  for (uint32_t k = 0; k < kernels.size(); ++k)
    if (kernels[k].gpu == gpu)
      out.push_back(k);
  return out;
}

void KernelLevel::canonicalize() {
  auto semKey = [](const Semaphore &s) {
    return std::make_tuple(s.instance, s.gpu, s.kind, s.peer, s.index, s.init);
  };
  std::vector<uint32_t> order(semaphores.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return semKey(semaphores[x]) < semKey(semaphores[y]);
  });
  std::vector<uint32_t> newSem(semaphores.size());
  std::vector<Semaphore> sems;
  for (uint32_t i = 0; i < order.size(); ++i) {
    newSem[order[i]] = i;
    sems.push_back(semaphores[order[i]]);
  }
  semaphores = std::move(sems);

  order.assign(groups.size(), 0);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    const MulticastGroup &a = groups[x], &b = groups[y];
    return std::tie(a.instance, a.buffer, a.gpus) < std::tie(b.instance, b.buffer, b.gpus);
  });
  std::vector<uint32_t> newGroup(groups.size());
  std::vector<MulticastGroup> gs;
  for (uint32_t i = 0; i < order.size(); ++i) {
    newGroup[order[i]] = i;
    gs.push_back(std::move(groups[order[i]]));
  }
  groups = std::move(gs);

  for (GpuOp &op : ops) {
    if (op.kind == GpuOpKind::SemAcquire || op.kind == GpuOpKind::SemRelease)
      op.id = op.id < newSem.size() ? newSem[op.id] : op.id;
    for (BufferRef *r : {&op.src, &op.dst})
      if (r->multicast && r->gpu < newGroup.size())
        r->gpu = newGroup[r->gpu];
  }
}

std::string describeGpuOp(const KernelLevel &k, uint32_t kernel, uint32_t workgroup,
                          uint32_t op) {
  const Kernel &kn = k.kernels[kernel];
  uint32_t local = 0;
  for (uint32_t i = 0; i < kernel; ++i)
    local += k.kernels[i].gpu == kn.gpu;
  const GpuOp &o = k.ops[k.workgroups[kn.firstWorkgroup + workgroup].firstOp + op];
  return "gpu " + std::to_string(kn.gpu) + " kernel " + std::to_string(local) + " workgroup " +
         std::to_string(workgroup) + " op " + std::to_string(op) + " (" +
         gpuOpKindName(o.kind).str() + ")";
}

} // namespace infracc
